"""The kiln.tensor functions Aesara users reach for, under Aesara's module paths, each
against NumPy through a real server: cumulative ops, repeat, split, sort, var/std, products,
relu, take, shape padding, joining, grids, eval, the gradient-only ops and floatX."""
import numpy as np
import pytest

import kiln
import kiln.tensor as at
from kiln.tensor import extra_ops, nnet, subtensor
from kiln.tensor.shape import shape_padleft
from kiln.tensor.sort import sort
from kiln.tensor.type import TensorType

RNG = np.random.default_rng(7)
M = RNG.normal(size=(3, 4))
V = RNG.normal(size=5)


def run(inputs, out, *values):
    return kiln.function(inputs, out)(*values)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumsum_and_cumprod(server, axis):
    m = at.dmatrix("m")
    np.testing.assert_allclose(run([m], extra_ops.cumsum(m, axis), M), np.cumsum(M, axis))
    np.testing.assert_allclose(run([m], at.cumprod(m, axis), M), np.cumprod(M, axis))


def test_repeat_and_split(server):
    m, r = at.dmatrix("m"), at.lvector("r")
    np.testing.assert_array_equal(run([m, r], at.repeat(m, r, axis=1), M, [1, 0, 2, 1]),
                                  np.repeat(M, [1, 0, 2, 1], axis=1))
    np.testing.assert_array_equal(run([m], at.repeat(m, 2), M), np.repeat(M, 2))
    pieces = run([m], at.split(m, [1, 3], 2, axis=1), M)
    for got, want in zip(pieces, np.split(M, [1], axis=1)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_sort_and_argsort(server, axis):
    m = at.dmatrix("m")
    np.testing.assert_array_equal(run([m], sort(m, axis), M), np.sort(M, axis))
    np.testing.assert_array_equal(run([m], at.argsort(m, axis), M), np.argsort(M, axis))


@pytest.mark.parametrize("axis,ddof", [(None, 0), (0, 0), (1, 1), ((0, 1), 1)])
def test_var_and_std(server, axis, ddof):
    m = at.dmatrix("m")
    np.testing.assert_allclose(run([m], at.var(m, axis, ddof=ddof), M), np.var(M, axis, ddof=ddof))
    # Aesara's corrected two-pass variance equals the plain one up to rounding.
    np.testing.assert_allclose(run([m], at.var(m, axis, ddof=ddof, corrected=True), M),
                               np.var(M, axis, ddof=ddof))
    np.testing.assert_allclose(run([m], at.std(m, axis, ddof=ddof, keepdims=True), M),
                               np.std(M, axis, ddof=ddof, keepdims=True))


def test_products(server):
    a, b = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(4, 3, 2))
    x, y = at.dtensor3("x"), at.dtensor3("y")
    np.testing.assert_allclose(run([x, y], nnet.tensordot(x, y, 1), a, b),
                               np.tensordot(a, b, 1))
    np.testing.assert_allclose(run([x, y], at.tensordot(x, y, [[1, 2], [1, 0]]), a, b),
                               np.tensordot(a, b, [[1, 2], [1, 0]]))
    np.testing.assert_allclose(run([x], at.dot(2.0, x), a), 2.0 * a)  # a scalar scales
    c = RNG.normal(size=(2, 4, 5))
    np.testing.assert_allclose(run([x, y], at.dot(x, y), a, c), np.dot(a, c))
    np.testing.assert_allclose(run([x, y], at.matmul(x, y), a, c), np.matmul(a, c))
    with pytest.raises(ValueError, match="differ in length"):
        at.tensordot(x, y, [[0, 1], [0]])


