"""NumPy's array functions as Aesara 2.9.4 has them (kiln.tensor, .extra_ops, .basic, .sort),
against NumPy on random and edge cases (empty arrays, ties, NaN), with the dtypes, static
shapes and op names Aesara 2.9.4 gives (noted from it; no Aesara at run time), and gradients by
finite differences where they are defined."""
import importlib

import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.gradient import verify_grad
from kiln.tensor import basic, extra_ops

sort = importlib.import_module("kiln.tensor.sort")  # (kt.sort is the function)

RNG = np.random.default_rng(36)


def const(a):
    return kt.as_tensor(np.asarray(a))


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def fn(inputs, outputs):
    return kiln.function(inputs, outputs)


# ---- where Aesara has them -------------------------------------------------------------------

def test_paths_match_aesara():
    for name in ["searchsorted", "bincount", "unique", "unravel_index", "ravel_multi_index",
                 "fill_diagonal_offset", "broadcast_to", "broadcast_arrays", "broadcast_shape",
                 "linspace", "logspace", "geomspace", "diff", "compress"]:
        assert getattr(extra_ops, name) is getattr(kt, name), name
    for name in ["diagonal", "tile", "take_along_axis", "choose", "atleast_1d", "atleast_2d",
                 "atleast_3d", "tri", "tril", "triu", "diag", "roll", "nonzero", "flatnonzero",
                 "nonzero_values", "moveaxis", "swapaxes"]:
        assert getattr(basic, name) is getattr(kt, name), name
    for name in ["topk", "argtopk", "topk_and_argtopk"]:
        assert getattr(sort, name) is getattr(kt, name), name
    for name in ["SearchsortedOp", "Unique", "UnravelIndex", "RavelMultiIndex",
                 "FillDiagonalOffset", "BroadcastTo"]:
        assert getattr(extra_ops, name).__name__ == name
    assert sort.TopKOp.__name__ == "TopKOp" and basic.ExtractDiag.__name__ == "ExtractDiag"


# ---- searchsorted ----------------------------------------------------------------------------

@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(server, side):
    x, v, s = kt.dvector("x"), kt.dmatrix("v"), kt.lvector("s")
    out = kt.searchsorted(x, v, side=side)
    assert str(out.owner.op) == "SearchsortedOp{side='%s'}" % side
    assert out.type == kt.TensorType("int64", (None, None))
    f = fn([x, v], out)
    g = fn([x, v, s], kt.searchsorted(x, v, side=side, sorter=s))
    for n in [0, 1, 7, 30]:
        xv = np.sort(RNG.integers(0, 5, n).astype(float))  # ties
        if n > 3:
            xv[-1] = np.nan
        vv = np.concatenate([RNG.integers(-1, 6, 6).astype(float), [np.nan, 2.5]]).reshape(2, 4)
        same(f(xv, vv), np.searchsorted(xv, vv, side=side))
        shuffled = RNG.permutation(xv)
        sorter = np.argsort(shuffled, kind="stable")
        same(g(shuffled, vv, sorter), np.searchsorted(shuffled, vv, side=side, sorter=sorter))
    assert extra_ops.searchsorted([1, 2, 3, 4, 5], 3, side="right").eval() == 3
    with pytest.raises(ValueError, match="'middle' is an invalid value for keyword 'side'"):
        kt.searchsorted(x, v, side="middle")


def test_searchsorted_gradient_is_zero(server):
    x, v = kt.dvector("x"), kt.dvector("v")
    cost = (kt.cast(kt.searchsorted(x, v), "float64") * v).sum()
    gx, gv = kiln.grad(cost, [x, v])
    xv, vv = np.array([1.0, 2.0, 3.0]), np.array([2.5, 0.0])
    same(kiln.function([x, v], gx, on_unused_input="ignore")(xv, vv), np.zeros(3))
    same(fn([x, v], gv)(xv, vv), np.searchsorted(xv, vv).astype(float))


# ---- unique ----------------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [(False, False, False), (True, True, True), (True, False, True),
                                   (False, True, False)])
def test_unique(server, flags):
    cases = [RNG.integers(0, 4, (5, 3)).astype("int32"), RNG.integers(0, 3, (4, 3, 2)) / 2,
             np.array([2.0, np.nan, 1.0, np.nan, 2.0]), np.zeros(0), np.array(3.5),
             np.array([True, False, True])]
    for a in cases:
        for axis in [None] + list(range(-a.ndim, a.ndim)):
            if axis is not None and (a.size == 0 or np.isnan(a.astype(float)).any()):
                continue
            x = kt.tensor(a.dtype.name, (None,) * a.ndim, name="x")
            out = kt.unique(x, *flags, axis=axis)
            outs = out if isinstance(out, list) else [out]
            assert len(outs) == 1 + sum(flags)
            want = np.unique(a, *flags, axis=axis)
            want = list(want) if any(flags) else [want]
            if flags[1] and axis is None:
                want[1 + flags[0]] = want[1 + flags[0]].reshape(-1)
            got = fn([x], outs)(a)
            for g, w in zip(got, want):
                same(g, w.astype("int64") if g is not got[0] else w)
    name = str(kt.unique(kt.dmatrix(), True, False, True, 0)[0].owner.op)
    assert name == ("Unique{return_index=True, return_inverse=False, return_counts=True, "
                    "axis=0}")


