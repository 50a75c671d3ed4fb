"""Tensors built from others: Join (concatenate, stack) and Alloc, ARange, Eye (zeros, ones,
full, arange, eye)."""
import numpy as np

from kiln.ops import Alloc, ARange, Eye, Join
from kiln.tensor.basic import (MakeVector, as_tensor_variable, cast, constant, dimshuffle, floatx,
                               ones_like)
from kiln.tensor.elemwise import X, upcast
from kiln.tensor.variable import TensorVariable



def concatenate(tensors, axis=0):
    """The tensors joined along an existing axis (negative counts from the end)."""
    tensors = [as_tensor_variable(t) for t in tensors]
    if isinstance(axis, int) and tensors and tensors[0].ndim:
        axis %= tensors[0].ndim
    return Join()(constant(axis), *tensors)


def join(axis, *tensors_list):
    """Aesara's join: the tensors joined along `axis` (an int or an integer scalar variable)."""
    if len(tensors_list) == 1:
        return as_tensor_variable(tensors_list[0])
    return concatenate(tensors_list, axis)


def stack(*tensors, axis=0):
    """The tensors joined along a new axis: stack([a, b], axis) or, as older Aesara code
    writes it, stack(a, b, c)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    elif len(tensors) == 2 and isinstance(tensors[0], (list, tuple)):
        tensors, axis = tensors
    tensors = [as_tensor_variable(t) for t in tensors]
    if not tensors:
        raise ValueError("stack: no tensors to stack")
    nd = tensors[0].ndim
    if nd == 0 and axis in (0, -1):  # scalars: one MakeVector, as Aesara builds it
        dtype = upcast(*[t.dtype for t in tensors])
        return MakeVector(dtype)(*[cast(t, dtype) if t.dtype != dtype else t for t in tensors])
    axis = axis % (nd + 1)
    expanded = [dimshuffle(t, list(range(axis)) + [X] + list(range(axis, nd))) for t in tensors]
    return concatenate(expanded, axis)


def stacklists(arg):
    """Nested lists of tensors stacked into one tensor: stacklists([[a, b], [c, d]]) is a 2x2
    matrix of scalars a..d (or a 2x2 grid of whatever shape they have)."""
    if isinstance(arg, (list, tuple)):
        return stack([stacklists(a) for a in arg])
    return as_tensor_variable(arg)


class _Grid:
    """numpy.mgrid and numpy.ogrid over symbolic ranges: kt.mgrid[0:5, 0:3]."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, slices):
        if not isinstance(slices, tuple):  # one range: itself, as Aesara returns it
            return arange(slices.start or 0, slices.stop, slices.step or 1)
        ranges = [arange(s.start or 0, s.stop, s.step or 1) for s in slices]
        nd = len(ranges)
        grids = []
        for d, r in enumerate(ranges):
            g = dimshuffle(r, [X] * d + [0] + [X] * (nd - d - 1))
            if not self.sparse:  # times ones along every other axis
                for k in range(nd):
                    if k != d:
                        g = g * dimshuffle(ones_like(ranges[k]), [X] * k + [0] + [X] * (nd - k - 1))
            grids.append(g)
        return grids


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


# --- building ----------------------------------------------------------------------------------

def alloc(value, *shape):
    """value (a scalar or a tensor) broadcast to shape."""
    value = as_tensor_variable(value)
    return Alloc()(value, *shape)


def _filled(value, shape, dtype):
    if isinstance(shape, (int, np.integer)) or isinstance(shape, TensorVariable):
        shape = [shape]
    return alloc(constant(value, dtype=dtype or floatx()), *list(shape))


def zeros(shape, dtype=None):
    """A tensor of zeros of the given shape (ints or scalar variables)."""
    return _filled(0, shape, dtype)


def ones(shape, dtype=None):
    """A tensor of ones of the given shape."""
    return _filled(1, shape, dtype)


def full(shape, fill_value, dtype=None):
    """fill_value broadcast to shape."""
    value = as_tensor_variable(fill_value)
    return alloc(value if dtype is None else cast(value, dtype), *list(shape))


def arange(start, stop=None, step=1, dtype=None):
    """numpy.arange: int64 for integer bounds, else the bounds' upcast dtype, as Aesara
    (arange(4.0) is float32: 4.0 is a float32 constant)."""
    if stop is None:
        start, stop = 0, start
    args = [as_tensor_variable(a) for a in (start, stop, step)]
    if dtype is None:
        dtype = upcast(*[a.dtype for a in args])
        if np.dtype(dtype).kind in "biu":
            dtype = "int64"
    return ARange(dtype)(*args)


def eye(n, m=None, k=0, dtype=None):
    """An n x m matrix with ones on the k-th diagonal."""
    return Eye(dtype or floatx())(n, n if m is None else m, k)
