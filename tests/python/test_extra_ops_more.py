"""kiln.tensor.extra_ops against Aesara 2.9.4's names, and 0-d boolean indices:
bincount(assert_nonneg=True) (Aesara's Assert op and message), bartlett, cpu_contiguous,
broadcast_shape_iter, CumsumOp/CumprodOp, kiln.raise_op.Assert, and x[np.array(True)] /
x[np.array(False)] (NumPy's values; Python bools refused with Aesara's TypeError). Values come
from NumPy, the reference Aesara's perform methods call."""
import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.errors import KilnError
from kiln.raise_op import Assert, assert_op
from kiln.tensor import extra_ops

NEGATIVE = "Input to bincount has negative values!"  # Aesara's message


def _names(f):
    return kiln.dprint(f, file="str")


def test_public_names_match_aesara():
    # aesara.tensor.extra_ops's public names (dir() of the module at 2.9.4, its own objects)
    aesara_names = ("Bartlett BroadcastTo CpuContiguous CumOp CumprodOp CumsumOp FillDiagonal "
                    "FillDiagonalOffset RavelMultiIndex Repeat SearchsortedOp Unique UnravelIndex "
                    "bartlett bartlett_ bincount broadcast_arrays broadcast_shape "
                    "broadcast_shape_iter broadcast_to broadcast_to_ compress cpu_contiguous "
                    "cumprod cumsum diff fill_diagonal fill_diagonal_ fill_diagonal_offset "
                    "fill_diagonal_offset_ geomspace linspace logspace ravel_multi_index repeat "
                    "searchsorted squeeze to_one_hot unique unravel_index").split()
    assert [n for n in aesara_names if not hasattr(extra_ops, n)] == []
    assert kt.bartlett is extra_ops.bartlett


@pytest.mark.parametrize("weights", [False, True])
def test_bincount_assert_nonneg(server, weights):
    x = kt.lvector("x")
    w = kt.dvector("w")
    out = extra_ops.bincount(x, weights=w if weights else None, minlength=6, assert_nonneg=True)
    f = kiln.function([x, w], out, on_unused_input="ignore")
    xv = np.array([0, 3, 1, 1, 7])
    wv = np.array([0.5, 1.0, -2.0, 4.0, 0.25])
    np.testing.assert_array_equal(f(xv, wv), np.bincount(xv, wv if weights else None, 6))
    text = _names(f)
    assert "Assert{msg=%s}" % NEGATIVE in text, text
    with pytest.raises(KilnError, match=NEGATIVE):
        f(np.array([2, -1, 0]), wv[:3])
    # Without the flag there is no check (Aesara's graph has none either).
    g = kiln.function([x], extra_ops.bincount(x))
    assert "Assert" not in _names(g)


def test_assert_op():
    x = kt.dvector("x")
    a = Assert("x is too long")(x, kt.lt(x.shape[0], 3))
    assert str(a.owner.op) == "Assert{msg=x is too long}"
    assert str(assert_op) == "Assert{msg=Aesara Assert failed!}"
    assert Assert("m") == Assert(msg="m") != Assert("n")
    assert a.type == x.type


def test_assert_op_runs(server):
    x = kt.dvector("x")
    f = kiln.function([x], Assert("x is too long")(x * 2, kt.lt(x.shape[0], 3)))
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(KilnError, match="x is too long"):
        f(np.zeros(3))
    # The gradient passes through (Aesara's CheckAndRaise.grad).
    g = kiln.function([x], kiln.grad(Assert("m")(x * 2, kt.gt(x.shape[0], 0)).sum(), x))
    np.testing.assert_array_equal(g(np.array([1.0, 5.0])), [2.0, 2.0])


@pytest.mark.parametrize("m", [-2, 0, 1, 2, 5, 8, 33])
def test_bartlett(server, m):
    n = kt.lscalar("n")
    w = extra_ops.bartlett(n)
    assert str(w.owner.op) == "Bartlett" and w.type == kt.dvector().type
    np.testing.assert_array_equal(kiln.function([n], w)(m), np.bartlett(m))


def test_bartlett_refuses_bad_input(server):
    with pytest.raises(Exception, match="integer scalar"):
        extra_ops.bartlett(kt.dscalar("m"))
    n = kt.lscalar("n")
    with pytest.raises(KilnError, match="Bartlett"):
        kiln.function([n], extra_ops.bartlett(n))(2 ** 60)


def test_cpu_contiguous(server):
    x = kt.dmatrix("x")
    y = extra_ops.cpu_contiguous(x.T)
    assert str(y.owner.op) == "CpuContiguous"
    xv = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(kiln.function([x], y)(xv), xv.T)
    g = kiln.function([x], kiln.grad((extra_ops.cpu_contiguous(x) * 3).sum(), x))
    np.testing.assert_array_equal(g(xv), np.full((2, 3), 3.0))


def test_broadcast_shape_iter_and_cum_classes(server):
    a, b = kt.dmatrix("a"), kt.drow("b")
    shape = extra_ops.broadcast_shape_iter([a, b])
    f = kiln.function([a, b], list(shape))
    assert [int(v) for v in f(np.zeros((2, 3)), np.zeros((1, 3)))] == [2, 3]
    assert extra_ops.CumsumOp(axis=0) == extra_ops.CumOp(axis=0, mode="add")
    assert extra_ops.CumprodOp(axis=1) == extra_ops.CumOp(axis=1, mode="mul")


# ---- 0-d boolean indices -----------------------------------------------------------------------

BOOL_INDICES = [np.array(True), np.array(False), (slice(None), np.array(True)),
                (0, np.array(False)), (None, np.array(True)), ([0, 1], np.array(True)),
                (Ellipsis, np.array(True)), (np.array(True), np.array(False)),
                (np.array([True, False]), np.array(True))]


@pytest.mark.parametrize("index", BOOL_INDICES, ids=repr)
def test_zero_d_boolean_index(server, index):
    x = kt.dmatrix("x")
    xv = np.arange(6.0).reshape(2, 3)
    y = x[index]
    assert y.ndim == xv[index].ndim
    np.testing.assert_array_equal(kiln.function([x], y)(xv), xv[index])
    # Writes through the view, as numpy's x[index] = 5 and numpy.add.at.
    want = xv.copy()
    want[index] = 5.0
    np.testing.assert_array_equal(kiln.function([x], kt.set_subtensor(y, 5.0))(xv), want)
    want = xv.copy()
    np.add.at(want, index, 1.5)
    np.testing.assert_array_equal(kiln.function([x], kt.inc_subtensor(y, 1.5))(xv), want)


def test_symbolic_zero_d_boolean_index_and_gradient(server):
    x = kt.dmatrix("x")
    b = kt.bscalar("b")
    y = x[kt.cast(b, "bool")]
    xv = np.arange(6.0).reshape(2, 3)
    f = kiln.function([x, b], y)
    np.testing.assert_array_equal(f(xv, 1), xv[np.array(True)])
    np.testing.assert_array_equal(f(xv, 0), xv[np.array(False)])
    g = kiln.function([x, b], kiln.grad((y * 2.0).sum(), x))
    np.testing.assert_array_equal(g(xv, 1), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(g(xv, 0), np.zeros((2, 3)))


@pytest.mark.parametrize("index", [True, False, (0, True), np.bool_(True), (slice(None), False)],
                         ids=repr)
def test_python_bool_index_is_refused_as_aesara_does(index):
    with pytest.raises(TypeError, match="TensorType does not support Python bools for indexing"):
        kt.dmatrix("x")[index]
