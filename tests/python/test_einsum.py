"""kiln.tensor.einsum against numpy.einsum (computed in the test): explicit and implicit outputs,
ellipses that broadcast, diagonals of repeated indices, contractions of several operands with
and without static shapes (numpy's optimal order, or right to left), gradients by finite
differences, and numpy's errors."""
import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.gradient import verify_grad
from kiln.tensor.einsum import einsum

rng = np.random.default_rng(3737)

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij->", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(2, 1, 2, 3), (4, 3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("iij->ij", [(3, 3, 2)]),
    ("iji->j", [(3, 2, 3)]),
    ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)]),
    ("i,i,i->", [(3,), (3,), (3,)]),
    (",i->i", [(), (3,)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,ji->", [(3, 3), (3, 3)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ijkl,jl->ik", [(2, 3, 4, 5), (3, 5)]),
    ("ea,fb,abcd,gc,hd->efgh", [(2, 3), (2, 3), (3, 3, 3, 3), (2, 3), (2, 3)]),
    ("i,ij,jk,k->", [(3,), (3, 4), (4, 5), (5,)]),
    ("ab,ab,c->", [(2, 3), (2, 3), (4,)]),
    ("ijk,jil->kl", [(3, 4, 5), (4, 3, 2)]),
]


def _symbols(shapes, static):
    return [kt.tensor(dtype="float64",
                      shape=s if static else tuple(1 if d == 1 else None for d in s))
            for s in shapes]


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("subscripts,shapes", CASES)
def test_values_match_numpy(server, subscripts, shapes, static):
    values = [rng.standard_normal(s) for s in shapes]
    xs = _symbols(shapes, static)
    y = einsum(subscripts, *xs)
    want = np.einsum(subscripts, *values)
    assert y.ndim == want.ndim
    got = kiln.function(xs, y)(*values)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # Static dims, where known, are the result's (a diagonal's length is not inferred).
    assert all(d is None or d == w for d, w in zip(y.type.shape, want.shape))


@pytest.mark.parametrize("subscripts,shapes", [c for c in CASES if c[1] and all(c[1])][:12])
def test_gradients(server, subscripts, shapes):
    values = [rng.standard_normal(s) for s in shapes]
    verify_grad(lambda *xs: einsum(subscripts, *xs), values, rng=np.random.default_rng(1))


def test_lowered_to_products_and_the_optimal_order():
    # Static shapes: numpy's optimal path contracts (b, c) first here ((0, 1) is 2x1000x... cost).
    a, b, c = (kt.tensor(dtype="float64", shape=s) for s in [(100, 2), (2, 100), (100, 3)])
    y = einsum("ij,jk,kl->il", a, b, c)
    ops = {type(n.op).__name__ for n in kiln.graph.io_toposort([y])}
    assert "MatMul" in ops
    assert y.type.shape == (100, 3)
    # No einsum op: the graph is made of the existing products, transposes and reductions.
    assert all("Einsum" not in str(n.op) for n in kiln.graph.io_toposort([y]))
    path = np.einsum_path("ij,jk,kl->il", np.empty((100, 2)), np.empty((2, 100)),
                          np.empty((100, 3)), optimize="optimal")[0]
    assert path == ["einsum_path", (1, 2), (0, 1)]
    # The first matmul of the lowered graph multiplies b and c (2x100 by 100x3).
    first = [n for n in kiln.graph.io_toposort([y]) if type(n.op).__name__ == "MatMul"][0]
    assert [i.type.shape for i in first.inputs] == [(2, 100), (100, 3)]


@pytest.mark.parametrize("subscripts,shapes,message", [
    ("ij->ik", [(2, 3)], "output subscript 'k' which never appeared"),
    ("i->ii", [(3,)], "output subscript 'i' multiple times"),
    ("i->", [(2, 3)], "operand has more dimensions than subscripts"),
    ("...i->i", [(2, 3)], "output has more dimensions than subscripts"),
    ("i1->i", [(2, 3)], "invalid subscript '1'"),
])
def test_errors_are_numpys(subscripts, shapes, message):
    with pytest.raises(ValueError, match=message):
        einsum(subscripts, *_symbols(shapes, False))
    with pytest.raises(ValueError, match=message):
        np.einsum(subscripts, *[np.ones(s) for s in shapes])


def test_operand_count_must_match():
    with pytest.raises(ValueError, match="fewer operands provided"):
        einsum("ij,jk->ik", kt.dmatrix())
    with pytest.raises(ValueError, match="more operands provided"):
        einsum("ij->i", kt.dmatrix(), kt.dmatrix())


def test_optimize_is_refused_as_pytensor():
    with pytest.raises(NotImplementedError, match="Optimize kwarg"):
        einsum("ij->", kt.dmatrix(), optimize="greedy")