def test_unique_types_and_shapes(server):
    x = kt.tensor("float32", (1, None, 1))
    vals, idx = kt.unique(x, return_counts=True, axis=1)
    assert vals.type == kt.TensorType("float32", (1, None, 1))
    assert idx.type == kt.TensorType("int64", (None,))
    assert kt.unique(kt.dmatrix()).type == kt.TensorType("float64", (None,))
    with pytest.raises(Exception, match="Unique axis 2 is outside of input ndim = 2"):
        kt.unique(kt.dmatrix(), axis=2)
    m = kt.dmatrix("m")
    u, inv = kt.unique(m, return_inverse=True)
    f = fn([m], [u.shape[0], inv.shape[0]])
    assert [int(v) for v in f(np.array([[1.0, 2.0, 2.0], [1.0, 5.0, 7.0]]))] == [4, 6]


# ---- unravel_index, ravel_multi_index --------------------------------------------------------

@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_and_ravel(server, order):
    dims = (3, 4, 5)
    i = kt.lmatrix("i")
    coords = kt.unravel_index(i, dims, order=order)
    assert isinstance(coords, tuple) and len(coords) == 3
    assert str(coords[0].owner.op) == "UnravelIndex{order='%s'}" % order
    flat = RNG.integers(0, 60, (2, 6))
    for got, want in zip(fn([i], list(coords))(flat), np.unravel_index(flat, dims, order=order)):
        same(got, want.astype("int64"))
    a, b, c = kt.lvector("a"), kt.lvector("b"), kt.lvector("c")
    for mode in ["raise", "wrap", "clip"]:
        out = kt.ravel_multi_index((a, b, c), dims, mode=mode, order=order)
        assert str(out.owner.op) == "RavelMultiIndex{mode='%s', order='%s'}" % (mode, order)
        lo, hi = (0, 0) if mode == "raise" else (-7, 7)
        idx = [RNG.integers(lo, d + hi, 8) for d in dims]
        same(fn([a, b, c], out)(*idx),
             np.ravel_multi_index(idx, dims, mode=mode, order=order).astype("int64"))
    with pytest.raises(Exception, match="out of bounds for array with size 60"):
        fn([i], list(coords))(np.array([[60]]))
    with pytest.raises(Exception, match="invalid entry in coordinates array"):
        fn([a, b, c], kt.ravel_multi_index((a, b, c), dims))([3], [0], [0])
    with pytest.raises(TypeError, match="multi_index must be a tuple or a list."):
        kt.ravel_multi_index(a, dims)


# ---- bincount --------------------------------------------------------------------------------

def test_bincount(server):
    x, w = kt.lvector("x"), kt.dvector("w")
    for n in [1, 5, 40]:
        xv = RNG.integers(0, 7, n)
        wv = RNG.standard_normal(n)
        same(fn([x], kt.bincount(x))(xv), np.bincount(xv))
        same(fn([x, w], kt.bincount(x, w, minlength=10))(xv, wv),
             np.bincount(xv, wv, minlength=10))
    # Aesara's dtypes: x's (an int8 x counts in int8), or the weights'.
    same(kt.bincount(const(np.array([0, 1, 1, 3], "int8"))).eval(),
         np.array([1, 2, 0, 1], "int8"))
    with pytest.raises(TypeError, match="Inputs must be of dimension 1."):
        kt.bincount(kt.lmatrix())


def test_bincount_hostile_sizes_are_refused(server):
    x = kt.lvector("x")
    # Past the tensor limit: refused by the check before any allocation.
    with pytest.raises(Exception, match="needs more than"):
        fn([x], kt.bincount(x, minlength=2 ** 60))(np.array([0, 1]))
    with pytest.raises(Exception, match="needs more than"):
        fn([x], kt.bincount(x))(np.array([0, 2 ** 61]))
    # Under it but past what the server may hold: a clean error, not a crash.
    with pytest.raises(Exception):
        fn([x], kt.bincount(x, minlength=2 ** 40))(np.array([0, 1]))
    same(fn([x], kt.bincount(x))(np.array([0, 2])), np.array([1, 0, 1]))  # still serving


# ---- linspace, logspace, geomspace -----------------------------------------------------------

