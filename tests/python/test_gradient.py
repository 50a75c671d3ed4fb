"""kiln.gradient through the server: grad's options, Lop, Rop, jacobian, hessian and
verify_grad, each checked against NumPy or finite differences."""
import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln import gradient


def test_grad_of_a_scalar_cost(server):
    x = kt.dvector("x")
    cost = kt.sum(kt.math.sigmoid(x) * x)
    g = kiln.grad(cost, x)
    f = kiln.function([x], g)
    v = np.array([-1.0, 0.0, 2.0])
    s = 1 / (1 + np.exp(-v))
    np.testing.assert_allclose(f(v), s + v * s * (1 - s), rtol=1e-12)


def test_consider_constant_and_known_grads(server):
    x = kt.dvector("x")
    y = x * x
    g = kiln.grad(kt.sum(y * x), x, consider_constant=[y])  # only the last factor varies
    np.testing.assert_allclose(kiln.function([x], g)([1.0, 3.0]), [1.0, 9.0])
    seed = kt.dvector("seed")
    lop = kiln.grad(None, x, known_grads={y: seed})
    np.testing.assert_allclose(kiln.function([x, seed], lop)([1.0, 3.0], [1.0, 2.0]),
                               [2.0, 12.0])


def test_disconnected_inputs(server):
    x, z = kt.dvectors("x", "z")
    with pytest.raises(kiln.KilnError) as e:
        kiln.grad(kt.sum(x), [x, z])
    assert e.value.code == "INVALID_ARGUMENT"
    assert "DisconnectedInputError" in e.value.message or "disconnected" in e.value.message
    gx, gz = kiln.grad(kt.sum(x), [x, z], disconnected_inputs="ignore")
    f = kiln.function([x, z], [gx, gz], on_unused_input="ignore")
    np.testing.assert_array_equal(f([1.0, 2.0], [5.0])[1], [0.0])


def test_lop_and_rop_are_jacobian_products(server):
    W = kt.dmatrix("W")
    v = kt.dvector("v")
    y = kt.dot(v, W)  # dy/dv = W^T
    u = kt.dvector("u")
    lop = gradient.Lop(y, v, u)  # u^T J = W u
    rop = gradient.Rop(y, v, u)  # J u = u W
    Wv = np.arange(6.0).reshape(2, 3)
    # Lop takes a cotangent of y's length (3); Rop a tangent of v's length (2).
    lop_val = kiln.function([W, v, u], lop, on_unused_input="ignore")(Wv, [1.0, 2.0],
                                                                      [1.0, 0.0, 2.0])
    np.testing.assert_allclose(lop_val, Wv @ np.array([1.0, 0.0, 2.0]))
    rop_val = kiln.function([W, v, u], rop, on_unused_input="ignore")(Wv, [1.0, 2.0],
                                                                      [0.5, -1.0])
    np.testing.assert_allclose(rop_val, np.array([0.5, -1.0]) @ Wv)


def _finite_jacobian(f, x, *rest, eps=1e-6):
    """d f(x, *rest) / dx by central differences, (f's size, x's size)."""
    cols = []
    for j in range(x.size):
        up, down = x.copy(), x.copy()
        up.flat[j] += eps
        down.flat[j] -= eps
        cols.append((np.ravel(f(up, *rest)) - np.ravel(f(down, *rest))) / (2 * eps))
    return np.stack(cols, axis=1)


def test_jacobian_and_hessian_of_any_length(server):
    x = kt.dvector("x")
    W = kt.dmatrix("W")
    y = kt.tanh(kt.dot(W, x)) * kt.cumsum(x) + kt.softmax(x)
    J = gradient.jacobian(y, x)
    JW = gradient.jacobian(y, W)
    cost = kt.sum(x ** 3) + kt.dot(x, kt.dot(W, x)) + kt.logsumexp(x)
    H = gradient.hessian(cost, x)
    f_y = kiln.function([x, W], y)
    f_g = kiln.function([x, W], gradient.grad(cost, x))
    f = kiln.function([x, W], [J, JW, H])
    rng = np.random.default_rng(3)
    for n in (1, 2, 5):  # one compiled function for every length
        xv, Wv = rng.normal(size=n), rng.normal(size=(n, n))
        Jv, JWv, Hv = f(xv, Wv)
        np.testing.assert_allclose(Jv, _finite_jacobian(f_y, xv, Wv), rtol=1e-6, atol=1e-6)
        wrt_W = _finite_jacobian(lambda w, v: f_y(v, w), Wv, xv)
        np.testing.assert_allclose(JWv, wrt_W.reshape(n, n, n), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(Hv, _finite_jacobian(f_g, xv, Wv), rtol=1e-6, atol=1e-6)
    # A static length gives the same graph kind; a constant expression has zero rows.
    xs = kt.tensor("float64", (3,), name="xs")
    Js, Hs = kiln.function([xs], [gradient.jacobian(xs ** 2, xs),
                                  gradient.hessian(kt.sum(xs ** 3), xs)])([1.0, 2.0, 3.0])
    np.testing.assert_allclose(Js, np.diag([2.0, 4.0, 6.0]))
    np.testing.assert_allclose(Hs, np.diag([6.0, 12.0, 18.0]))
    with pytest.raises(ValueError, match="1 dimensional"):
        gradient.jacobian(kt.dmatrix("m"), x)
    with pytest.raises(ValueError, match="0 dimensional"):
        gradient.hessian(x, x)


def test_jacobian_graphs_share_one_function_id(server):
    x = kt.dvector("x")
    J = gradient.jacobian(kt.exp(x) * 2.0, x)
    f1 = kiln.function([x], J)
    f2 = kiln.function([x], gradient.jacobian(kt.exp(x) * 2.0, x))
    assert f1.function_id == f2.function_id
    np.testing.assert_allclose(f1([0.0, 1.0]), np.diag(2.0 * np.exp([0.0, 1.0])))
    assert f1([]).shape == (0, 0)


def test_verify_grad(server):
    rng = np.random.default_rng(0)
    gradient.verify_grad(lambda a, b: kt.tanh(kt.dot(a, b)), [rng.normal(size=(2, 3)),
                                                              rng.normal(size=(3,))], rng=rng)
    with pytest.raises(TypeError, match="floating point"):
        gradient.verify_grad(lambda a: a * 2, [np.array([1, 2])])
