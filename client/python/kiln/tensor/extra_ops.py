"""kiln.tensor.extra_ops (Aesara's aesara.tensor.extra_ops): cumsum, cumprod, repeat,
fill_diagonal, split and squeeze."""
from kiln.ops import CumOp, FillDiagonal, Repeat, Split
from kiln.tensor.basic import as_tensor_variable, constant
from kiln.tensor.shape import squeeze  # noqa: F401  (aesara.tensor.extra_ops.squeeze)

__all__ = ["cumsum", "cumprod", "repeat", "fill_diagonal", "split", "squeeze"]


def _cum(mode, x, axis):
    x = as_tensor_variable(x)
    return CumOp(mode, None if axis is None else axis % max(1, x.ndim))(x)


def cumsum(x, axis=None):
    """numpy.cumsum: running sums along the axis (of the flattened x when axis is None)."""
    return _cum("add", x, axis)


def cumprod(x, axis=None):
    """numpy.cumprod: running products along the axis (of the flattened x when None)."""
    return _cum("mul", x, axis)


def repeat(x, repeats, axis=None):
    """numpy.repeat: each element of x `repeats` times along the axis (flattened when None)."""
    x = as_tensor_variable(x)
    return Repeat(None if axis is None else axis % x.ndim)(x, repeats)


def fill_diagonal(a, val):
    """numpy.fill_diagonal on a copy: a with a[i, ..., i] set to the scalar val (core casts val)."""
    return FillDiagonal()(a, val)


def split(x, splits_size, n_splits, axis=0):
    """Aesara's split: n_splits views of x along the axis, of the sizes in splits_size."""
    x = as_tensor_variable(x)
    sizes = as_tensor_variable(splits_size)
    out = Split(int(n_splits))(
        x, constant(axis % x.ndim, dtype="int64"), sizes)
    return out if isinstance(out, list) else [out]