def test_spaces(server):
    a, b = kt.dscalars("a", "b")
    for start, end, steps in [(0.0, 1.0, 5), (0, 10, 5), (-3.5, 2.0, 8), (2.0, -1.0, 2)]:
        out = kt.linspace(start, end, steps)
        assert out.dtype == "float64"
        # Literal ends are float32 constants (Aesara's autocast): the step is a float32.
        np.testing.assert_allclose(out.eval(), np.linspace(start, end, steps), rtol=1e-6)
        np.testing.assert_allclose(fn([a, b], kt.linspace(a, b, steps))(start, end),
                                   np.linspace(start, end, steps), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(
        kt.linspace(np.array([0.0, 1.0]), np.array([1.0, 3.0]), 3).eval(),
        np.linspace([0.0, 1.0], [1.0, 3.0], 3))
    np.testing.assert_allclose(kt.logspace(0.0, 2.0, 3).eval(), [1.0, 10.0, 100.0])
    np.testing.assert_allclose(kt.logspace(0.0, 3.0, 4, base=2.0).eval(), [1.0, 2.0, 4.0, 8.0])
    np.testing.assert_allclose(kt.geomspace(1.0, 100.0, 3).eval(), np.geomspace(1, 100, 3))
    np.testing.assert_allclose(kt.geomspace(1.0, 8.0, 4, base=2.0).eval(), [1, 2, 4, 8])
    verify_grad(lambda a, b: kt.linspace(a, b, 6), [np.array(0.3), np.array(2.0)])


# ---- broadcast_to, broadcast_arrays, broadcast_shape -----------------------------------------

def test_broadcast_to(server):
    x = kt.dvector("x")
    out = kt.broadcast_to(x, (3, 4))
    assert str(out.owner.op) == "BroadcastTo" and out.type == kt.TensorType("float64", (3, 4))
    same(fn([x], out)(np.arange(4.0)), np.broadcast_to(np.arange(4.0), (3, 4)))
    same(kt.broadcast_to(const([1.0, 2.0]), const(np.array([3, 2]))).eval(),
         np.broadcast_to([1.0, 2.0], (3, 2)))
    n = kt.lscalar("n")
    y = kt.broadcast_to(x, (n, 2))
    assert y.type == kt.TensorType("float64", (None, 2))
    same(fn([x, n], y)(np.array([1.0, 2.0]), 0), np.zeros((0, 2)))
    s = kt.dscalar()
    assert kt.broadcast_to(s, ()) is s
    with pytest.raises(Exception, match="could not be broadcast"):
        fn([x], kt.broadcast_to(x, (2, 3)))(np.ones(2))
    verify_grad(lambda v: kt.broadcast_to(v, (2, 3, 4)), [RNG.standard_normal(4)])
    verify_grad(lambda v: kt.broadcast_to(kt.specify_shape(v, (1, 4)), (3, 4)),
                [RNG.standard_normal((1, 4))])


def test_broadcast_arrays_and_shape(server):
    a, b = const(np.array([1.0, 2.0])), const(np.array([[1.0], [2.0], [3.0]]))
    ra, rb = kt.broadcast_arrays(a, b)
    na, nb = np.broadcast_arrays(np.array([1.0, 2.0]), np.array([[1.0], [2.0], [3.0]]))
    same(ra.eval(), na)
    same(rb.eval(), nb)
    shape = kt.broadcast_shape(const(np.zeros((2, 1))), const(np.zeros(3)))
    assert [int(s.eval()) for s in shape] == [2, 3]
    m, v = kt.dmatrix("m"), kt.dvector("v")
    dims = kt.broadcast_shape(m, v)
    f = fn([m, v], list(dims))
    assert [int(d) for d in f(np.zeros((4, 3)), np.zeros(3))] == [4, 3]


# ---- diagonal, diag, fill_diagonal_offset, tri, tril, triu -----------------------------------

def test_diagonal_and_diag(server):
    t = RNG.standard_normal((2, 3, 4))
    x = kt.dtensor3("t")
    for offset, a1, a2 in [(0, 0, 1), (1, 1, 2), (-1, 0, 2), (2, 2, 0), (-5, 0, 1)]:
        out = kt.diagonal(x, offset, a1, a2)
        assert str(out.owner.op) == "ExtractDiag{offset=%d, axis1=%d, axis2=%d, view=False}" % (
            offset, a1, a2)
        same(fn([x], out)(t), np.diagonal(t, offset, a1, a2))
    m, v = kt.dmatrix("m"), kt.dvector("v")
    for k in [0, 2, -1, 6]:
        same(fn([m], kt.diag(m, k))(t[0]), np.diag(t[0], k))
        same(fn([v], kt.diag(v, k))(t[0, 0]), np.diag(t[0, 0], k))
        verify_grad(lambda a, k=k: kt.diag(a, k), [t[1]])
        verify_grad(lambda a, k=k: kt.diag(a, k), [t[1, 1]])
    assert str(kt.diag(v).owner.op) == "AllocDiag{offset=0, axis1=0, axis2=1}"
    same(kt.diag(const(np.arange(24.0).reshape(2, 3, 4)), 1).eval(),
         np.diagonal(np.arange(24.0).reshape(2, 3, 4), 1))
    with pytest.raises(ValueError, match="Number of dimensions of `v` must be greater than one."):
        kt.diag(kt.dscalar())


def test_fill_diagonal_offset(server):
    m, val, k = kt.dmatrix("m"), kt.dscalar("val"), kt.lscalar("k")
    out = kt.fill_diagonal_offset(m, val, k)
    assert str(out.owner.op) == "FillDiagonalOffset" and out.type == m.type
    f = fn([m, val, k], out)
    for shape in [(3, 3), (5, 3), (2, 6), (0, 4)]:
        a = RNG.standard_normal(shape)
        for off in range(-6, 7):
            want = a.copy()
            h, w = shape
            rows = np.arange(h)
            keep = (rows + off >= 0) & (rows + off < w) & (rows < min(h, w) + max(0, -off))
            want[rows[keep], rows[keep] + off] = -2.5
            same(f(a, -2.5, off), want)
    for off in [0, 1, -2]:
        verify_grad(lambda a, b, off=off: kt.fill_diagonal_offset(a, b, off),
                    [RNG.standard_normal((4, 3)), np.array(0.7)])
    same(kt.fill_diagonal_offset(const(np.zeros((2, 3))), 1, 1).eval(),
         np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))


