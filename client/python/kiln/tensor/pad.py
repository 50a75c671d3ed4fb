"""kiln.tensor.pad: numpy.pad, which Aesara 2.9.4 does not have (PyTensor has it, as
pytensor.tensor.pad.pad, exported from pytensor.tensor). Built from Kiln's ops, one axis after
the other as NumPy pads: constant blocks joined on (mode "constant", "maximum", "minimum",
"mean"), or x read at computed indices along the axis ("edge", "wrap", "reflect",
"symmetric"), so gradients flow through it. Pad widths are Python ints. "wrap" pads by whole
periods (NumPy >= 2.0; NumPy 1.x repeats partial chunks when a pad is wider than the axis)."""
import numpy as np

from kiln.tensor.basic import ELEMWISE, as_tensor_variable, cast, clip, switch

__all__ = ["pad"]

_INDEX_MODES = ("edge", "wrap", "reflect", "symmetric")
_STAT_MODES = ("maximum", "minimum", "mean")


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


def pad(x, pad_width, mode="constant", **kwargs):
    """numpy.pad of x by pad_width (an int, a (before, after) pair, or a pair per axis) in one
    of the modes "constant" (constant_values), "edge", "wrap", "reflect", "symmetric",
    "maximum", "minimum" and "mean" (over the whole axis: stat_length is not supported)."""
    from kiln.tensor.build import alloc, concatenate
    from kiln.tensor.subtensor import take
    x = as_tensor_variable(x)
    widths = _per_axis(pad_width, x.ndim, "pad_width")
    for before, after in widths:
        if not all(isinstance(w, (int, np.integer)) and w >= 0 for w in (before, after)):
            raise ValueError("pad_width: %r must be non-negative Python ints" % (pad_width,))
    allowed = {"constant": {"constant_values"}}.get(mode, set())
    if mode not in ("constant",) + _INDEX_MODES + _STAT_MODES:
        raise ValueError("mode '%s' is not supported by Kiln's pad" % (mode,))
    unknown = set(kwargs) - allowed
    if unknown:
        raise ValueError("unsupported keyword arguments for mode '%s': %s"
                         % (mode, sorted(unknown)))
    values = _per_axis(kwargs.get("constant_values", 0), x.ndim, "constant_values")
    for axis, (before, after) in enumerate(widths):
        before, after = int(before), int(after)
        if before == 0 and after == 0:
            continue
        n = x.type.shape[axis] if x.type.shape[axis] is not None else x.shape[axis]
        if mode in _INDEX_MODES:
            x = take(x, _indices(n, before, after, mode), axis=axis)
            continue
        dims = [x.shape[d] for d in range(x.ndim)]
        if mode == "constant":
            fills = [cast(as_tensor_variable(v), x.dtype) for v in values[axis]]
        else:
            reduce = {"maximum": "max", "minimum": "min", "mean": "mean"}[mode]
            stat = getattr(x, reduce)(axis=axis, keepdims=True)
            if mode == "mean" and x.dtype not in ("float16", "float32", "float64",
                                                  "complex64", "complex128"):
                stat = ELEMWISE["round_half_to_even"](stat)
            fills = [cast(stat, x.dtype)] * 2
        blocks = []
        for width, fill in zip((before, after), fills):
            block_dims = list(dims)
            block_dims[axis] = width
            blocks.append(alloc(fill, *block_dims) if width else None)
        blocks = [b for b in (blocks[0], x, blocks[1]) if b is not None]
        x = concatenate(blocks, axis=axis)
    return x
