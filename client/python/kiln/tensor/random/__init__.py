"""kiln.tensor.random: Aesara's aesara.tensor.random. RandomStream(seed) and its distributions
(srng.normal(0, 1, size=(2,))), the RandomVariable ops core samples with Philox."""
from kiln.tensor.random import basic
from kiln.tensor.random.basic import *  # noqa: F401,F403 (the distributions, as Aesara's)
from kiln.tensor.random.utils import RandomStream
from kiln.tensor.random.var import RandomGeneratorSharedVariable
