"""kiln.gradient, in this process through core (the server's Grad as the reference): grad's
options, Lop, Rop, jacobian, hessian and verify_grad, each checked against NumPy or finite
differences."""
import os
import re
import subprocess
import sys

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


def test_grad_runs_in_this_process_without_a_server():
    """grad, Lop, Rop, jacobian and hessian are core's, in this process: they work with no
    server to reach (kiln.config.server names a closed port)."""
    script = r"""
import numpy as np
import kiln, kiln.tensor as kt
from kiln import gradient
x, W = kt.dvector("x"), kt.dmatrix("W")
cost = kt.sum(kt.tanh(kt.dot(W, x)) ** 2)
gx, gW = kiln.grad(cost, [x, W])
print(kiln.pp(gx) != "" and gW.type == W.type)
print(gradient.Lop(kt.dot(W, x), x, kt.dvector("u")).type)
print(gradient.Rop(kt.dot(W, x), x, kt.dvector("v")).type)
print(gradient.jacobian(kt.exp(x), x).type, gradient.hessian(cost, x).type)
"""
    package = os.path.dirname(os.path.dirname(os.path.abspath(kiln.__file__)))
    env = dict(os.environ, KILN_SERVER="127.0.0.1:1", KILN_LANE="off", KILN_SHM="off",
               PYTHONPATH=package)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120, cwd=os.path.dirname(__file__))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:4] == [
        "True", "TensorType(float64, (?,))", "TensorType(float64, (?,))",
        "TensorType(float64, (?, ?)) TensorType(float64, (?, ?))"]


def test_grad_in_process_matches_the_grad_rpc(server):
    """The in-process gradient of the tutorial's logistic regression prints and computes as
    the server's Grad answers it; its graph shares the cost's nodes (so, as in Aesara, their
    names show: the server's rebuilt copy has none)."""
    from grad_rpc import grad_on_server, logistic_regression

    def text(outputs):
        return re.sub(r" '[^'\n]*'$", "", kiln.dprint(outputs, file="str"), flags=re.M)
    rng = np.random.default_rng(5)
    x, y, w, b, cost = logistic_regression(kt, kiln, rng)
    local = kiln.grad(cost, [w, b])
    remote = grad_on_server(cost, [w, b])
    assert text(local) == text(remote)
    X, Y = rng.normal(size=(5, 784)), rng.integers(0, 2, size=5).astype(float)
    f_local, f_remote = kiln.function([x, y], local), kiln.function([x, y], remote)
    assert f_local.function_id == f_remote.function_id
    for a, r in zip(f_local(X, Y), f_remote(X, Y)):
        np.testing.assert_array_equal(a, r)
    forward = {id(v) for v in kiln.graph.ancestors([cost])}
    assert any(id(v) in forward and v.owner is not None
               for v in kiln.graph.ancestors(local)), "no node of the cost is reused"
    # Jacobians and Lops too.
    v = kt.dvector("v")
    e = kt.exp(v) * kt.sum(v ** 2)
    assert text(gradient.jacobian(e, v)) == text(grad_on_server(e, [v], jacobian=True))
    u = kt.dvector("u")
    assert text(gradient.Lop(e, v, u)) == text(grad_on_server(None, [v], known_grads=[(e, u)]))


def test_grad_options_in_process():
    """Aesara's return_disconnected and null_gradients, a tuple wrt, warnings and errors."""
    x, z = kt.dvectors("x", "z")
    gx, gz = kiln.grad(kt.sum(x), (x, z), disconnected_inputs="ignore",
                       return_disconnected="None")
    assert gz is None and gx.type == x.type
    assert isinstance(kiln.grad(kt.sum(x), (x,)), tuple)
    d = kiln.grad(kt.sum(x), [z], disconnected_inputs="ignore",
                  return_disconnected="Disconnected")[0]
    assert str(d.type) == "DisconnectedType"
    with pytest.warns(UserWarning):
        kiln.grad(kt.sum(x), [x, z], disconnected_inputs="warn")
    with pytest.raises(ValueError, match="disconnected_inputs"):
        kiln.grad(kt.sum(x), x, disconnected_inputs="loud")
    with pytest.raises(kiln.KilnError) as e:
        kiln.grad(kt.sum(x), [x, z])
    assert e.value.code == "INVALID_ARGUMENT"
    named = kt.sum(x ** 2)
    named.name = "c"
    assert kiln.grad(named, x).name == "(dc/dx)"
