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