def test_tri_tril_triu(server):
    out = kt.tri(3, 4, 1)
    assert str(out.owner.op) == "Tri{dtype='float64'}"
    same(out.eval(), np.tri(3, 4, 1))
    same(kt.tri(3, dtype="int32").eval(), np.tri(3, dtype="int32"))
    a = np.arange(12.0).reshape(3, 4)
    m = kt.dmatrix("m")
    for k in [-4, -1, 0, 2, 5]:
        same(fn([m], kt.tril(m, k))(a), np.tril(a, k))
        same(fn([m], kt.triu(m, k))(a), np.triu(a, k))
    t3 = np.arange(24).reshape(2, 3, 4)
    same(kt.tril(const(t3)).eval(), np.tril(t3))
    same(kt.triu(const(t3), 1).eval(), np.triu(t3, 1))
    for n, k, mm in [(3, 0, None), (4, -1, 2), (2, 3, 5)]:
        for got, want in zip(kt.tril_indices(n, k, mm), np.tril_indices(n, k, mm)):
            same(got.eval(), want.astype("int64"))
        for got, want in zip(kt.triu_indices(n, k, mm), np.triu_indices(n, k, mm)):
            same(got.eval(), want.astype("int64"))
    for got, want in zip(kt.tril_indices_from(m, 1), np.tril_indices_from(a, 1)):
        same(fn([m], got)(a), want.astype("int64"))
    for got, want in zip(kt.triu_indices_from(m, -1), np.triu_indices_from(a, -1)):
        same(fn([m], got)(a), want.astype("int64"))
    verify_grad(lambda x: kt.tril(x, -1), [RNG.standard_normal((3, 4))])
    verify_grad(lambda x: kt.triu(x, 1), [RNG.standard_normal((3, 4))])


# ---- tile, atleast_*, take_along_axis, choose ------------------------------------------------

def test_tile(server):
    for shape, reps, ndim in [((2,), (2, 3), None), ((2, 2), (2,), None), ((2, 2), (2, 1), 3),
                              ((3,), 3, None), ((2, 3), (1, 2, 2), None), ((0, 2), (2, 2), None)]:
        a = np.arange(int(np.prod(shape)), dtype=float).reshape(shape)
        want = np.tile(a, reps)
        if ndim is not None and want.ndim < ndim:
            want = want.reshape((1,) * (ndim - want.ndim) + want.shape)
        same(kt.tile(const(a), reps, ndim=ndim).eval(), want)
    same(kt.tile(const(np.array([1.0, 2.0])), const(np.array([2, 3])), ndim=2).eval(),
         np.tile([1.0, 2.0], (2, 3)))
    r = kt.lvector("r")
    x = kt.dvector("x")
    same(fn([x, r], kt.tile(x, r, ndim=2))(np.array([1.0, 2.0]), np.array([3])),
         np.tile([1.0, 2.0], 3).reshape(1, 6))
    assert kt.tile(const(np.array([1, 2])), (2, 3)).type == kt.TensorType("int64", (2, 6))
    with pytest.raises(ValueError, match="if reps is tensor.vector, you should specify the ndim"):
        kt.tile(x, r)
    verify_grad(lambda v: kt.tile(v, (2, 3)), [RNG.standard_normal((2, 2))])


def test_atleast(server):
    for a in [np.array(3.0), np.array([1.0, 2.0]), np.ones((2, 3)), np.ones((2, 3, 4, 1))]:
        for f, g in [(kt.atleast_1d, np.atleast_1d), (kt.atleast_2d, np.atleast_2d)]:
            same(f(const(a)).eval(), g(a))
        # Aesara pads on the left; numpy.atleast_3d puts a vector or matrix in the middle.
        want = a.reshape((1,) * (3 - a.ndim) + a.shape) if a.ndim < 3 else a
        same(kt.atleast_3d(const(a)).eval(), want)
    assert kt.atleast_3d(const(np.array([1.0, 2.0]))).type == kt.TensorType("float64", (1, 1, 2))
    a, b = kt.atleast_2d(kt.dscalar(), kt.dvector())
    assert a.type.shape == (1, 1) and b.type.shape == (1, None)
    assert basic.atleast_Nd(kt.dvector(), n=3, left=False).type.shape == (None, 1, 1)


