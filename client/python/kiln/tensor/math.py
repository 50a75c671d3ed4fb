"""kiln.tensor.math: Aesara's aesara.tensor.math names: the elementwise functions of core's
scalar ops, the reductions and the products, and the functions Aesara builds from them."""
from kiln.ops import Argmax, CAReduce, Dot, MatMul, MaxAndArgmax  # noqa: F401
from kiln.tensor.basic import ELEMWISE, MATH_ELEMWISE, add, as_tensor_variable, cast, clip, mul  # noqa: F401
from kiln.tensor.basic import _elemwise
from kiln.tensor.elemwise import Elemwise  # noqa: F401
from kiln.tensor.nnet.basic import dot, matmul, outer, tensordot  # noqa: F401
from kiln.tensor.reduce import (all, any, argmax, argmin, max, mean, min, prod, std,  # noqa
                                sum, var)

globals().update(MATH_ELEMWISE)
from kiln.tensor.special import logsumexp  # noqa: E402,F401
from kiln.tensor import round  # noqa: E402,F401

abs_ = ELEMWISE["abs"]
true_div = divide = ELEMWISE["true_divide"]
int_div = floor_div = ELEMWISE["floor_divide"]
power = ELEMWISE["pow"]
square = ELEMWISE["sqr"]
digamma = ELEMWISE["psi"]
expit = ELEMWISE["sigmoid"]
bitwise_and = ELEMWISE["and_"]
bitwise_or = ELEMWISE["or_"]
bitwise_xor = ELEMWISE["xor"]
bitwise_not = ELEMWISE["invert"]
conjugate = ELEMWISE["conj"]
dense_dot = dot


def inv(x):
    """1 / x (Aesara's deprecated spelling of reciprocal)."""
    return ELEMWISE["reciprocal"](x)


def iround(a, mode=None):
    """round(a) as int64."""
    return cast(round(a, mode), "int64")


def ceil_intdiv(a, b):
    """ceil(a / b) for integers: a // b, plus one where the division leaves a remainder."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    div = a // b
    return div + cast(ELEMWISE["neq"](a % b, 0), div.dtype)


def divmod(x, y):
    """(x // y, x % y)."""
    return x // y, x % y


def logaddexp(*xs):
    """log(sum(exp(x) for x in xs)), elementwise."""
    return ELEMWISE["log"](add(*[ELEMWISE["exp"](x) for x in xs]))


def log1pexp(x):
    """log(1 + exp(x)): softplus."""
    return ELEMWISE["softplus"](x)


# The special functions of three or more inputs (those of one or two come with MATH_ELEMWISE:
# gammainc, jv, tri_gamma...), and the ones PyTensor writes from other ops.
def betainc(a, b, x):
    """Elemwise{betainc}: the regularized incomplete beta function I_x(a, b)."""
    return _elemwise("betainc", a, b, x)


def betainc_der(a, b, x, wrt_a):
    """Elemwise{betainc_der}: d betainc / da (wrt_a True) or d / db (False)."""
    return _elemwise("betainc_der", a, b, x, wrt_a)


def betaincinv(a, b, y):
    """Elemwise{betaincinv}: the x with betainc(a, b, x) == y (PyTensor's)."""
    return _elemwise("betaincinv", a, b, y)


def hyp2f1(a, b, c, z):
    """Elemwise{hyp2f1}: the Gauss hypergeometric function 2F1(a, b; c; z)."""
    return _elemwise("hyp2f1", a, b, c, z)


def hyp2f1_der(a, b, c, z, wrt):
    """Elemwise{hyp2f1_der}: d hyp2f1 / da, db or dc for wrt = 0, 1 or 2."""
    return _elemwise("hyp2f1_der", a, b, c, z, wrt)


# betaln, logit, poch and kv: PyTensor writes them from other ops; kiln.tensor.composed writes
# them so that they stay accurate where PyTensor's formulas cancel or overflow.
from kiln.tensor.composed import betaln, kv, logit, poch  # noqa: E402,F401


def factorial(n):
    """gamma(n + 1) (PyTensor's)."""
    return ELEMWISE["gamma"](add(n, 1))


def largest(*args):
    """The elementwise maximum of the arguments."""
    out = args[0]
    for a in args[1:]:
        out = ELEMWISE["maximum"](out, a)
    return out


def smallest(*args):
    """The elementwise minimum of the arguments."""
    out = args[0]
    for a in args[1:]:
        out = ELEMWISE["minimum"](out, a)
    return out


def ptp(a, axis=None):
    """max - min along the axis (numpy.ptp)."""
    return max(a, axis) - min(a, axis)


def max_and_argmax(a, axis=None, keepdims=False):
    """(max(a, axis), argmax(a, axis))."""
    return max(a, axis, keepdims), argmax(a, axis, keepdims)


def isclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """numpy.isclose, elementwise: |a - b| <= atol + rtol |b|, infinities equal to themselves
    and NaN to NaN when equal_nan."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    absf, isnan, isinf = ELEMWISE["abs"], ELEMWISE["isnan"], ELEMWISE["isinf"]
    close = ELEMWISE["le"](absf(a - b), atol + rtol * absf(b))
    close = ELEMWISE["and_"](close, ELEMWISE["invert"](ELEMWISE["or_"](isinf(a), isinf(b))))
    close = ELEMWISE["or_"](close, ELEMWISE["and_"](ELEMWISE["eq"](a, b),
                                                    ELEMWISE["or_"](isinf(a), isinf(b))))
    if equal_nan:
        close = ELEMWISE["or_"](close, ELEMWISE["and_"](isnan(a), isnan(b)))
    return close


def allclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """Whether isclose holds everywhere."""
    return all(isclose(a, b, rtol, atol, equal_nan))


def _batched_product(x1, x2, dtype, x1_axis, x2_axis, out_axes):
    """matmul of x1 and x2 with a dim added to each at x1_axis/x2_axis (None: none), then the
    out_axes dropped and the result cast to dtype, if given."""
    from kiln.tensor.shape import expand_dims, squeeze
    x1, x2 = as_tensor_variable(x1), as_tensor_variable(x2)
    out = matmul(x1 if x1_axis is None else expand_dims(x1, x1_axis),
                 x2 if x2_axis is None else expand_dims(x2, x2_axis))
    out = squeeze(out, out_axes)
    return out if dtype is None else cast(out, dtype)


def vecdot(x1, x2, dtype=None):
    """PyTensor's vecdot (numpy.vecdot of real vectors): the dot product of the last axes, the
    other axes broadcast; x1 is not conjugated, as PyTensor's."""
    return _batched_product(x1, x2, dtype, -2, -1, (-2, -1))


def matvec(x1, x2, dtype=None):
    """PyTensor's matvec (numpy.matvec): matrices times vectors, batch dims broadcast."""
    return _batched_product(x1, x2, dtype, None, -1, -1)


def vecmat(x1, x2, dtype=None):
    """PyTensor's vecmat (numpy.vecmat of real vectors): vectors times matrices, batch dims
    broadcast."""
    return _batched_product(x1, x2, dtype, -2, None, -2)
