"""kiln.tensor: Aesara's aesara.tensor over a Kiln server. Graphs are built here, with
Aesara's types and names; optimization, differentiation and execution happen on the server."""
from kiln.graph import TensorType
from kiln.tensor.basic import (CONSTRUCTORS, ELEMWISE, add, as_tensor_variable, cast, clip,
                               constant, dimshuffle, fill, flatten, mul, ones_like, reshape, shape,
                               shape_i, switch, tensor, transpose, zeros_like)
from kiln.tensor.build import alloc, arange, concatenate, eye, full, ones, stack, zeros
from kiln.tensor.indexing import inc_subtensor, set_subtensor, subtensor
from kiln.tensor.nnet import dot, log_softmax, outer, softmax
from kiln.tensor.reduce import all, any, argmax, argmin, max, mean, min, prod, sum
from kiln.tensor.variable import TensorConstant, TensorVariable

globals().update(CONSTRUCTORS)
globals().update(ELEMWISE)

# Aesara's other spellings of some of the same functions.
abs_ = ELEMWISE["abs"]
true_divide = divide = ELEMWISE["true_div"]
floor_div = ELEMWISE["int_div"]
power = ELEMWISE["pow"]


def where(cond, ift, iff):
    return switch(cond, ift, iff)


def _plural(ctor):
    def make(*names):
        return [ctor(n) for n in names]
    return make


# dscalars("a", "b"), fmatrices(...), vectors(...): several variables at once.
_PLURALS = {"scalar": "scalars", "vector": "vectors", "row": "rows", "col": "cols",
            "matrix": "matrices"}
globals().update({name[:-len(kind)] + plural: _plural(ctor)
                  for name, ctor in CONSTRUCTORS.items()
                  for kind, plural in _PLURALS.items() if name.endswith(kind)})

from kiln.tensor import math, special  # noqa: E402,F401  (kt.math.sigmoid, kt.special.softmax)
from kiln.gradient import grad  # noqa: E402,F401  (aesara.tensor.grad, as the tutorials write it)