def test_take_along_axis(server):
    a = RNG.standard_normal((3, 4, 5))
    x = kt.dtensor3("x")
    for axis in [0, 1, -1]:
        idx = np.argsort(a, axis=axis)[..., :3] if axis == -1 else np.argsort(a, axis=axis)
        i = kt.ltensor3("i")
        same(fn([x, i], kt.take_along_axis(x, i, axis))(a, idx),
             np.take_along_axis(a, idx, axis))
    v = kt.lvector("v")
    same(fn([x, v], kt.take_along_axis(x, v, None))(a, np.array([59, 0, 7])),
         np.take_along_axis(a, np.array([59, 0, 7]), None))
    idx = np.array([[2, 0], [1, 1]])
    verify_grad(lambda m: kt.take_along_axis(m, const(idx), 1), [RNG.standard_normal((2, 3))])
    with pytest.raises(ValueError, match="must have the same number of dimensions"):
        kt.take_along_axis(x, v, 0)


def test_choose(server):
    choices = RNG.standard_normal((3, 4))
    a, c = kt.lvector("a"), kt.dmatrix("c")
    for mode, av in [("raise", [0, 2, 1, 0]), ("wrap", [4, -1, 7, 2]), ("clip", [5, -3, 1, 2])]:
        out = kt.choose(a, c, mode=mode)
        assert str(out.owner.op) == "Choose{mode='%s'}" % mode
        same(fn([a, c], out)(np.array(av), choices), np.choose(av, choices, mode=mode))
    same(kt.choose(const([0, 1, 0]), [const([1.0, 2.0, 3.0]), const([4.0, 5.0, 6.0])]).eval(),
         np.array([1.0, 5.0, 3.0]))
    same(kt.choose([[0], [1]], [[1, 2, 3], [7, 8, 9]]).eval(),
         np.choose([[0], [1]], [[1, 2, 3], [7, 8, 9]]))
    with pytest.raises(Exception, match="invalid entry in choice array"):
        fn([a, c], kt.choose(a, c))(np.array([3]), choices)
    with pytest.raises(Exception, match=r"choose first argument must have an \[u\]int\* dtype"):
        kt.choose(kt.dvector(), c)


def test_choose_list_of_variables(server):
    """Aesara's choose(a, [x, y]) applies Choose to MakeList(x, y): the elements of one type
    (each of the first one's type or a subtype), broadcast with a as np.choose does."""
    a, x, y = kt.lmatrix("a"), kt.dvector("x"), kt.dvector("y")
    xs, ys = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    for mode, av in [("raise", [[0, 1, 0], [1, 1, 0]]), ("wrap", [[0, 1, 2], [3, -1, 0]]),
                     ("clip", [[5, -3, 1], [0, 0, 9]])]:
        for choices in ([x, y], (x, y)):
            out = kt.choose(a, choices, mode=mode)
            assert str(out.owner.op) == "Choose{mode='%s'}" % mode
            assert str(out.type) == "TensorType(float64, (?, ?))"  # as Aesara's
            same(fn([a, x, y], out)(np.array(av), xs, ys), np.choose(av, [xs, ys], mode=mode))
    static = kt.TensorType("float64", (3,))("s")
    assert str(kt.choose(kt.lvector(), [x, static]).type) == "TensorType(float64, (?,))"
    f = fn([a, x, y], kt.choose(a, [x, y]))
    with pytest.raises(Exception, match="invalid entry in choice array"):
        f(np.array([[0, 2, 1]]), xs, ys)
    with pytest.raises(Exception, match="broadcast"):
        f(np.array([[0, 1, 1]]), xs, ys[:2])
    for bad in ([x, kt.dscalar()], [x, kt.fvector()], [static, x], [x, kt.dmatrix()]):
        with pytest.raises(TypeError, match="MakeList need all input variable to be of the same"):
            kt.choose(a, bad)
    with pytest.raises(IndexError, match="list index out of range"):
        kt.choose(a, [])
    with pytest.raises(Exception, match=r"choose first argument must have an \[u\]int\* dtype"):
        kt.choose(kt.dvector(), [x, y])
    with pytest.raises(Exception, match="Choose defines no gradient"):
        kiln.grad(kt.choose(kt.lvector(), [x, y]).sum(), x)


# ---- topk ------------------------------------------------------------------------------------

def _topk_reference(x, k, axis):
    """Aesara's results: x itself for |k| = n, argmax/argmin for |k| = 1, else the kept entries
    in ascending order (Kiln's choice among NumPy's partition orders)."""
    n = x.shape[axis]
    if abs(k) == n:
        shape = [1] * x.ndim
        shape[axis] = n
        idx = np.broadcast_to(np.arange(n).reshape(shape), x.shape)
    elif abs(k) == 1:
        idx = np.expand_dims((np.argmax if k == 1 else np.argmin)(x, axis=axis), axis)
    else:
        order = np.argsort(x, axis=axis, kind="stable")
        idx = np.take(order, range(n - k, n) if k > 0 else range(-k), axis=axis)
    return np.take_along_axis(x, idx, axis), idx.astype("int64")


