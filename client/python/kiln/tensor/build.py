"""Tensors built from others: Join (concatenate, stack) and Alloc, ARange, Eye (zeros, ones,
full, arange, eye)."""
import builtins

import numpy as np

from kiln.graph import Op, apply_typed_by_core
from kiln.tensor.basic import FLOATX, as_tensor_variable, cast, constant, dimshuffle
from kiln.tensor.elemwise import X
from kiln.tensor.variable import TensorVariable



class Join(Op):
    """Tensors of one rank joined along an axis (its first input)."""

    __props__ = ()
    kind = "Join"

    def make_node(self, axis, *tensors):
        return apply_typed_by_core(self, [as_tensor_variable(a) for a in (axis,) + tensors])

    def wire_attrs(self):
        return []


def concatenate(tensors, axis=0):
    """The tensors joined along an existing axis."""
    tensors = [as_tensor_variable(t) for t in tensors]
    return Join()(constant(axis), *tensors)


def stack(tensors, axis=0):
    """The tensors joined along a new axis."""
    tensors = [as_tensor_variable(t) for t in tensors]
    nd = tensors[0].ndim
    axis = axis % (nd + 1)
    expanded = [dimshuffle(t, list(range(axis)) + [X] + list(range(axis, nd))) for t in tensors]
    return concatenate(expanded, axis)


# --- building ----------------------------------------------------------------------------------

class Alloc(Op):
    """value broadcast to the shape given by the scalar dims."""

    __props__ = ()
    kind = "Alloc"

    def make_node(self, value, *dims):
        return apply_typed_by_core(self, [as_tensor_variable(a) for a in (value,) + dims])

    def wire_attrs(self):
        return []


class _Build(Op):
    """ARange and Eye: tensors of a dtype made from three scalars."""

    __props__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def wire_attrs(self):
        return [("dtype", self.dtype)]


class ARange(_Build):
    """start, start + step, ... up to stop (excluded)."""

    kind = "ARange"

    def make_node(self, start, stop, step):
        return apply_typed_by_core(self, [as_tensor_variable(a) for a in (start, stop, step)])


class Eye(_Build):
    """An n x m matrix with ones on diagonal k."""

    kind = "Eye"

    def make_node(self, n, m, k):
        return apply_typed_by_core(self, [as_tensor_variable(a) for a in (n, m, k)])


def alloc(value, *shape):
    """value (a scalar or a tensor) broadcast to shape."""
    value = as_tensor_variable(value)
    return Alloc()(value, *shape)


def _filled(value, shape, dtype):
    if isinstance(shape, (int, np.integer)) or isinstance(shape, TensorVariable):
        shape = [shape]
    return alloc(constant(value, dtype=dtype or FLOATX), *list(shape))


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
    """numpy.arange: int64 for integer bounds, float64 otherwise."""
    if stop is None:
        start, stop = 0, start
    args = [as_tensor_variable(a) for a in (start, stop, step)]
    if dtype is None:
        dtype = "int64" if builtins.all(np.dtype(a.dtype).kind in "biu" for a in args) \
            else "float64"
    return ARange(dtype)(*args)


def eye(n, m=None, k=0, dtype=None):
    """An n x m matrix with ones on the k-th diagonal."""
    return Eye(dtype or FLOATX)(n, n if m is None else m, k)
