"""kiln.tensor.nnet.conv3d2d's DiagonalSubtensor and IncDiagonalSubtensor against Aesara 2.9.4
(tests/golden/aesara_diagonal_subtensor.txt, written by tests/golden/gen_aesara_conv3d2d.py):
values, get_diagonal_subtensor_view on NumPy arrays, printed names, gradients by finite
differences, and errors."""
import os

import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.tensor.nnet import conv3d2d

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden",
                      "aesara_diagonal_subtensor.txt")


def _shape(text):
    return () if text == "-" else tuple(int(d) for d in text.split("x"))


def _values(text, dtype):
    return np.array([float(v) for v in text.split(",")] if text else [], dtype=dtype)


def _cases():
    with open(GOLDEN) as f:
        return [line.rstrip("\n").split("|") for line in f if line.strip() and line[0] != "#"]


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[c[1] + "/" + c[2] + "," + c[3] for c in CASES])
def test_values_match_aesara(server, case):
    dt, shp, i0, i1, adt, ashp, oshp, yvals, zvals = case
    shp, ashp, oshp, i0, i1 = _shape(shp), _shape(ashp), _shape(oshp), int(i0), int(i1)
    xv = (np.arange(int(np.prod(shp)), dtype=np.float64).reshape(shp) + 1).astype(dt)
    av = (np.arange(int(np.prod(ashp)), dtype=np.float64).reshape(ashp) * 0.5 - 1).astype(adt)
    want_y = _values(yvals, dt).reshape(oshp)
    want_z = _values(zvals, dt).reshape(shp)
    # NumPy's view, which Aesara's perform copies.
    view = conv3d2d.get_diagonal_subtensor_view(xv, i0, i1)
    np.testing.assert_array_equal(view, want_y)
    assert view.size == 0 or np.shares_memory(view, xv)
    x = kt.tensor(dt, shape=(None,) * len(shp), name="x")
    amt = kt.tensor(adt, shape=(None,) * len(ashp), name="amt")
    a0, a1 = kt.lscalar("i0"), kt.lscalar("i1")
    y = conv3d2d.diagonal_subtensor(x, i0, i1)  # Python ints: constants
    z = conv3d2d.inc_diagonal_subtensor(x, a0, a1, amt)  # axes given at run time
    f = kiln.function([x, amt, a0, a1], [y, z, y.shape])
    got_y, got_z, got_shape = f(xv, av, i0, i1)
    assert got_y.dtype == xv.dtype and got_z.dtype == xv.dtype
    np.testing.assert_array_equal(got_y, want_y)
    np.testing.assert_array_equal(got_z, want_z)
    assert tuple(got_shape) == oshp
    np.testing.assert_array_equal(xv, (np.arange(xv.size).reshape(shp) + 1).astype(dt))


def test_names_types_and_props(server):
    x = kt.dtensor3("x")
    y = conv3d2d.diagonal_subtensor(x, 1, 0)
    z = conv3d2d.inc_diagonal_subtensor(x, 1, 0, kt.dscalar())
    assert str(y.owner.op) == "DiagonalSubtensor" and str(z.owner.op) == "IncDiagonalSubtensor"
    assert str(conv3d2d.DiagonalSubtensor(True)) == "DiagonalSubtensor{inplace}"
    assert str(conv3d2d.IncDiagonalSubtensor(inplace=True)) == "IncDiagonalSubtensor{inplace}"
    assert conv3d2d.DiagonalSubtensor.__props__ == ("inplace",)
    assert conv3d2d.diagonal_subtensor == conv3d2d.DiagonalSubtensor(False)
    assert conv3d2d.diagonal_subtensor != conv3d2d.DiagonalSubtensor(True)
    assert str(y.type) == "TensorType(float64, (?, ?, ?))" and z.type == x.type
    b = kt.tensor("float32", shape=(5, 1, None))
    assert str(conv3d2d.diagonal_subtensor(b, 0, 2).type) == "TensorType(float32, (?, 1, ?))"
    text = kiln.dprint(conv3d2d.diagonal_subtensor(kt.dmatrix("m"), 0, 1), file="str")
    assert text.startswith("DiagonalSubtensor [id A]\n |m [id B]\n |TensorConstant{0} [id C]")


def test_gradients_by_finite_differences(server):
    rng = np.random.default_rng(3)
    for shape, i0, i1 in (((5, 3), 0, 1), ((2, 4, 3), 1, 2), ((4, 2, 3), 2, 1)):
        xv = rng.normal(size=shape)
        kiln.gradient.verify_grad(lambda x: conv3d2d.diagonal_subtensor(x, i0, i1), [xv],
                                  rng=np.random.default_rng(0))
        stripe = conv3d2d.get_diagonal_subtensor_view(xv, i0, i1).shape
        kiln.gradient.verify_grad(
            lambda x, a: conv3d2d.inc_diagonal_subtensor(x, i0, i1, a),
            [xv, rng.normal(size=stripe)], rng=np.random.default_rng(0))
    # Each op's gradient is the other one, the axes disconnected.
    x, a = kt.dmatrix("x"), kt.dmatrix("a")
    gx = kiln.grad(conv3d2d.diagonal_subtensor(x, 0, 1).sum(), x)
    assert str(gx.owner.op) == "IncDiagonalSubtensor"
    ga = kiln.grad(conv3d2d.inc_diagonal_subtensor(x, 0, 1, a).sum(), a)
    assert str(ga.owner.op) == "DiagonalSubtensor"


def test_errors(server):
    x = kt.dmatrix("x")
    with pytest.raises(Exception, match="input 1 \\(i0\\) has type TensorType\\(float64, "
                                        "\\(\\)\\) but must be an integer scalar"):
        conv3d2d.diagonal_subtensor(x, kt.dscalar(), 1)
    with pytest.raises(Exception, match="float64 cannot be added into int32"):
        conv3d2d.inc_diagonal_subtensor(kt.imatrix(), 0, 1, kt.dmatrix())
    f = kiln.function([x], conv3d2d.diagonal_subtensor(x, 0, 1))
    with pytest.raises(Exception, match="its length along i0=0 \\(2\\) is less than its length "
                                        "along i1=1 \\(3\\)"):
        f(np.zeros((2, 3)))
    with pytest.raises(NotImplementedError, match="is this allowed"):
        conv3d2d.get_diagonal_subtensor_view(np.zeros((2, 3)), 0, 1)