def test_topk(server):
    x = kt.dmatrix("x")
    k = kt.lscalar("k")
    for axis in [0, 1, -1]:
        vals, idx = kt.topk_and_argtopk(x, k, axis=axis, sorted=False)
        assert str(vals.owner.op) == "TopKOp{axis=%d, sorted=False}" % axis
        f = fn([x, k], [vals, idx])
        a = RNG.standard_normal((4, 5))
        a[1, :2] = a[1, 3]  # ties
        for kk in [1, 2, 3, -1, -2, a.shape[axis], -a.shape[axis]]:
            got_v, got_i = f(a, kk)
            want_v, want_i = _topk_reference(a, kk, axis)
            # Values: NumPy's; indices of tied values may differ, but must point at them.
            np.testing.assert_array_equal(np.sort(got_v, axis=axis), np.sort(want_v, axis=axis))
            np.testing.assert_array_equal(np.take_along_axis(a, got_i, axis), got_v)
            same(got_v, want_v)
    a = np.array([3.0, 1.0, 2.0])
    same(kt.topk(const(a), 2, sorted=False).eval(), np.array([2.0, 3.0]))  # as Aesara
    same(kt.argtopk(const(a), -2, sorted=False).eval(), np.array([1, 2]))
    v, i = kt.topk_and_argtopk(const(np.array([[3.0, 1.0, 2.0], [0, 5, 4]])), 2, axis=None,
                               sorted=False)
    same(v.eval(), np.array([4.0, 5.0]))
    same(i.eval(), np.array([5, 4]))
    same(kt.argtopk(const(a), 1, sorted=False, idx_dtype="int8").eval(), np.array([0], "int8"))
    nan = np.array([2.0, np.nan, 1.0, 3.0])
    same(kt.topk(const(nan), 1, sorted=False).eval(), np.array([np.nan]))
    same(kt.argtopk(const(nan), -1, sorted=False).eval(), np.array([1]))
    same(kt.topk(const(nan), -2, sorted=False).eval(), np.array([1.0, 2.0]))
    with pytest.raises(NotImplementedError, match="Use sorted=False for now."):
        kt.topk(x, 2)
    with pytest.raises(Exception, match="kth cannot be zero"):
        fn([x, k], kt.topk(x, k, sorted=False))(np.ones((2, 2)), 0)
    with pytest.raises(Exception, match="cannot be larger than the size of specified axis"):
        fn([x, k], kt.topk(x, k, sorted=False))(np.ones((2, 2)), 3)


def test_topk_gradient(server):
    for shape, axis, k in [((6,), 0, 2), ((6,), 0, -3), ((3, 4), 0, 2), ((3, 4), 1, -1),
                           ((2, 3, 4), 1, 3), ((2, 3, 4), -1, 2)]:
        a = RNG.permutation(int(np.prod(shape))).reshape(shape) / 3.0  # no ties
        verify_grad(lambda v, axis=axis, k=k: kt.topk(v, k, axis=axis, sorted=False), [a])


# ---- pad (NumPy's; Aesara 2.9.4 has none) ----------------------------------------------------

@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric", "maximum",
                                  "minimum", "mean"])
def test_pad(server, mode):
    a = RNG.standard_normal((3, 4))
    x = kt.dmatrix("x")
    # (Pads wider than the axis: NumPy 2's periodic wrap; NumPy 1.24's differs, see below.)
    for width in [1, (2, 3), ((0, 2), (3, 1)), ((3, 2), (4, 1))]:
        kwargs = {"constant_values": ((1.5, -2.0), (3.0, 4.0))} if mode == "constant" else {}
        same(fn([x], kt.pad(x, width, mode=mode, **kwargs))(a),
             np.pad(a, width, mode=mode, **kwargs))
    ints = np.arange(5)
    same(kt.pad(const(ints), 2, mode=mode).eval(), np.pad(ints, 2, mode=mode))
    same(kt.pad(const(np.array([7.0])), (2, 3), mode=mode).eval(),
         np.pad(np.array([7.0]), (2, 3), mode=mode))
    verify_grad(lambda v: kt.pad(v, ((1, 2), (2, 0)), mode=mode), [a])
    wide = kt.pad(const(np.arange(4)), (7, 2), mode=mode).eval()
    if mode == "wrap":  # NumPy >= 2.0 pads by whole periods
        same(wide, np.array([1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1]))
    elif mode not in ("wrap",):
        same(wide, np.pad(np.arange(4), (7, 2), mode=mode))


PAD_MORE = [("linear_ramp", {}), ("linear_ramp", {"end_values": ((1.5, -2.0), (3.0, 4.0))}),
            ("median", {}), ("median", {"stat_length": 2}),
            ("median", {"stat_length": ((1, 3), (2, 2))}),
            ("maximum", {"stat_length": ((1, 2), (3, 1))}), ("minimum", {"stat_length": 1}),
            ("mean", {"stat_length": (2, 5)})]


