"""kiln.tensor.extra_ops (Aesara's aesara.tensor.extra_ops): cumsum, cumprod, repeat,
fill_diagonal, split and squeeze, and NumPy's array functions Aesara has here (searchsorted,
bincount, unique, (un)ravel_index, broadcast_to, linspace... from kiln.tensor.array_funcs)."""
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


# Aesara's names for the same ops, and functions Aesara builds from others.
from kiln.ops import CumOp, FillDiagonal, Repeat  # noqa: E402,F401,F811
from kiln.tensor.basic import get_vector_length  # noqa: E402,F401
from kiln.tensor.exceptions import NotScalarConstantError  # noqa: E402,F401
from kiln.tensor.subtensor import set_subtensor  # noqa: E402,F401

__all__ += ["diff", "to_one_hot", "compress", "ravel_multi_index", "CumOp", "Repeat",
            "FillDiagonal"]


def diff(x, n=1, axis=-1):
    """numpy.diff: the n-th differences along the axis."""
    x = as_tensor_variable(x)
    axis %= x.ndim
    before = (slice(None),) * axis
    for _ in range(n):
        x = x[before + (slice(1, None),)] - x[before + (slice(None, -1),)]
    return x


def to_one_hot(y, nb_class, dtype=None):
    """A matrix with a row per entry of the integer vector y, 1 in column y[i], else 0."""
    from kiln.tensor.basic import ELEMWISE, cast, floatx
    from kiln.tensor.build import arange
    y = as_tensor_variable(y)
    return cast(ELEMWISE["eq"](y.dimshuffle(0, "x"), arange(nb_class).dimshuffle("x", 0)),
                dtype or floatx())


def compress(condition, x, axis=None):
    """numpy.compress: the entries (or slices along axis) of x where condition is true."""
    from kiln.tensor.basic import flatten
    from kiln.tensor.indexing import nonzero
    x = as_tensor_variable(x)
    indices = nonzero(flatten(as_tensor_variable(condition)))[0]
    if axis is None:
        return flatten(x)[indices]
    return x[(slice(None),) * (axis % x.ndim) + (indices,)]


# NumPy's array functions Aesara has here (kiln.tensor.array_funcs), and their op classes.
from kiln.tensor.array_funcs import (bincount, broadcast_arrays,  # noqa: E402,F401
                                     broadcast_shape, broadcast_to, fill_diagonal_offset,
                                     geomspace, linspace, logspace, ravel_multi_index,
                                     searchsorted, unique, unravel_index)
from kiln.ops import (BroadcastTo, FillDiagonalOffset, RavelMultiIndex,  # noqa: E402,F401
                      SearchsortedOp, Unique, UnravelIndex)

from kiln.ops import Bartlett, CpuContiguous  # noqa: E402
from kiln.tensor.array_funcs import broadcast_shape as _broadcast_shape  # noqa: E402

fill_diagonal_ = FillDiagonal()  # Aesara's op instances
fill_diagonal_offset_ = FillDiagonalOffset()
broadcast_to_ = BroadcastTo()
bartlett_ = Bartlett()
cpu_contiguous = CpuContiguous()


def bartlett(M):
    """numpy.bartlett(M): the float64 triangular window of max(M, 0) points (M an integer
    scalar)."""
    return bartlett_(M)


def broadcast_shape_iter(arrays, arrays_are_shapes=False):
    """broadcast_shape of the arrays (or shapes) an iterable gives."""
    return _broadcast_shape(*list(arrays), arrays_are_shapes=arrays_are_shapes)


def CumsumOp(axis=None):  # noqa: N802  (Aesara's deprecated class, which makes a CumOp)
    """Aesara's CumsumOp(axis): CumOp(axis, mode='add')."""
    return CumOp(axis=axis, mode="add")


def CumprodOp(axis=None):  # noqa: N802
    """Aesara's CumprodOp(axis): CumOp(axis, mode='mul')."""
    return CumOp(axis=axis, mode="mul")

__all__ += ["searchsorted", "bincount", "fill_diagonal_offset", "unique", "unravel_index",
            "broadcast_shape", "broadcast_to", "geomspace", "logspace", "linspace",
            "broadcast_arrays", "SearchsortedOp", "Unique", "UnravelIndex", "RavelMultiIndex",
            "FillDiagonalOffset", "BroadcastTo", "bartlett", "Bartlett", "CpuContiguous",
            "cpu_contiguous", "broadcast_shape_iter"]
