"""Aesara's array functions of aesara.tensor.basic, built as Aesara builds them: tri (Tri),
tril and triu (a product with tri), diag (AllocDiag or ExtractDiag), identity_like, roll (two
slices joined), horizontal_stack, vertical_stack, flatnonzero and nonzero_values (through
Nonzero). They live at Aesara's paths, kiln.tensor.basic and kiln.tensor."""
import numpy as np

from kiln.ops import AllocDiag, ExtractDiag, Tri
from kiln.tensor.basic import as_tensor_variable, constant, flatten, floatx
from kiln.tensor.build import concatenate, eye
from kiln.tensor.indexing import nonzero

__all__ = ["tri", "tril", "triu", "diag", "identity_like", "roll", "horizontal_stack",
           "vertical_stack", "flatnonzero", "nonzero_values"]


def tri(N, M=None, k=0, dtype=None):
    """An N x M array with ones at and below the k-th diagonal, zeros elsewhere (Tri)."""
    if M is None:
        M = N
    return Tri(np.dtype(dtype or floatx()).name)(N, M, k)


def tril(m, k=0):
    """m with the entries above the k-th diagonal zeroed (of its last two dims)."""
    m = as_tensor_variable(m)
    return m * tri(m.shape[-2], m.shape[-1], k=k, dtype=m.dtype)


def triu(m, k=0):
    """m with the entries below the k-th diagonal zeroed (of its last two dims)."""
    m = as_tensor_variable(m)
    return m * (constant(1, dtype=m.dtype) - tri(m.shape[-2], m.shape[-1], k=k - 1,
                                                 dtype=m.dtype))


def diag(v, k=0):
    """numpy.diag: a vector's square matrix with it on the k-th diagonal (AllocDiag), or the
    k-th diagonal of two dims or more (ExtractDiag)."""
    v = as_tensor_variable(v)
    if v.ndim == 1:
        return AllocDiag(k, 0, 1)(v)
    if v.ndim >= 2:
        return ExtractDiag(k, 0, 1, False)(v)
    raise ValueError("Number of dimensions of `v` must be greater than one.")


def identity_like(x, dtype=None):
    """The identity matrix of x's shape."""
    x = as_tensor_variable(x)
    return eye(x.shape[0], x.shape[1], k=0, dtype=dtype or x.dtype)


def roll(x, shift, axis=None):
    """numpy.roll: x's entries shifted by shift along axis (of the flattened x when None)."""
    x = as_tensor_variable(x)
    if axis is None:
        if x.ndim > 1:
            return roll(flatten(x), shift, 0).reshape(x.shape, ndim=x.ndim)
        axis = 0
    axis %= x.ndim
    shift = as_tensor_variable(shift) % x.shape[axis]
    before = (slice(None),) * axis
    return concatenate([x[before + (slice(-shift, None),)],
                        x[before + (slice(0, -shift),)]], axis=axis)


def horizontal_stack(*args):
    """The matrices joined along axis 1."""
    return concatenate(args, axis=1)


def vertical_stack(*args):
    """The matrices joined along axis 0."""
    return concatenate(args, axis=0)


def flatnonzero(a):
    """The indices of a's nonzero entries in the flattened a."""
    return nonzero(flatten(as_tensor_variable(a)))[0]


def nonzero_values(a):
    """a's nonzero entries, flattened."""
    a = flatten(as_tensor_variable(a))
    return a[flatnonzero(a)]
