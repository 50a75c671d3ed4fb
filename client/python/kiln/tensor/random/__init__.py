"""kiln.tensor.random: Aesara's aesara.tensor.random. RandomStream(seed) and its distributions
(srng.normal(0, 1, size=(2,))), the RandomVariable ops core samples with Philox, and the
generator makers default_rng and RandomState."""
from kiln.tensor.random import basic, op, utils, var
from kiln.tensor.random.basic import *  # noqa: F401,F403 (the distributions, as Aesara's)
from kiln.tensor.random.op import RandomState, default_rng
from kiln.tensor.random.utils import RandomStream
from kiln.tensor.random.var import RandomGeneratorSharedVariable, RandomStateSharedVariable
