"""kiln.tensor.shape (Aesara's aesara.tensor.shape): specify_shape, the padding of dims
(shape_padleft, shape_padright, shape_padaxis), squeeze and expand_dims."""
from kiln.ops import SpecifyShape
from kiln.tensor.basic import as_tensor_variable, constant, dimshuffle, reshape, shape, shape_i
from kiln.tensor.elemwise import X

__all__ = ["specify_shape", "shape_padleft", "shape_padright", "shape_padaxis", "squeeze",
           "expand_dims", "shape", "shape_i", "reshape"]


def specify_shape(x, shape):
    """x, checked at run time to have `shape` (ints, scalar variables, or None for a dim left
    unchecked); constant dims become static."""
    x = as_tensor_variable(x)
    if not isinstance(shape, (list, tuple)):
        shape = [shape]
    if len(shape) != x.ndim:
        raise ValueError("specify_shape: %s has %d dims but the shape %s has %d"
                         % (x, x.ndim, tuple(shape), len(shape)))
    dims = [constant(-1 if d is None else d) if not hasattr(d, "type") else d for d in shape]
    return SpecifyShape()(x, *dims)


def shape_padleft(t, n_ones=1):
    """t with n_ones broadcastable dims in front."""
    t = as_tensor_variable(t)
    return dimshuffle(t, [X] * n_ones + list(range(t.ndim)))


def shape_padright(t, n_ones=1):
    """t with n_ones broadcastable dims at the end."""
    t = as_tensor_variable(t)
    return dimshuffle(t, list(range(t.ndim)) + [X] * n_ones)


def shape_padaxis(t, axis):
    """t with a broadcastable dim inserted at `axis` (negative counts from the end)."""
    t = as_tensor_variable(t)
    if not -t.ndim - 1 <= axis <= t.ndim:
        raise IndexError("axis %d is out of bounds [-%d, %d)" % (axis, t.ndim + 1, t.ndim + 1))
    axis = axis % (t.ndim + 1)
    order = list(range(t.ndim))
    order.insert(axis, X)
    return dimshuffle(t, order)


def expand_dims(a, axis):
    """numpy.expand_dims: a broadcastable dim at each of the axes (of the result)."""
    a = as_tensor_variable(a)
    axes = [axis] if isinstance(axis, int) else list(axis)
    out_ndim = a.ndim + len(axes)
    axes = sorted(ax % out_ndim for ax in axes)
    for ax in axes:
        a = shape_padaxis(a, ax)
    return a


def squeeze(x, axis=None):
    """x without its broadcastable dims (or only those of `axis`, which must be
    broadcastable)."""
    x = as_tensor_variable(x)
    if axis is None:
        axes = [d for d, b in enumerate(x.broadcastable) if b]
    else:
        axes = [ax % x.ndim for ax in ([axis] if isinstance(axis, int) else axis)]
        for ax in axes:
            if not x.broadcastable[ax]:
                raise ValueError("squeeze: dim %d of %s is not known to have length 1"
                                 % (ax, x.type))
    return dimshuffle(x, [d for d in range(x.ndim) if d not in axes])


# Aesara's other names at this path: the shape ops (core's, kiln.ops) and the variables' classes.
from kiln.graph import Apply, Variable  # noqa: E402,F401
from kiln.ops import Reshape, Shape, Shape_i, SpecifyShape  # noqa: E402,F401
from kiln.tensor.basic import TensorType, get_vector_length  # noqa: E402,F401
from kiln.tensor.exceptions import NotScalarConstantError  # noqa: E402,F401
from kiln.tensor.variable import TensorConstant, TensorVariable  # noqa: E402,F401

__all__ += ["Reshape", "Shape", "Shape_i", "SpecifyShape", "shape_tuple"]


def shape_tuple(x):
    """x's shape as a tuple of scalars: a static dim as an int, another as x.shape[i]."""
    x = as_tensor_variable(x)
    return tuple(s if s is not None else shape_i(x, i) for i, s in enumerate(x.type.shape))
