"""kiln.tensor.xlogx (Aesara's aesara.tensor.xlogx): x log(x) and x log(y), 0 where x is 0."""
from kiln.tensor.basic import ELEMWISE, as_tensor_variable, switch

__all__ = ["xlogx", "xlogy0"]


def xlogx(x):
    """x log(x), 0 where x is 0."""
    x = as_tensor_variable(x)
    return switch(ELEMWISE["eq"](x, 0), 0 * x, x * ELEMWISE["log"](x))


def xlogy0(x, y):
    """x log(y), 0 where x is 0."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    return switch(ELEMWISE["eq"](x, 0), 0 * (x * y), x * ELEMWISE["log"](y))
