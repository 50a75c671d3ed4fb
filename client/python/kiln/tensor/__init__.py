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

# Aesara's spellings of some of the same functions.
abs_ = ELEMWISE["abs"]
sigmoid = ELEMWISE["sigmoid"]
softplus = ELEMWISE["softplus"]
true_divide = ELEMWISE["true_div"]
divide = ELEMWISE["true_div"]
floor_div = ELEMWISE["int_div"]
power = ELEMWISE["pow"]
exp = ELEMWISE["exp"]
log = ELEMWISE["log"]
neg = ELEMWISE["neg"]


def sub(x, y):
    return ELEMWISE["sub"](x, y)


def true_div(x, y):
    return ELEMWISE["true_div"](x, y)


def int_div(x, y):
    return ELEMWISE["int_div"](x, y)


def pow(x, y):
    return ELEMWISE["pow"](x, y)


def abs(x):
    return ELEMWISE["abs"](x)


def where(cond, ift, iff):
    return switch(cond, ift, iff)


def dscalars(*names):
    return [CONSTRUCTORS["dscalar"](n) for n in names]


def dvectors(*names):
    return [CONSTRUCTORS["dvector"](n) for n in names]


def dmatrices(*names):
    return [CONSTRUCTORS["dmatrix"](n) for n in names]


def scalars(*names):
    return [CONSTRUCTORS["scalar"](n) for n in names]


def vectors(*names):
    return [CONSTRUCTORS["vector"](n) for n in names]


def matrices(*names):
    return [CONSTRUCTORS["matrix"](n) for n in names]


from kiln.tensor import math, special  # noqa: E402,F401  (kt.math.sigmoid, kt.special.softmax)
