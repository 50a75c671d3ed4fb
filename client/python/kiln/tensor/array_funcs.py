"""NumPy's array functions as Aesara 2.9.4 has them, at Aesara's paths (kiln.tensor.extra_ops,
kiln.tensor.basic and kiln.tensor): the ones with an op of their own in core (searchsorted,
unique, unravel_index, ravel_multi_index, fill_diagonal_offset, broadcast_to, diagonal, choose)
and the ones Aesara composes from other ops, composed the same way here (bincount, linspace,
logspace, geomspace, broadcast_shape, broadcast_arrays, tile, take_along_axis, atleast_*)."""
from functools import partial

import numpy as np

from kiln.ops import (BroadcastTo, Choose, ExtractDiag, FillDiagonalOffset, RavelMultiIndex,
                      SearchsortedOp, Unique, UnravelIndex)
from kiln.tensor.basic import (ELEMWISE, as_tensor_variable, cast, constant, dimshuffle,
                               flatten, get_vector_length, reshape, switch)

__all__ = ["searchsorted", "bincount", "unique", "unravel_index", "ravel_multi_index",
           "fill_diagonal_offset", "broadcast_shape", "broadcast_to", "broadcast_arrays",
           "linspace", "logspace", "geomspace", "diagonal", "tile", "take_along_axis", "choose",
           "atleast_Nd", "atleast_1d", "atleast_2d", "atleast_3d", "tril_indices",
           "tril_indices_from", "triu_indices", "triu_indices_from", "extract_diag"]

_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _outputs(out):
    return out if isinstance(out, list) else [out]


# ---- aesara.tensor.extra_ops ------------------------------------------------------------------

def searchsorted(x, v, side="left", sorter=None):
    """numpy.searchsorted: the int64 indices where v's elements would go into the sorted vector
    x (sorted through the integer vector sorter when given) to keep it sorted."""
    if side not in ("left", "right"):
        raise ValueError("'%s' is an invalid value for keyword 'side'" % (side,))
    x = as_tensor_variable(x, ndim=1)
    v = as_tensor_variable(v)
    if sorter is None:
        return SearchsortedOp(side=side)(x, v)
    return SearchsortedOp(side=side)(x, v, as_tensor_variable(sorter, ndim=1))


def bincount(x, weights=None, minlength=None, assert_nonneg=False):
    """numpy.bincount, as Aesara builds it: zeros of length max(x) + 1 (at least minlength) in
    x's dtype (weights' when given), incremented at x by 1 (by the weights)."""
    from kiln.tensor.build import zeros
    from kiln.tensor.subtensor import advanced_inc_subtensor1
    x = as_tensor_variable(x)
    if x.ndim != 1:
        raise TypeError("Inputs must be of dimension 1.")
    if assert_nonneg:  # Aesara's check, which fails the call with its message
        from kiln.ops import Assert
        from kiln.tensor.reduce import all as at_all
        x = Assert("Input to bincount has negative values!")(x, at_all(ELEMWISE["ge"](x, 0)))
    max_value = cast(x.max() + 1, "int64")
    if minlength is not None:
        max_value = ELEMWISE["maximum"](max_value, minlength)
    if weights is None:
        return advanced_inc_subtensor1(zeros([max_value], dtype=x.dtype), 1, x)
    weights = as_tensor_variable(weights)
    return advanced_inc_subtensor1(zeros([max_value], dtype=weights.dtype), weights, x)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """numpy.unique: the sorted unique elements (or slices along axis) of ar, then the first
    indices, the inverse and the counts as asked (a list when more than one output)."""
    out = Unique(bool(return_index), bool(return_inverse), bool(return_counts), axis)(ar)
    return out


def unravel_index(indices, dims, order="C"):
    """numpy.unravel_index: a tuple of int64 coordinate tensors of the flat indices in an
    array of shape dims (a tuple or a vector of known length)."""
    if order not in ("C", "F"):
        raise ValueError("order must be 'C' or 'F', not %r" % (order,))
    return tuple(_outputs(UnravelIndex(order=order)(indices, as_tensor_variable(dims))))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """numpy.ravel_multi_index: the int64 flat indices of the coordinate tensors in an array of
    shape dims; mode says what an out-of-range coordinate does ('raise', 'wrap', 'clip')."""
    if not isinstance(multi_index, (tuple, list)):
        raise TypeError("multi_index must be a tuple or a list.")
    if mode not in ("raise", "wrap", "clip") or order not in ("C", "F"):
        raise ValueError("ravel_multi_index: mode must be 'raise', 'wrap' or 'clip' and order "
                         "'C' or 'F', not %r and %r" % (mode, order))
    args = tuple(multi_index) + (as_tensor_variable(dims),)
    return RavelMultiIndex(mode=mode, order=order)(*args)


def fill_diagonal_offset(a, val, offset):
    """A copy of the matrix a with its offset diagonal (above the main one when positive) set
    to the scalar val, never wrapping."""
    return FillDiagonalOffset()(a, val, offset)