@pytest.mark.parametrize("mode,kwargs", PAD_MORE)
def test_pad_ramp_median_stat_length(server, mode, kwargs):
    a = RNG.standard_normal((3, 4))
    x = kt.dmatrix("x")  # the axis lengths symbolic
    s = kt.TensorType("float64", (3, 4))("s")  # and static
    for width in [1, (2, 3), ((0, 2), (3, 1)), ((3, 2), (4, 1))]:
        want = np.pad(a, width, mode=mode, **kwargs)
        np.testing.assert_allclose(fn([x], kt.pad(x, width, mode=mode, **kwargs))(a), want,
                                   rtol=0, atol=1e-14)
        np.testing.assert_allclose(fn([s], kt.pad(s, width, mode=mode, **kwargs))(a), want,
                                   rtol=0, atol=1e-14)
    one_axis = {k: v[0] if np.ndim(v) == 2 else v for k, v in kwargs.items()}
    ints = np.array([3, -7, 2, 9, 4])  # rounded to even (mean, median), truncated (ramp)
    for width in [(2, 3), (6, 1)]:
        same(kt.pad(const(ints), width, mode=mode, **one_axis).eval(),
             np.pad(ints, width, mode=mode, **one_axis))
        np.testing.assert_allclose(fn([x], kt.pad(x, (width, (0, 0)), mode=mode, **one_axis))(
            a[:, :1]), np.pad(a[:, :1], (width, (0, 0)), mode=mode, **one_axis), rtol=0,
            atol=1e-14)
    f32 = a.astype("float32")
    np.testing.assert_allclose(kt.pad(const(f32), 2, mode=mode, **kwargs).eval(),
                               np.pad(f32, 2, mode=mode, **kwargs), rtol=1e-6)
    assert kt.pad(const(f32), 2, mode=mode, **kwargs).dtype == "float32"
    verify_grad(lambda v: kt.pad(v, ((1, 2), (2, 0)), mode=mode, **kwargs), [a])


def test_pad_median_nan_and_even_lengths(server):
    v = np.array([4.0, np.nan, 1.0, 2.0, 8.0, 3.0])
    same(kt.pad(const(v), 2, mode="median").eval(), np.pad(v, 2, mode="median"))
    same(kt.pad(const(v), 2, mode="median", stat_length=(4, 3)).eval(),
         np.pad(v, 2, mode="median", stat_length=(4, 3)))
    same(kt.pad(const(np.array([1, 2])), 1, mode="median").eval(), np.array([2, 1, 2, 2]))
    same(kt.pad(const(np.array([1, 4])), 1, mode="mean").eval(), np.array([2, 1, 4, 2]))


def test_pad_hostile_widths_are_refused_before_allocation(server):
    x = kt.dvector("x")
    for mode, kwargs in [("linear_ramp", {}), ("median", {}), ("mean", {"stat_length": 2})]:
        with pytest.raises(Exception, match="exceeds the limit"):
            fn([x], kt.pad(x, (10 ** 12, 1), mode=mode, **kwargs))(np.ones(3))


def test_pad_errors():
    with pytest.raises(ValueError, match="not supported"):
        kt.pad(kt.dvector(), 1, mode="empty")
    with pytest.raises(ValueError, match="non-negative"):
        kt.pad(kt.dvector(), -1)
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        kt.pad(kt.dvector(), 1, mode="edge", stat_length=2)
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'mean'"):
        kt.pad(kt.dvector(), 1, mode="mean", end_values=2)
    with pytest.raises(ValueError, match="stat_length of 0 yields no value"):
        kt.pad(kt.dvector(), 1, mode="maximum", stat_length=(0, 2))
    with pytest.raises(ValueError, match="negative values"):
        kt.pad(kt.dvector(), 1, mode="median", stat_length=-1)
    with pytest.raises(ValueError, match="must be Python ints or None"):
        kt.pad(kt.dvector(), 1, mode="mean", stat_length=(None, 2))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        kt.pad(kt.dvector(), 1, mode="linear_ramp", end_values=((1, 2), (3, 4)))
    with pytest.raises(ValueError, match="can't extend empty axis 0"):
        kt.pad(const(np.zeros(0)), 1, mode="median")


# ---- the existing functions, checked against Aesara's results --------------------------------

