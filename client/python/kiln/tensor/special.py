"""kiln.tensor.special: softmax and friends, as aesara.tensor.special."""
from kiln.tensor.basic import ELEMWISE, as_tensor_variable
from kiln.tensor.nnet import log_softmax, softmax  # noqa: F401

sigmoid = ELEMWISE["sigmoid"]
softplus = ELEMWISE["softplus"]


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))), stabilized by the server's rewrites."""
    from kiln.tensor.reduce import sum
    return ELEMWISE["log"](sum(ELEMWISE["exp"](as_tensor_variable(x)), axis, keepdims))


# Aesara's op classes at this path (core's, kiln.ops).
from kiln.graph import Apply  # noqa: E402,F401
from kiln.ops import LogSoftmax, Softmax  # noqa: E402,F401


# The names Aesara's module has from aesara.tensor.math (poch and factorial among them), looked up
# when first used: kiln.tensor.math imports this module.
_FROM_MATH = ("factorial", "gamma", "neg", "poch", "sum")


def __getattr__(name):
    if name in _FROM_MATH:
        from kiln.tensor import math
        return getattr(math, name)
    raise AttributeError("module 'kiln.tensor.special' has no attribute %r" % name)
