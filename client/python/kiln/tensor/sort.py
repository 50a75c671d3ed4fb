"""kiln.tensor.sort (Aesara's aesara.tensor.sort): sort and argsort along an axis."""
from kiln import ops
from kiln.tensor.basic import as_tensor_variable, flatten

__all__ = ["sort", "argsort"]


def _along(kind, a, axis):
    a = as_tensor_variable(a)
    if axis is None:
        a, axis = flatten(a), 0
    return ops.op_class(kind)(axis % a.ndim)(a)


def sort(a, axis=-1, kind="quicksort", order=None):
    """numpy.sort along the axis (of the flattened a when axis is None)."""
    return _along("SortOp", a, axis)


def argsort(a, axis=-1, kind="quicksort", order=None):
    """numpy.argsort along the axis (of the flattened a when axis is None): int64 indices."""
    return _along("ArgSortOp", a, axis)


# Aesara's op classes at this path (core's, kiln.ops).
from kiln.graph import Apply, Constant, Op, TensorType  # noqa: E402,F401
from kiln.ops import ArgSortOp, SortOp  # noqa: E402,F401
