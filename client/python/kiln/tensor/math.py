"""kiln.tensor.math: Aesara's aesara.tensor.math names."""
from kiln.tensor.basic import ELEMWISE
from kiln.tensor.nnet import dot  # noqa: F401
from kiln.tensor.reduce import argmax, max, mean, min, prod, sum  # noqa: F401

globals().update(ELEMWISE)
from kiln.tensor.special import logsumexp  # noqa: E402,F401
from kiln.tensor import round  # noqa: E402,F401