def test_relu_take_and_shapes(server):
    v, m, i = at.dvector("v"), at.dmatrix("m"), at.lvector("i")
    np.testing.assert_array_equal(run([v], at.relu(v), V), np.maximum(V, 0))
    np.testing.assert_allclose(run([v], nnet.relu(v, 0.1), V), np.where(V > 0, V, 0.1 * V))
    idx = [2, 0, -1, 2]
    np.testing.assert_array_equal(run([m, i], subtensor.take(m, i, 0), M, idx), np.take(M, idx, 0))
    np.testing.assert_array_equal(run([m, i], at.take(m, i, axis=1), M, idx), np.take(M, idx, 1))
    np.testing.assert_array_equal(run([m, i], at.take(m, i, axis=None), M, idx), np.take(M, idx))
    # Indices of any rank, a scalar index included, as numpy.take.
    grid = np.array([[0, 2], [1, -1]])
    np.testing.assert_array_equal(run([m], at.take(m, grid, axis=1), M), np.take(M, grid, 1))
    np.testing.assert_array_equal(run([m], at.take(m, 1, axis=0), M), np.take(M, 1, 0))
    assert at.shape_padright(v, 2).type.shape == (None, 1, 1)
    assert shape_padleft(v).type.shape == (1, None)
    assert at.shape_padaxis(m, 1).type.shape == (None, 1, None)
    assert at.expand_dims(v, (0, -1)).type.shape == (1, None, 1)
    assert at.squeeze(at.tensor("float64", (1, None, 1))).type.shape == (None,)
    with pytest.raises(ValueError, match="not known to have length 1"):
        at.squeeze(m, 0)


def test_specify_shape_is_checked_at_run_time(server):
    m = at.dmatrix("m")
    s = at.specify_shape(m, (3, None))
    assert s.type.shape == (3, None)
    np.testing.assert_array_equal(run([m], s * 1.0, M), M)
    with pytest.raises(kiln.KilnError):
        run([m], s * 1.0, M.T)


def test_joining_and_grids(server):
    a, b, c, d = at.scalars("abcd")
    np.testing.assert_array_equal(run([a, b, c, d], at.stacklists([[a, b], [c, d]]), 1, 2, 3, 4),
                                  [[1, 2], [3, 4]])
    v, w = at.dvectors("vw")
    np.testing.assert_array_equal(run([v, w], at.stack(v, w), V, V), np.stack([V, V]))
    np.testing.assert_array_equal(run([v, w], at.join(0, v, w), V, V), np.concatenate([V, V]))
    np.testing.assert_array_equal(run([v, w], at.concatenate([v, w], axis=-1), V, V),
                                  np.concatenate([V, V]))
    for got, want in zip(at.mgrid[0:5, 1:7:2], np.mgrid[0:5, 1:7:2]):
        np.testing.assert_array_equal(got.eval(), want)
    for got, want in zip(at.ogrid[0:3, 0:4], np.ogrid[0:3, 0:4]):
        np.testing.assert_array_equal(got.eval(), want)
    np.testing.assert_array_equal(at.mgrid[1:7:2].eval(), np.mgrid[1:7:2])  # one range: itself


def test_eval_caches_one_function_per_set_of_inputs(server):
    x, y = at.dscalars("x", "y")
    z = x + y
    assert z.eval({x: 16.3, y: 12.1}) == pytest.approx(28.4)
    assert z.eval({x: 1.0, y: 2.0}) == 3.0
    assert z.eval({y: 2.0, x: 1.0}) == 3.0  # the same inputs in another order
    assert len(z._eval_functions) == 1
    assert at.constant(2.0).eval() == 2.0


def test_gradient_only_ops(server):
    x = at.dvector("x")
    g = kiln.gradient
    np.testing.assert_array_equal(run([x], kiln.grad(at.sum(g.zero_grad(x) * x), x), V), V)
    clipped = kiln.grad(at.sum(g.grad_clip(x, -0.5, 0.5) * 3.0), x)
    np.testing.assert_array_equal(run([x], clipped, V), np.full(5, 0.5))
    np.testing.assert_array_equal(run([x], kiln.grad(at.sum(g.grad_scale(x, 2.0)), x), V),
                                  np.full(5, 2.0))
    # Each Python name maps to core's mode (the wire carries its number).
    names = {g.consider_constant: "ConsiderConstant", g.zero_grad: "ZeroGrad",
             g.undefined_grad: "UndefinedGrad", g.disconnected_grad: "DisconnectedGrad"}
    for fn, name in names.items():
        assert str(fn(x).owner.op) == name
    assert str(g.grad_clip(x, -1.0, 1.0).owner.op) == \
        "GradClip{clip_lower_bound=-1.0, clip_upper_bound=1.0}"
    assert str(g.grad_scale(x, 2.0).owner.op) == "GradScale{multiplier=2.0}"


def test_constructors_are_types_and_plurals_follow_aesara():
    assert at.dmatrix("x").type is at.dmatrix
    assert str(at.dscalar) == "TensorType(float64, ())"
    assert [v.name for v in at.scalars("abcd")] == ["a", "b", "c", "d"]
    assert [v.name for v in at.dmatrices("a", "b")] == ["a", "b"]
    assert at.dvectors("x").name == "x"
    assert len(at.fscalars(3)) == 3
    assert at.matrices("ab", dtype="int32")[1].type == TensorType("int32", (None, None))
    assert (at.dmatrix() * 2.0).owner.op.name == "Elemwise{mul,no_inplace}"


