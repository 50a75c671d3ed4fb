"""kiln.tensor.math: Aesara's aesara.tensor.math names: the elementwise functions of core's
scalar ops, the reductions and the products, and the functions Aesara builds from them."""
from kiln.ops import Argmax, CAReduce, Dot, MatMul, MaxAndArgmax  # noqa: F401
from kiln.tensor.basic import ELEMWISE, MATH_ELEMWISE, add, as_tensor_variable, cast, clip, mul  # noqa: F401
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