def _shape_entries(shape):
    """The entries of a shape (a tuple of ints or scalars, or a vector of known length)."""
    if isinstance(shape, (list, tuple)):
        return [as_tensor_variable(s) for s in shape]
    shape = as_tensor_variable(shape)
    if shape.ndim == 0:
        return [shape]
    return [shape[i] for i in range(get_vector_length(shape))]


def broadcast_shape(*arrays, **kwargs):
    """The shape (a tuple of int64 scalars) the arrays broadcast to; with
    arrays_are_shapes=True the arguments are shapes."""
    arrays_are_shapes = kwargs.pop("arrays_are_shapes", False)
    if kwargs:
        raise TypeError("broadcast_shape: unexpected arguments %s" % sorted(kwargs))
    shapes = []
    for a in arrays:
        if arrays_are_shapes:
            shapes.append(list(a))
        else:
            a = as_tensor_variable(a)
            shapes.append([1 if s == 1 else a.shape[i] for i, s in enumerate(a.type.shape)])
    ndim = max([len(s) for s in shapes], default=0)
    out = []
    for d in range(ndim):
        dims = [s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0]
        dims = [x for x in dims if not (isinstance(x, (int, np.integer)) and x == 1)]
        if not dims:
            out.append(constant(1, dtype="int64"))
            continue
        known = [x for x in dims if isinstance(x, (int, np.integer))]
        if known:
            out.append(constant(int(known[0]), dtype="int64"))
            continue
        dim = cast(as_tensor_variable(dims[0]), "int64")
        for x in dims[1:]:
            # Equal wherever the arrays broadcast, except where one of them is 1 at run time.
            dim = ELEMWISE["maximum"](dim, cast(as_tensor_variable(x), "int64"))
        out.append(dim)
    return tuple(out)


def broadcast_to(x, shape):
    """numpy.broadcast_to: x repeated along the dims it lacks or has of size 1 (x itself when
    both are scalars). Kiln's result is a copy."""
    x = as_tensor_variable(x)
    entries = _shape_entries(shape)
    if x.ndim == 0 and not entries:
        return x
    return BroadcastTo()(x, *entries)


def broadcast_arrays(*args):
    """The arrays broadcast against each other."""
    shape = broadcast_shape(*args)
    return tuple(broadcast_to(a, shape) for a in args)


def linspace(start, end, steps):
    """`steps` values evenly spaced from start to end, both included (Aesara's
    start + arange(steps) * (end - start) / (steps - 1), vector ends giving columns)."""
    from kiln.tensor.build import arange
    from kiln.tensor.shape import shape_padright
    start = as_tensor_variable(start)
    end = as_tensor_variable(end)
    arr = shape_padright(arange(steps), max(start.ndim, end.ndim))
    multiplier = (end - start) / (steps - 1)
    return start + arr * multiplier


def logspace(start, end, steps, base=10.0):
    """base ** linspace(start, end, steps)."""
    return base ** linspace(as_tensor_variable(start), as_tensor_variable(end), steps)


def geomspace(start, end, steps, base=10.0):
    """Values from start to end evenly spaced on a log scale (Aesara's: base ** linspace of
    the logs to that base)."""
    log = ELEMWISE["log"]
    start = as_tensor_variable(start)
    end = as_tensor_variable(end)
    return base ** linspace(log(start) / log(base), log(end) / log(base), steps)


# ---- aesara.tensor.basic ----------------------------------------------------------------------

def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy.diagonal: a without axis1 and axis2, its diagonal along them as a last dim."""
    return ExtractDiag(offset, axis1, axis2, False)(a)


# Aesara's ExtractDiag() of the main diagonal.
extract_diag = ExtractDiag(0, 0, 1, False)


def tril_indices(n, k=0, m=None):
    """The row and column indices of the lower triangle of an n x m matrix (k-th diagonal
    included), from Tri's nonzero entries, as Aesara builds them."""
    from kiln.tensor.arrays import tri
    from kiln.tensor.indexing import nonzero
    return tuple(nonzero(tri(n, m, k, dtype="bool")))


def triu_indices(n, k=0, m=None):
    """The indices of the upper triangle of an n x m matrix (from the k-th diagonal)."""
    from kiln.tensor.arrays import tri
    from kiln.tensor.indexing import nonzero
    return tuple(nonzero(constant(1, dtype="int64") - tri(n, m, k - 1, dtype="int64")))


def tril_indices_from(a, k=0):
    """tril_indices of the matrix a's shape."""
    if a.ndim != 2:
        raise ValueError("The input array must be two dimensional.")
    return tril_indices(a.shape[0], k=k, m=a.shape[1])


def triu_indices_from(a, k=0):
    """triu_indices of the matrix a's shape."""
    if a.ndim != 2:
        raise ValueError("The input array must be two dimensional.")
    return triu_indices(a.shape[0], k=k, m=a.shape[1])


