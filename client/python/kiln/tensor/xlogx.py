"""kiln.tensor.xlogx (Aesara's aesara.tensor.xlogx): x log(x) and x log(y), 0 where x is 0, as
core's scalar ops with Aesara's gradients (1 + log(x), so -inf at 0; log(y) and x / y)."""
from kiln.tensor.basic import ELEMWISE

__all__ = ["xlogx", "xlogy0"]

xlogx = ELEMWISE["xlogx"]
xlogx.__doc__ = "x log(x), 0 where x is 0 (an Elemwise named xlogx, as Aesara's)."
xlogy0 = ELEMWISE["xlogy0"]
xlogy0.__doc__ = "x log(y), 0 where x is 0 (an Elemwise named xlogy0, as Aesara's)."
