"""kiln.tensor.xlogx against Aesara 2.9.4: values, dtypes, printed names and gradients (Aesara's
1 + log(x), so -inf at 0; log(y) and x / y), from the oracle's output."""
import numpy as np
import pytest


@pytest.fixture(scope="module")
def xt(server):
    import kiln.tensor as at
    from kiln.tensor import xlogx
    return at, xlogx


def test_values_and_names_are_aesaras(xt):
    import kiln
    at, xlogx = xt
    x, y = at.dvector("x"), at.dvector("y")
    z = xlogx.xlogx(x)
    assert str(z.owner.op) == "xlogx" and str(xlogx.xlogy0(x, y).owner.op) == "xlogy0"
    assert xlogx.xlogx(at.ivector()).dtype == "float64"
    assert xlogx.xlogx(at.fvector()).dtype == "float32"
    f = kiln.function([x, y], [z, xlogx.xlogy0(x, y)])
    a, b = np.array([0.0, 1.0, 2.0, 0.5]), np.array([0.0, 2.0, 3.0, np.nan])
    got_x, got_y = f(a, b)
    np.testing.assert_allclose(got_x, [0.0, 0.0, 2 * np.log(2), 0.5 * np.log(0.5)])
    # 0 where x is 0, whatever y is (nan included); x log(y) elsewhere.
    np.testing.assert_allclose(got_y, [0.0, np.log(2), 2 * np.log(3), np.nan])
    assert not hasattr(at, "xlogy0") and not hasattr(at.math, "xlogx")


def test_gradients_are_aesaras(xt):
    import kiln
    at, xlogx = xt
    x, y = at.dvector("x"), at.dvector("y")
    gx = kiln.grad(xlogx.xlogx(x).sum(), x)
    np.testing.assert_allclose(kiln.function([x], gx)(np.array([0.0, 1.0, 2.0])),
                               [-np.inf, 1.0, 1.6931471805599454])
    g = kiln.grad(xlogx.xlogy0(x, y).sum(), [x, y])
    with np.errstate(all="ignore"):
        got = kiln.function([x, y], g)(np.array([0.0, 1.0]), np.array([0.0, 2.0]))
    np.testing.assert_allclose(got[0], [-np.inf, 0.6931471805599453])
    np.testing.assert_allclose(got[1], [np.nan, 0.5])
