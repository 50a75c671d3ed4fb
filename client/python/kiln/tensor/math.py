"""kiln.tensor.math: Aesara's aesara.tensor.math names."""
from kiln.tensor.basic import ELEMWISE, argmax, dot, max, mean, min, prod, sum  # noqa: F401

globals().update(ELEMWISE)
