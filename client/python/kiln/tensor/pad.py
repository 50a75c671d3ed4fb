"""kiln.tensor.pad: numpy.pad, which Aesara 2.9.4 does not have (PyTensor has it, as
pytensor.tensor.pad.pad, exported from pytensor.tensor). Built from Kiln's ops, one axis after
the other as NumPy pads: blocks joined on either side (mode "constant"; "maximum", "minimum",
"mean" and "median" over the whole axis or its stat_length entries next to each side;
"linear_ramp" from end_values to the edge), or x read at computed indices along the axis
("edge", "wrap", "reflect", "symmetric"), so gradients flow through it. Pad widths and stat
lengths are Python ints. "wrap" pads by whole periods (NumPy >= 2.0; NumPy 1.x repeats partial
chunks when a pad is wider than the axis)."""
import numpy as np

from kiln.tensor.basic import ELEMWISE, as_tensor_variable, cast, clip, switch

__all__ = ["pad"]

_INDEX_MODES = ("edge", "wrap", "reflect", "symmetric")
_STAT_MODES = ("maximum", "minimum", "mean", "median")
_ALLOWED_KWARGS = {"constant": {"constant_values"}, "linear_ramp": {"end_values"},
                   **{mode: {"stat_length"} for mode in _STAT_MODES}}
_FLOATS = ("float16", "float32", "float64", "complex64", "complex128")


def _per_axis(value, ndim, name):
    """NumPy's broadcasting of pad_width (or constant_values): ((before, after),) * ndim."""
    arr = np.asarray(value, dtype=object)
    if arr.ndim == 0:
        arr = arr.reshape(1, 1)
    elif arr.ndim == 1:
        arr = arr.reshape(1, -1) if arr.shape[0] == 2 else arr.reshape(-1, 1)
    try:
        arr = np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError("%s: %r cannot be broadcast to (%d, 2)" % (name, value, ndim))
    return [tuple(row) for row in arr.tolist()]


def _stat_lengths(stat_length, ndim):
    """stat_length as NumPy reads it: None (the whole axis) or non-negative ints per side."""
    if stat_length is None:
        return [(None, None)] * ndim
    lengths = _per_axis(stat_length, ndim, "stat_length")
    for pair in lengths:
        for n in pair:
            if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
                raise ValueError("stat_length: %r must be Python ints or None" % (stat_length,))
            if n < 0:
                raise ValueError("stat_length: index can't contain negative values")
    return [(int(a), int(b)) for a, b in lengths]


def _indices(n, before, after, mode):
    """The positions along an axis of n entries that the padded axis reads, as int64."""
    from kiln.tensor.build import arange
    p = arange(-before, n + after, dtype="int64") if isinstance(n, int) else \
        arange(-before, cast(n, "int64") + after)
    n = cast(as_tensor_variable(n), "int64")
    if mode == "edge":
        return clip(p, 0, n - 1)
    if mode == "wrap":
        return p % n
    if mode == "symmetric":  # ... 1 0 | 0 1 ... n-1 | n-1 n-2 ...
        q = p % (2 * n)
        return switch(ELEMWISE["lt"](q, n), q, 2 * n - 1 - q)
    # reflect: ... 2 1 | 0 1 ... n-1 | n-2 ..., the edge not repeated (one entry: itself).
    period = ELEMWISE["maximum"](2 * n - 2, 1)
    q = p % period
    return switch(ELEMWISE["lt"](q, n), q, period - q)


