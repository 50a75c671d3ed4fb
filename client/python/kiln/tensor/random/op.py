"""aesara.tensor.random.op: RandomVariable, all_dtypes, and the generator makers default_rng and
RandomState. A generator here is core's Philox state (a uint64 [key, counter]); a maker called
with a constant seed gives that seed's state as a constant, which draws read and never update
(as Aesara's DefaultGeneratorMakerOp output, which no update follows)."""
import numpy as np

from kiln.tensor.basic import constant
from kiln.tensor.random.basic import ALL_DTYPES, RandomVariable
from kiln.tensor.random.var import fresh_seed, state_for

__all__ = ["RandomVariable", "all_dtypes", "default_rng", "RandomState",
           "DefaultGeneratorMakerOp", "RandomStateConstructor", "AbstractRNGConstructor"]

all_dtypes = list(ALL_DTYPES)


class AbstractRNGConstructor:
    """maker(seed): a generator of this kind for a constant seed (None: a fresh one)."""

    random_state = None

    def __call__(self, seed=None):
        if seed is None:
            seed = fresh_seed()
        elif hasattr(seed, "type") and not hasattr(seed, "data"):
            raise NotImplementedError(
                "kiln: %s takes a constant seed (an int), not the variable %s"
                % (type(self).__name__, seed))
        seed = int(np.asarray(getattr(seed, "data", seed)))
        rng = constant(state_for(seed))
        rng.is_random_state = self.random_state
        return rng

    def __str__(self):
        return type(self).__name__


class DefaultGeneratorMakerOp(AbstractRNGConstructor):
    """default_rng(seed): a NumPy Generator's (integers takes it, randint refuses it)."""

    random_state = False


class RandomStateConstructor(AbstractRNGConstructor):
    """RandomState(seed): a NumPy RandomState's (randint takes it, integers refuses it)."""

    random_state = True


default_rng = DefaultGeneratorMakerOp()
RandomState = RandomStateConstructor()
