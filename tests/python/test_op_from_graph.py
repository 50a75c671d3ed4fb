"""kiln.OpFromGraph (aesara.compile.builders.OpFromGraph) against Aesara 2.9.4: the docstring's
examples and their values, the gradient, inline expansion, shared variables and printing."""
import numpy as np
import pytest

import kiln
import kiln.tensor as at
from kiln.compile.builders import OpFromGraph


def test_the_first_docstring_example(server):
    x, y, z = at.scalars("xyz")
    e = x + y * z
    op = OpFromGraph([x, y, z], [e])
    e2 = op(x, y, z) + op(z, y, x)
    fn = kiln.function([x, y, z], [e2])
    assert fn(1.0, 2.0, 3.0) == [12.0]
    assert str(op) == "OpFromGraph{inline=False}"
    # Aesara 2.9.4's gradient at (1, 2, 3).
    g = kiln.function([x, y, z], kiln.grad(e2, [x, y, z]))(1.0, 2.0, 3.0)
    np.testing.assert_allclose(g, [3.0, 4.0, 3.0])
    text = kiln.dprint(e2, file="str")
    assert text.startswith("Elemwise{add,no_inplace} [id A]\n |OpFromGraph{inline=False} [id B]")
    assert "Inner graphs:\n\nOpFromGraph{inline=False} [id B]\n >Elemwise{add,no_inplace}" in text


def test_a_shared_variable_becomes_an_input(server):
    x, y, z = at.scalars("xyz")
    s = kiln.shared(np.random.default_rng(0).random((2, 2)))
    op = OpFromGraph([x, y, z], [x + y * z + s])
    assert op.shared_inputs == [s]
    e2 = op(x, y, z) + op(z, y, x)
    out = kiln.function([x, y, z], e2)(1.0, 2.0, 3.0)
    np.testing.assert_allclose(out, 12 + 2 * s.get_value())


def test_a_pickled_op_and_its_graph_come_back_callable(server):
    import pickle
    x, y, z = at.scalars("xyz")
    s = kiln.shared(np.float64(0.5), name="s")
    op = OpFromGraph([x, y, z], [x + y * z + s], name="affine")
    e = op(x, y, z)
    op2, e2, s2 = pickle.loads(pickle.dumps((op, e, s)))
    assert op2 == op and str(op2) == "affine{inline=False}" and op2.shared_inputs == [s2]
    a, b, c = e2.owner.inputs[:3]
    assert kiln.function([a, b, c], e2)(1.0, 2.0, 3.0) == 7.5
    assert kiln.function([x, y, z], op2(x, y, z))(1.0, 2.0, 3.0) == 7.5


def test_inline_expands_and_several_outputs(server):
    a, b = at.dmatrices("a", "b")
    op = OpFromGraph([a, b], [a + b, at.dot(a, b)], inline=True, name="myop")
    assert str(op) == "myop{inline=True}"
    s, p = op(a, b)
    f = kiln.function([a, b], [s, p])
    assert "myop" not in kiln.dprint(f, file="str")
    av, bv = np.eye(2) * 2, np.arange(4.0).reshape(2, 2)
    got = f(av, bv)
    np.testing.assert_allclose(got[0], av + bv)
    np.testing.assert_allclose(got[1], av @ bv)
    cost = at.sum(p) + at.sum(s ** 2)
    ga = kiln.function([a, b], kiln.grad(cost, a))(av, bv)
    np.testing.assert_allclose(ga, np.ones((2, 2)) @ bv.T + 2 * (av + bv))


def test_errors_are_aesaras(server):
    x, y = at.dscalars("x", "y")
    m = at.dmatrix("m")
    op = OpFromGraph([x], [x * 2.0])
    with pytest.raises(TypeError, match="Cannot convert Type TensorType\\(float64, \\(\\?, \\?\\)\\)"):
        op(m)
    with pytest.raises(ValueError, match="OpFromGraph is missing an input: y"):
        OpFromGraph([x], [x + y])
    with pytest.raises(TypeError, match="must be lists"):
        OpFromGraph(x, [x])
    with pytest.raises(ValueError, match="Need to override 1 gradients, got 2"):
        OpFromGraph([x], [x], grad_overrides=["default", "default"])


def test_grad_overrides(server):
    """Aesara's grad_overrides as a function of (inputs, output_grads): the gradient is an
    OpFromGraph named "<name>_grad" computing it, kept through pickling; it must give one
    gradient per input."""
    import pickle
    x, y = at.dvectors("x", "y")

    def override(inputs, grads):
        (a, b), (g,) = inputs, grads
        return [g * 3.0, g * b]

    op = OpFromGraph([x, y], [x * y], grad_overrides=override, name="scaled")
    for used in (op, pickle.loads(pickle.dumps(op))):
        out = used(x, y)
        gx, gy = kiln.grad(out.sum(), [x, y])
        assert str(gx.owner.op) == "scaled_grad{inline=False}" and gx.owner is gy.owner
        got = kiln.function([x, y], [out, gx, gy])(np.array([1.0, 2.0]), np.array([4.0, 5.0]))
        np.testing.assert_allclose(got[0], [4.0, 10.0])
        np.testing.assert_allclose(got[1], [3.0, 3.0])  # the override's, not y
        np.testing.assert_allclose(got[2], [4.0, 5.0])  # g * y, not x
    with pytest.raises(ValueError, match="should return list of 2 outputs, got 1"):
        OpFromGraph([x, y], [x * y], grad_overrides=lambda i, g: [g[0]])
    with pytest.raises(TypeError, match="should return a list"):
        OpFromGraph([x, y], [x * y], grad_overrides=lambda i, g: (g[0], g[0]))