def tile(x, reps, ndim=None):
    """numpy.tile, as Aesara builds it: x allocated reps times along new leading dims, the
    dims interleaved and reshaped."""
    from kiln.tensor.build import alloc
    _x = as_tensor_variable(x)
    if ndim is not None and ndim < _x.ndim:
        raise ValueError("ndim should be equal or larger than _x.ndim")
    if not isinstance(reps, (list, tuple)):
        reps_t = as_tensor_variable(reps)
        if reps_t.dtype not in _INT_DTYPES + ("bool",):
            raise ValueError("elements of reps must be integer dtype")
        if reps_t.ndim == 0:
            reps = [reps_t]
        elif reps_t.ndim == 1:
            if ndim is None:
                raise ValueError("if reps is tensor.vector, you should specify the ndim")
            try:
                if get_vector_length(reps_t) > ndim:
                    raise ValueError("len(reps) should be equal or less than ndim")
            except ValueError as e:
                if "len(reps)" in str(e):
                    raise
            offset = ndim - reps_t.shape[0]
            reps = [switch(ELEMWISE["lt"](i, offset), 1, reps_t[i - offset])
                    for i in range(ndim)]
        else:
            raise ValueError("the dimension of reps should not exceed 1")
    else:
        if ndim is not None and len(reps) > ndim:
            raise ValueError("len(reps) should be equal or less than ndim")
        for r in reps:
            if not (isinstance(r, (int, np.integer))
                    or (hasattr(r, "dtype") and getattr(r, "ndim", 1) == 0
                        and str(r.dtype) in _INT_DTYPES + ("bool",))):
                raise ValueError("elements of reps must be scalars of integer dtype")
    reps = list(reps)
    if ndim is None:
        ndim = max(len(reps), _x.ndim)
    if len(reps) < ndim:
        reps = [1] * (ndim - len(reps)) + reps
    # (Static dims as ints, so that the reshape's type has them, as Aesara's constant folding
    # gives them.)
    _shape = [1] * (ndim - _x.ndim) + [s if s is not None else _x.shape[i]
                                       for i, s in enumerate(_x.type.shape)]
    y = alloc(_x, *(reps + _shape))
    shuffle = np.arange(ndim * 2).reshape(2, ndim).transpose().flatten()
    y = dimshuffle(y, [int(i) for i in shuffle])
    return reshape(y, [sh * reps[i] for i, sh in enumerate(_shape)])


def take_along_axis(arr, indices, axis=0):
    """numpy.take_along_axis: arr's entries at indices along the axis (of the flattened arr
    when None), matching the other dims; Aesara's fancy index of aranges and indices."""
    from kiln.tensor.build import arange
    arr = as_tensor_variable(arr)
    indices = as_tensor_variable(indices)
    if axis is None:
        arr, axis = flatten(arr), 0
    elif not -arr.ndim <= axis < arr.ndim:
        raise np.AxisError(axis, arr.ndim)
    axis %= arr.ndim
    if arr.ndim != indices.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if indices.dtype not in _INT_DTYPES:
        raise IndexError("`indices` must be an integer array")
    fancy = []
    for dim in range(arr.ndim):
        if dim == axis:
            fancy.append(indices)
        else:
            pattern = ["x"] * dim + [0] + ["x"] * (arr.ndim - dim - 1)
            fancy.append(dimshuffle(arange(arr.shape[dim]), pattern))
    return arr[tuple(fancy)]


def _choice_list(choices):
    """A list or tuple of choices as Aesara's MakeList takes them (each a tensor, all of the
    first one's type or a subtype of it), broadcast and stacked into one tensor: Kiln has no
    TypedList type, so the graph shows the stack where Aesara shows MakeList."""
    from kiln.tensor.build import stack
    from kiln.graph import Variable
    elems = [c if isinstance(c, Variable) else as_tensor_variable(c) for c in choices]
    if not elems:
        raise IndexError("list index out of range")  # Aesara's MakeList reads choices[0]
    if not all(elems[0].type.is_super(e.type) for e in elems):
        raise TypeError("MakeList need all input variable to be of the same type.")
    return stack(list(broadcast_arrays(*elems)))


def choose(a, choices, mode="raise"):
    """numpy.choose: out[i] = choices[a[i]][i], choices one tensor or a list or tuple of
    tensors of one type (see _choice_list)."""
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError("choose: mode must be 'raise', 'wrap' or 'clip', not %r" % (mode,))
    if isinstance(choices, (list, tuple)):
        choices = _choice_list(choices)
    return Choose(mode=mode)(a, choices)


def atleast_Nd(*arys, n=1, left=True):
    """The arrays with at least n dims: broadcastable dims added on the left (or right)."""
    from kiln.tensor.shape import shape_padleft, shape_padright
    res = []
    for ary in arys:
        ary = as_tensor_variable(ary)
        if ary.ndim < n:
            pad = shape_padleft if left else shape_padright
            ary = pad(ary, n - ary.ndim)
        res.append(ary)
    return res[0] if len(res) == 1 else res


atleast_1d = partial(atleast_Nd, n=1)
atleast_2d = partial(atleast_Nd, n=2)
atleast_3d = partial(atleast_Nd, n=3)

