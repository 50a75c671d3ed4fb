"""Aesara's RandomStream: each call of a distribution gets a generator of its own, seeded from the
stream's seed, whose default update is the draw's next state."""
import functools

import numpy as np

from kiln.tensor.random import basic
from kiln.tensor.random.var import (RandomGeneratorSharedVariable, RandomStateSharedVariable,
                                    fresh_seed, state_for)

__all__ = ["RandomStream"]


class RandomStream:
    """srng = RandomStream(seed); srng.normal(0, 1, size=(2,)): draws that change at each call
    of a function, reproducible for the seed. Every distribution of the namespaces (Aesara's
    aesara.tensor.random.basic by default) is a method. rng_ctor np.random.RandomState makes
    RandomState generators (randint's), np.random.default_rng (the default) Generator ones."""

    def __init__(self, seed=None, namespace=None, rng_ctor=np.random.default_rng):
        if namespace is None:
            self.namespaces = [basic]
        else:
            self.namespaces = [namespace]
        self.default_instance_seed = seed
        self.state_updates = []
        self.gen_seedgen = np.random.SeedSequence(seed)
        if isinstance(rng_ctor, type) and issubclass(rng_ctor, np.random.RandomState):
            rng_ctor = np.random.RandomState
        elif rng_ctor is not np.random.RandomState:
            rng_ctor = np.random.default_rng
        self.rng_ctor = rng_ctor
        self._seed = fresh_seed() if seed is None else seed

    def __getattr__(self, name):
        for ns in self.__dict__.get("namespaces", ()):
            fn = getattr(ns, name, None)
            if getattr(fn, "is_random_variable", False):
                call = functools.partial(self.gen, fn)
                setattr(self, name, call)
                return call
        raise AttributeError("No attribute %s." % name)

    def updates(self):
        """(generator, next state) of every draw made so far."""
        return list(self.state_updates)

    def seed(self, seed=None):
        """Re-seeds every generator made so far, as a new RandomStream(seed) would have."""
        if seed is None:
            seed = self.default_instance_seed
        self.gen_seedgen = np.random.SeedSequence(seed)
        self._seed = fresh_seed() if seed is None else seed
        for k, (rng, _) in enumerate(self.state_updates):
            rng.set_value(state_for(self._seed, k))

    def gen(self, op, *args, **kwargs):
        """op(*args, **kwargs) on a new generator of this stream, updated by default."""
        if "rng" in kwargs:
            raise ValueError("The `rng` option cannot be used with a `RandomStream`")
        shared = (RandomStateSharedVariable if self.rng_ctor is np.random.RandomState
                  else RandomGeneratorSharedVariable)
        rng = shared(state_for(self._seed, len(self.state_updates)))
        out = op(*args, rng=rng, **kwargs)
        new_rng = out.owner.outputs[0]
        self.state_updates.append((rng, new_rng))
        rng.default_update = new_rng
        return out
