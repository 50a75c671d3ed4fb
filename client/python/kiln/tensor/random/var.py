"""The generator state as a shared variable (Aesara's RandomGeneratorSharedVariable): a uint64
[key, counter] for core's Philox, which each draw advances."""
import copy

import numpy as np

from kiln.tensor.sharedvar import SharedVariable

_MASK = (1 << 64) - 1


def splitmix64(x):
    """SplitMix64's output for x: well-mixed keys from small seeds."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def state_for(seed, stream=0):
    """The state of stream `stream` of the seed: key mixed from both, counter 0."""
    seed = int(seed) & _MASK
    return np.array([splitmix64(splitmix64(seed) ^ splitmix64((stream + 0x632BE59BD9B4E019)
                                                             & _MASK)), 0], dtype=np.uint64)


def fresh_seed():
    return int.from_bytes(np.random.SeedSequence().generate_state(2, np.uint32).tobytes(), "little")


class RandomGeneratorSharedVariable(SharedVariable):
    """A generator's state in the session; prints as Aesara prints its generator variables."""

    def __init__(self, state, name=None):
        super().__init__(np.asarray(state, dtype=np.uint64), name=name, shape=(2,))

    def _twin_name(self):
        """dprint labels an unnamed generator with its str, as Aesara."""
        return self.name or str(self)

    def __str__(self):
        return self.name or "RandomGeneratorSharedVariable(<Generator(Philox) at 0x%X>)" % id(self)


class RandomStateSharedVariable(RandomGeneratorSharedVariable):
    """Aesara's RandomStateSharedVariable (a NumPy RandomState's): the same Philox state in core,
    flagged so that randint takes it and integers refuses it, as Aesara's types do."""

    is_random_state = True

    def __str__(self):
        return self.name or "RandomStateSharedVariable(<RandomState(MT19937) at 0x%X>)" % id(self)


RandomGeneratorSharedVariable.is_random_state = False


def shared_generator(value, name=None):
    """aesara.shared(numpy Generator or RandomState): a state seeded from a copy of it (it is not
    advanced); a RandomState's becomes a RandomStateSharedVariable."""
    if isinstance(value, np.random.RandomState):
        seed = int(copy.deepcopy(value).randint(0, 1 << 63, dtype=np.int64))
        return RandomStateSharedVariable(state_for(seed), name=name)
    seed = int(copy.deepcopy(value).integers(0, 1 << 63))
    return RandomGeneratorSharedVariable(state_for(seed), name=name)