def test_tensor_type_relations():
    v1, v2 = TensorType("float64", (2, None))(), TensorType("float64", (2, 1))()
    assert not v1.type.in_same_class(v2.type)
    assert v1.type.is_super(v2.type) and not v2.type.is_super(v1.type)
    assert v1.type.filter_variable(v2) is v2
    assert str(v2.type.filter_variable(v1).owner.op) == "SpecifyShape"
    assert v1.type.clone(dtype="float32") == TensorType("float32", (2, None))
    assert v1.type.clone(shape=(None, 3)) == TensorType("float64", (None, 3))
    with pytest.raises(TypeError, match="Cannot convert"):
        TensorType("int32", (2, 1)).filter_variable(v1)


def test_floatx_float32_end_to_end(server):
    old = kiln.config.floatX
    kiln.config.floatX = "float32"
    try:
        x = at.matrix("x")
        y = x * 1.1 + at.zeros((3, 4)) + at.arange(4.0)
        assert x.dtype == "float32" and y.dtype == "float32"
        assert at.constant(0.1).dtype == "float32"
        out = kiln.function([x], y)(M.astype("float32"))
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, M.astype("float32") * np.float32(1.1) + np.arange(4.0),
                                   rtol=1e-6)
    finally:
        kiln.config.floatX = old
    assert at.matrix().dtype == "float64" and at.constant(0.1).dtype == "float64"


# (value, the dtype Aesara 2.9.4 gives as_tensor_variable(value) and constant(value) with floatX
# float64, printed by Aesara itself): a NumPy scalar or 0-d array keeps its dtype, np.float64
# included although it is a Python float; Python scalars are autocast.
AESARA_CONSTANT_DTYPES = [
    (np.float64(0), "float64"), (np.float32(0), "float32"), (np.float16(1), "float16"),
    (np.int8(1), "int8"), (np.int16(1), "int16"), (np.int32(1), "int32"), (np.int64(1), "int64"),
    (np.uint8(1), "uint8"), (np.uint16(1), "uint16"), (np.uint32(1), "uint32"),
    (np.uint64(1), "uint64"), (np.bool_(True), "bool"), (np.complex64(1), "complex64"),
    (np.complex128(1), "complex128"), (np.array(0.5), "float64"),
    (np.array(1, dtype="int32"), "int32"), (0.5, "float32"), (0.1, "float64"), (1, "int8"),
    (300, "int16"), (1j, "complex128")]


@pytest.mark.parametrize("value,dtype", AESARA_CONSTANT_DTYPES,
                         ids=[repr(v) + ":" + d for v, d in AESARA_CONSTANT_DTYPES])
def test_numpy_scalars_keep_their_dtype(value, dtype):
    assert at.as_tensor_variable(value).dtype == dtype
    assert at.constant(value).dtype == dtype
    assert at.constant(value).data.dtype == np.dtype(dtype)


def test_numpy_scalars_keep_their_dtype_in_expressions():
    """As Aesara (floatX float64 or float32 alike): an operand from NumPy keeps its dtype on
    either side of an operator (NumPy's operators defer to the variable's)."""
    x = at.fvector("x")
    for expr in (x * np.float64(2), np.float64(2) * x, np.int64(1) + x, x + np.int64(1),
                 np.array(2.0) * x, np.ones(3) + x, at.switch(x > 0, x, np.float64(0)),
                 at.maximum(x, np.float64(0)), at.full((2,), np.float64(1)),
                 at.alloc(np.float64(1), 3)):
        assert expr.dtype == "float64", expr
    assert (np.float32(2) * x).dtype == "float32" and (x * 2.0).dtype == "float32"
    assert (np.ones(3) + x).type.shape == (3,)
    assert (np.float64(1) < x).dtype == "bool"
    old = kiln.config.floatX
    kiln.config.floatX = "float32"
    try:  # Aesara passes a NumPy scalar through before it casts Python floats to floatX
        assert at.as_tensor_variable(np.float64(0.1)).dtype == "float64"
        assert at.as_tensor_variable(0.1).dtype == "float32"
    finally:
        kiln.config.floatX = old
