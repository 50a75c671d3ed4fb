"""kiln.tensor: Aesara's aesara.tensor over a Kiln server. Graphs are built and differentiated
here, by core, with Aesara's types and names; optimization and compilation happen on the
server."""
from kiln.graph import TensorType
from kiln.tensor.basic import (CONSTRUCTORS, ELEMWISE, MATH_ELEMWISE, add, as_tensor_variable,
                               cast, clip, constant, dimshuffle, fill, flatten, mul, ones_like,
                               reshape, shape, shape_i, switch, tensor, transpose, zeros_like)
from kiln.tensor.build import (alloc, arange, concatenate, eye, full, join, mgrid, ogrid, ones,
                               stack, stacklists, zeros)
from kiln.tensor.indexing import inc_subtensor, nonzero, set_subtensor
from kiln.tensor.nnet import dot, log_softmax, matmul, outer, relu, softmax, tensordot
from kiln.tensor.reduce import all, any, argmax, argmin, max, mean, min, prod, std, sum, var
from kiln.tensor.type import PLURALS
from kiln.tensor.variable import TensorConstant, TensorVariable

globals().update(CONSTRUCTORS)
globals().update(PLURALS)
globals().update(MATH_ELEMWISE)

# Aesara's other spellings of some of the same functions.
abs_ = ELEMWISE["abs"]
# (Aesara 2.9.4 names the scalar ops true_divide and floor_divide; true_div and int_div are its
# deprecated spellings.)
true_div = divide = ELEMWISE["true_divide"]
int_div = floor_div = ELEMWISE["floor_divide"]
power = ELEMWISE["pow"]


def round(a, mode=None):
    """Aesara's round: half to even (NumPy's rule) unless mode is "half_away_from_zero"."""
    if mode in (None, "half_to_even"):
        return ELEMWISE["round_half_to_even"](a)
    if mode == "half_away_from_zero":
        return ELEMWISE["round_half_away_from_zero"](a)
    raise ValueError("round mode %s is not implemented." % mode)


def where(cond, ift, iff):
    return switch(cond, ift, iff)


as_tensor = as_tensor_variable

# Aesara's module paths: kt.math.sigmoid, kt.extra_ops.cumsum... (kt.shape and kt.sort are the
# functions, as in Aesara; their modules are kiln.tensor.shape and kiln.tensor.sort by import.)
from kiln.tensor import (basic, extra_ops, math, nnet, shape, sort, special,  # noqa: E402,F401
                         subtensor, type)
from kiln.tensor.extra_ops import cumprod, cumsum, fill_diagonal, repeat, split  # noqa: E402,F401
from kiln.tensor.shape import (expand_dims, shape_padaxis, shape_padleft,  # noqa: E402,F401
                               shape_padright, specify_shape, squeeze)
from kiln.tensor.sort import argsort, sort  # noqa: E402,F401  (kt.sort: the function)
from kiln.tensor.subtensor import take  # noqa: E402,F401
from kiln.tensor.basic import shape  # noqa: E402,F401,F811  (kt.shape: the function)
from kiln.gradient import grad  # noqa: E402,F401  (aesara.tensor.grad, as the tutorials write it)
from kiln.tensor.special import logsumexp  # noqa: E402,F401

from kiln.tensor import random  # noqa: E402 (aesara.tensor.random: RandomStream and the distributions)

# Aesara's module tree under aesara.tensor, and the names aesara.tensor exports from it.
from kiln.tensor import (blas, elemwise, exceptions, nlinalg, signal,  # noqa: E402,F401
                         slinalg, xlogx)
from kiln.tensor import linalg  # noqa: E402,F401  (aesara.tensor.linalg: nlinalg + slinalg)
# kiln.tensor.var, loaded now: loading it later would make kt.var that module, not the function
# (rebound below).
__import__("kiln.tensor.var")
from kiln.graph import Constant, Op, Variable  # noqa: E402,F401
from kiln.tensor.arrays import (diag, flatnonzero, horizontal_stack,  # noqa: E402,F401
                                identity_like, nonzero_values, roll, tri, tril, triu,
                                vertical_stack)
from kiln.tensor.basic import (extract_constant, full_like,  # noqa: E402,F401
                               get_scalar_constant_value, get_vector_length, moveaxis, second,
                               swapaxes, tensor_copy)
from kiln.tensor.blas import batched_dot  # noqa: E402,F401
from kiln.tensor.extra_ops import diff, compress, ravel_multi_index  # noqa: E402,F401
from kiln.tensor.math import (allclose, bitwise_and, bitwise_not, bitwise_or,  # noqa: E402,F401
                              bitwise_xor, ceil_intdiv, conjugate, dense_dot, digamma, divmod,
                              expit, iround, isclose, largest, log1pexp, logaddexp,
                              max_and_argmax, matvec, ptp, smallest, square, vecdot, vecmat)
from kiln.tensor.math import (betainc, betainc_der, betaincinv, betaln,  # noqa: E402,F401
                              factorial, hyp2f1, hyp2f1_der, kv, logit, poch)
from kiln.tensor.reduce import var  # noqa: E402,F401,F811  (kt.var: the function, as Aesara's)
from kiln.gradient import consider_constant, hessian, jacobian  # noqa: E402,F401
# NumPy's array functions Aesara 2.9.4 exports here (kiln.tensor.array_funcs), topk (sort) and
# pad (PyTensor's: Aesara 2.9.4 has none).
from kiln.tensor.array_funcs import (atleast_1d, atleast_2d, atleast_3d,  # noqa: E402,F401
                                     bincount, broadcast_arrays, broadcast_shape, broadcast_to,
                                     choose, diagonal, fill_diagonal_offset, geomspace,
                                     linspace, logspace, searchsorted, take_along_axis, tile,
                                     unique, unravel_index, atleast_Nd, extract_diag,
                                     tril_indices, tril_indices_from, triu_indices,
                                     triu_indices_from)
from kiln.tensor.extra_ops import ravel_multi_index  # noqa: E402,F401,F811
from kiln.tensor.extra_ops import bartlett  # noqa: E402,F401
from kiln.tensor.sort import argtopk, topk, topk_and_argtopk  # noqa: E402,F401
from kiln.tensor import pad as _pad_module  # noqa: E402,F401
pad = _pad_module.pad
# PyTensor's Blockwise, vectorize and einsum (Aesara 2.9.4 has none of them).
from kiln.tensor import blockwise  # noqa: E402,F401
from kiln.tensor.einsum import einsum  # noqa: E402,F401
from kiln.tensor.functional import vectorize  # noqa: E402,F401
