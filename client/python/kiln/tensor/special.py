"""kiln.tensor.special: softmax and friends, as aesara.tensor.special."""
from kiln.tensor.basic import as_tensor_variable, softmax  # noqa: F401
from kiln.tensor.basic import ELEMWISE

sigmoid = ELEMWISE["sigmoid"]
softplus = ELEMWISE["softplus"]


def log_softmax(x, axis=-1):
    """log(softmax(x)) computed stably (the server rewrites it to LogSoftmax)."""
    return ELEMWISE["log"](softmax(x, axis))


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))), stabilized by the server's rewrites."""
    from kiln.tensor.basic import sum
    return ELEMWISE["log"](sum(ELEMWISE["exp"](as_tensor_variable(x)), axis, keepdims))
