"""kiln.tensor.sort (Aesara's aesara.tensor.sort): sort, argsort and topk along an axis."""
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


# Aesara's top-k selection (TopKOp): the kth largest (kth > 0) or |kth| smallest (kth < 0)
# entries along an axis, with their indices.
__all__ += ["topk", "argtopk", "topk_and_argtopk", "TopKOp"]


def _topk(x, kth, axis, sorted, idx_dtype):
    """TopKOp's two outputs, Aesara's argument checks first."""
    if not isinstance(axis, (int, type(None))):
        raise TypeError('"axis" parameter must be integer, got "%s"' % type(axis))
    if sorted:
        raise NotImplementedError(
            "The sorted parameter is not yet implemented. Use sorted=False for now.")
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = flatten(x), 0
    return ops.TopKOp(axis=axis, sorted=False, idx_dtype=idx_dtype)(x, kth)


def topk(x, kth, axis=-1, sorted=True, idx_dtype="int64"):
    """The kth largest entries of x along the axis (the |kth| smallest for a negative kth; the
    flattened x when axis is None), in ascending order, one of NumPy's partition orders.
    Aesara 2.9.4 refuses sorted=True: pass sorted=False."""
    return _topk(x, kth, axis, sorted, idx_dtype)[0]


def argtopk(x, kth, axis=-1, sorted=True, idx_dtype="int64"):
    """The indices along the axis of topk's entries, in idx_dtype."""
    return _topk(x, kth, axis, sorted, idx_dtype)[1]


def topk_and_argtopk(x, kth, axis=-1, sorted=True, idx_dtype="int64"):
    """topk and argtopk from one TopKOp node: [values, indices]."""
    return _topk(x, kth, axis, sorted, idx_dtype)


from kiln.ops import TopKOp  # noqa: E402,F401