def test_existing_functions_match_aesara(server):
    same(kt.extra_ops.diff(const([1.0, 4.0, 9.0, 16.0]), n=2).eval(), np.array([2.0, 2.0]))
    d = RNG.standard_normal((3, 4))
    m = kt.dmatrix("m")
    for n, axis in [(1, -1), (2, 0), (3, 1)]:
        same(fn([m], kt.extra_ops.diff(m, n, axis))(d), np.diff(d, n, axis))
    nz = np.array([[0, 1], [2, 0]])
    for got, want in zip(kt.nonzero(const(nz)), np.nonzero(nz)):
        same(got.eval(), want)
    same(kt.flatnonzero(const(nz)).eval(), np.flatnonzero(nz))
    same(kt.nonzero_values(const(nz)).eval(), nz[nz != 0])
    r = np.arange(6.0).reshape(2, 3)
    same(kt.roll(const(r), 1).eval(), np.roll(r, 1))
    same(kt.roll(const(r), -1, 1).eval(), np.roll(r, -1, 1))
    same(kt.roll(const(r), 7, 0).eval(), np.roll(r, 7, 0))
    z = kt.as_tensor(np.zeros((2, 3, 4)))
    assert [int(s) for s in kt.moveaxis(z, 0, -1).shape.eval()] == [3, 4, 2]
    assert [int(s) for s in kt.moveaxis(z, [0, 1], [-1, 0]).shape.eval()] == [3, 4, 2]
    assert [int(s) for s in kt.swapaxes(z, 0, 2).shape.eval()] == [4, 3, 2]
    same(kt.clip(const([1, 5, 9]), 2, 6).eval(), np.array([2, 5, 6]))
    same(kt.where(const([True, False]), 1.0, const(np.array([3, 4], "int32"))).eval(),
         np.array([1.0, 4.0]))
    halves = const([0.5, 1.5, -0.5, 2.5, -2.5])
    same(kt.round(halves).eval(), np.array([0.0, 2.0, -0.0, 2.0, -2.0]))
    same(kt.round(halves, mode="half_to_even").eval(), np.array([0.0, 2.0, -0.0, 2.0, -2.0]))
    same(kt.round(halves, mode="half_away_from_zero").eval(),
         np.array([1.0, 2.0, -1.0, 3.0, -3.0]))
    with pytest.raises(Exception, match="round mode up is not implemented."):
        kt.round(halves, mode="up")
    same(kt.isclose(const([1.0, np.nan, 1e-9]), const([1.0 + 1e-9, np.nan, 0.0])).eval(),
         np.array([True, False, True]))
    same(kt.isclose(const([1.0, np.nan, np.inf]), const([1.0, np.nan, np.inf]),
                    equal_nan=True).eval(), np.array([True, True, True]))
    same(kt.allclose(const([1.0, 2.0]), const([1.0, 2.00001])).eval(), np.array(True))
    same(kt.extra_ops.ravel_multi_index((const([1, 0]), const([2, 1])), (2, 3)).eval(),
         np.array([5, 1]))
    nan = np.array([[2.0, np.nan, -1.0, np.nan, 0.5], [np.nan, 1.0, 1.0, -3.0, 0.0]])
    for axis in [0, 1, None]:
        same(kt.sort(const(nan), axis).eval(), np.sort(nan, axis))
        same(kt.argsort(const(nan), axis).eval(), np.argsort(nan, axis, kind="stable"))


def test_empty_arrays(server):
    e = np.zeros((0, 3))
    same(kt.diagonal(const(e)).eval(), np.diagonal(e))
    same(kt.diag(const(np.zeros(0))).eval(), np.diag(np.zeros(0)))
    same(kt.choose(const(np.zeros((0,), "int64")), const(np.ones((2, 1)))).eval(), np.zeros(0))
    for got, want in zip(kt.unravel_index(const(np.zeros(0, "int64")), (2, 3)),
                         np.unravel_index(np.zeros(0, "int64"), (2, 3))):
        same(got.eval(), want)
    same(kt.ravel_multi_index((const(np.zeros(0, "int64")),) * 2, (2, 3)).eval(),
         np.zeros(0, "int64"))
    same(kt.searchsorted(const(np.arange(3.0)), const(np.zeros(0))).eval(), np.zeros(0, "int64"))
    same(kt.tri(0, 4).eval(), np.tri(0, 4))
    same(kt.fill_diagonal_offset(const(e), 1.0, 0).eval(), e)
    same(kt.take_along_axis(const(e), const(np.zeros((0, 2), "int64")), 1).eval(),
         np.zeros((0, 2)))
    same(kt.pad(const(np.zeros((0, 2))), ((0, 0), (1, 1))).eval(), np.zeros((0, 4)))


def test_variable_methods(server):
    """Aesara's methods of a tensor variable for these functions."""
    a = np.array([[3.0, -1.0, 2.0], [0.0, 5.0, -4.0]])
    x = kt.dmatrix("x")
    cases = [
        (x.diagonal(1), np.diagonal(a, 1)), (x.trace(), np.trace(a)),
        (x.clip(-1.0, 2.0), np.clip(a, -1.0, 2.0)), (x.round(), np.round(a)),
        (x.repeat(2, axis=1), np.repeat(a, 2, axis=1)), (x.take([1, 0]), a.take([1, 0])),
        (x.sort(), np.sort(a)), (x.argsort(axis=0), np.argsort(a, axis=0)),
        (x.cumsum(axis=1), np.cumsum(a, axis=1)), (x.cumprod(), np.cumprod(a)),
        (x.ptp(axis=0), np.ptp(a, axis=0)), (x.swapaxes(0, 1), np.swapaxes(a, 0, 1)),
        (x.nonzero_values(), a[a != 0]), (x.ravel(), a.ravel()),
        (x.argmin(axis=1), np.argmin(a, axis=1)), (x.any(axis=0), a.any(axis=0)),
        (x.all(), a.all()), (x.nonzero()[1], np.nonzero(a)[1]),
        (x[0].searchsorted(2.5), np.searchsorted(a[0], 2.5)),
    ]
    outs = fn([x], [c[0] for c in cases])(a)
    for got, (_, want) in zip(outs, cases):
        np.testing.assert_allclose(got, want)
    i = kt.lvector("i")
    same(fn([i, x], i.choose(x))(np.array([1, 0, 1]), a), np.choose([1, 0, 1], a))
    same(fn([i, x], i.compress(x, axis=1))(np.array([1, 0, 1]), a),
         np.compress([1, 0, 1], a, axis=1))
    assert kt.tensor("float64", (1, None, 1)).squeeze().type.shape == (None,)
