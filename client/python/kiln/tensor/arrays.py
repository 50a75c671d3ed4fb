"""Aesara's array functions that Kiln builds from its other ops, as Aesara builds several of
them: tri, tril, triu (a comparison of two aranges), diag, identity_like, roll (two slices
joined), horizontal_stack, vertical_stack, flatnonzero and nonzero_values (through Nonzero).
They live at Aesara's paths, kiln.tensor.basic and kiln.tensor."""
from kiln.tensor.basic import (ELEMWISE, as_tensor_variable, cast, dimshuffle, flatten,
                               floatx)
from kiln.tensor.build import arange, concatenate, eye
from kiln.tensor.elemwise import X
from kiln.tensor.indexing import nonzero

__all__ = ["tri", "tril", "triu", "diag", "identity_like", "roll", "horizontal_stack",
           "vertical_stack", "flatnonzero", "nonzero_values"]


def tri(N, M=None, k=0, dtype=None):
    """An N x M array with ones at and below the k-th diagonal, zeros elsewhere."""
    if M is None:
        M = N
    rows = dimshuffle(arange(N), [0, X])
    cols = dimshuffle(arange(M), [X, 0])
    return cast(ELEMWISE["ge"](rows + k, cols), dtype or floatx())


def tril(m, k=0):
    """m with the entries above the k-th diagonal zeroed (of its last two dims)."""
    m = as_tensor_variable(m)
    return m * tri(m.shape[-2], m.shape[-1], k=k, dtype=m.dtype)


def triu(m, k=0):
    """m with the entries below the k-th diagonal zeroed (of its last two dims)."""
    m = as_tensor_variable(m)
    return m * (1 - tri(m.shape[-2], m.shape[-1], k=k - 1, dtype=m.dtype))


def diag(v, k=0):
    """numpy.diag: a vector's square matrix with it on the k-th diagonal, or a matrix's k-th
    diagonal."""
    v = as_tensor_variable(v)
    if v.ndim == 1:
        if k == 0:
            return eye(v.shape[0], v.shape[0], 0, dtype=v.dtype) * dimshuffle(v, [X, 0])
        return _diag_offset(v, k)
    if v.ndim == 2:
        i = arange(ELEMWISE["maximum"](0, ELEMWISE["minimum"](
            v.shape[0] + min(k, 0), v.shape[1] - max(k, 0))))
        return v[i - min(k, 0), i + max(k, 0)]
    raise ValueError("Input must be 1- or 2-d.")


def _diag_offset(v, k):
    """The square matrix with v on the k-th (nonzero) diagonal."""
    from kiln.tensor.build import zeros
    from kiln.tensor.indexing import set_subtensor
    n = v.shape[0] + abs(k)
    i = arange(v.shape[0])
    out = zeros((n, n), dtype=v.dtype)
    return set_subtensor(out[i - min(k, 0), i + max(k, 0)], v)


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