def _along(x, axis, start, stop):
    """x[start:stop] along the axis."""
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _median(chunk, axis):
    """numpy.median of chunk along the axis, kept as a dim of 1: the mean of the one or two
    middle entries of the sorted chunk (float64 for integers), NaN where the chunk has one."""
    from kiln.tensor.sort import sort
    from kiln.tensor.subtensor import take
    if chunk.dtype not in _FLOATS:
        chunk = cast(chunk, "float64")
    n = chunk.type.shape[axis]
    n = cast(chunk.shape[axis] if n is None else as_tensor_variable(n), "int64")
    ordered = sort(chunk, axis=axis)
    low = take(ordered, ((n - 1) // 2).dimshuffle("x"), axis=axis)
    high = take(ordered, (n // 2).dimshuffle("x"), axis=axis)
    median = (low + high) / cast(as_tensor_variable(2), chunk.dtype)
    has_nan = ELEMWISE["isnan"](chunk).any(axis=axis, keepdims=True)
    return switch(has_nan, cast(as_tensor_variable(np.nan), chunk.dtype), median)


def _stat(x, axis, start, stop, mode):
    """The statistic of x[start:stop] along the axis as NumPy's pad takes it, rounded to even
    when x has integers (mean, median)."""
    chunk = _along(x, axis, start, stop)
    if mode == "median":
        stat = _median(chunk, axis)
    else:
        stat = getattr(chunk, {"maximum": "max", "minimum": "min", "mean": "mean"}[mode])(
            axis=axis, keepdims=True)
    if mode in ("mean", "median") and x.dtype not in _FLOATS:
        stat = ELEMWISE["round_half_to_even"](stat)
    return cast(stat, x.dtype)


def _stat_fills(x, axis, n, lengths, mode):
    """The left and right statistics (NumPy's _get_stats): over the whole axis, or the
    stat_length entries next to each side (at most the axis)."""
    left, right = lengths
    if left is None and right is None:
        stat = _stat(x, axis, None, None, mode)
        return [stat, stat]
    if 0 in (left, right) and mode in ("maximum", "minimum"):
        raise ValueError("stat_length of 0 yields no value for padding")
    if isinstance(n, int):
        left = n if left is None else min(left, n)
        right = n if right is None else min(right, n)
        return [_stat(x, axis, 0, left, mode), _stat(x, axis, n - right, n, mode)]
    nn = cast(n, "int64")
    left = nn if left is None else ELEMWISE["minimum"](nn, left)
    right = nn if right is None else ELEMWISE["minimum"](nn, right)
    return [_stat(x, axis, 0, left, mode), _stat(x, axis, nn - right, None, mode)]


def _ramp(x, axis, n, width, end, side):
    """The linear ramp of `width` entries from `end` toward x's edge on `side` (0 before, 1
    after), without the edge itself: numpy.linspace(end, edge, width, endpoint=False) (in
    float64 then truncated to x's integer dtype), reversed after the axis."""
    from kiln.tensor.build import arange
    from kiln.tensor.subtensor import take
    last = np.array([n - 1], "int64") if isinstance(n, int) else \
        (cast(n, "int64") - 1).dimshuffle("x")
    edge = take(x, np.array([0], "int64") if side == 0 else last, axis=axis)
    work = x.dtype if x.dtype in _FLOATS else "float64"
    edge = cast(edge, work)
    end = cast(as_tensor_variable(end), work)
    step = (edge - end) / cast(as_tensor_variable(width), work)
    k = arange(width, dtype=work) if side == 0 else arange(width - 1, -1, -1, dtype=work)
    k = k.dimshuffle(["x"] * axis + [0] + ["x"] * (x.ndim - axis - 1))
    return cast(k * step + end, x.dtype)


def pad(x, pad_width, mode="constant", **kwargs):
    """numpy.pad of x by pad_width (an int, a (before, after) pair, or a pair per axis) in one
    of the modes "constant" (constant_values), "edge", "wrap", "reflect", "symmetric",
    "linear_ramp" (end_values), "maximum", "minimum", "mean" and "median" (stat_length)."""
    from kiln.tensor.build import alloc, concatenate
    from kiln.tensor.subtensor import take
    x = as_tensor_variable(x)
    widths = _per_axis(pad_width, x.ndim, "pad_width")
    for before, after in widths:
        if not all(isinstance(w, (int, np.integer)) and w >= 0 for w in (before, after)):
            raise ValueError("pad_width: %r must be non-negative Python ints" % (pad_width,))
    if mode not in ("constant", "linear_ramp") + _INDEX_MODES + _STAT_MODES:
        raise ValueError("mode '%s' is not supported by Kiln's pad" % (mode,))
    unknown = set(kwargs) - _ALLOWED_KWARGS.get(mode, set())
    if unknown:
        raise ValueError("unsupported keyword arguments for mode '%s': %s"
                         % (mode, sorted(unknown)))
    values = _per_axis(kwargs.get("constant_values", 0), x.ndim, "constant_values")
    ends = _per_axis(kwargs.get("end_values", 0), x.ndim, "end_values")
    lengths = _stat_lengths(kwargs.get("stat_length"), x.ndim)
    for axis, (before, after) in enumerate(widths):
        before, after = int(before), int(after)
        if before == 0 and after == 0:
            continue
        n = x.type.shape[axis] if x.type.shape[axis] is not None else x.shape[axis]
        if mode != "constant" and isinstance(n, int) and n == 0:
            raise ValueError("can't extend empty axis %d using modes other than 'constant' or "
                             "'empty'" % axis)
        if mode in _INDEX_MODES:
            x = take(x, _indices(n, before, after, mode), axis=axis)
            continue
        dims = [x.shape[d] for d in range(x.ndim)]
        blocks = [None, x, None]
        if mode == "linear_ramp":
            for side, width in ((0, before), (1, after)):
                if width:
                    blocks[2 * side] = _ramp(x, axis, n, width, ends[axis][side], side)
        else:
            if mode == "constant":
                fills = [cast(as_tensor_variable(v), x.dtype) for v in values[axis]]
            else:
                fills = _stat_fills(x, axis, n, lengths[axis], mode)
            for side, (width, fill) in enumerate(zip((before, after), fills)):
                block_dims = list(dims)
                block_dims[axis] = width
                if width:
                    blocks[2 * side] = alloc(fill, *block_dims)
        x = concatenate([b for b in blocks if b is not None], axis=axis)
    return x
