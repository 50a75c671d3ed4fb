"""kiln.tensor.nnet.conv3d2d (Aesara's aesara.tensor.nnet.conv3d2d): conv3d of movies laid out
(batch, time, channel, row, column) by filters laid out (filter, time, channel, row, column),
flipping the filters on all three axes, with a border mode per axis ('valid', 'full', 'half').

Aesara computes it with conv2d on the frames and a sum along diagonals (DiagonalSubtensor);
Kiln builds the AbstractConv3d it equals, on the axes moved to (batch, channel, time, row,
column) and back, with the time axis padded or cropped where its border mode differs from the
rows' and columns'. The values and gradients are Aesara's; the graph shows AbstractConv3d: it is
one op with fast kernels (im2col + GEMM) where Aesara's graph is a conv2d per frame pair and a
sum of diagonal stripes, and no golden test prints Aesara's conv3d2d graph.

The diagonal-stripe ops themselves are here as Aesara has them, core ops of their own
(core/ops/diagonal_subtensor.h): DiagonalSubtensor and IncDiagonalSubtensor, each the other's
gradient, with get_diagonal_subtensor_view on NumPy arrays."""
import numpy as np

from kiln import ops
from kiln.tensor.basic import as_tensor_variable, cast
from kiln.tensor.nnet.abstract_conv import conv3d as _abstract_conv3d

__all__ = ["conv3d", "DiagonalSubtensor", "IncDiagonalSubtensor", "diagonal_subtensor",
           "inc_diagonal_subtensor", "get_diagonal_subtensor_view"]


def get_diagonal_subtensor_view(x, i0, i1):
    """The thick diagonal stripe of the NumPy array x across axes i0 and i1, as a view of x (not
    a copy): with n0 = x.shape[i0] >= n1 = x.shape[i1], x's shape but n0 - n1 + 1 along i0,
    element (a, b) of those axes being x[a + n1 - 1 - b, b]. NotImplementedError when n0 < n1,
    as Aesara's."""
    i0, i1 = int(i0), int(i1)
    if x.shape[i0] < x.shape[i1]:
        raise NotImplementedError("is this allowed?")
    index = [slice(None)] * x.ndim
    index[i0] = slice(x.shape[i1] - 1, None)
    start = x[tuple(index)]
    strides = list(start.strides)
    if x.shape[i1] != 1:  # one step along i1 also steps back one along i0
        strides[i1] -= strides[i0]
    return np.lib.stride_tricks.as_strided(start, shape=start.shape, strides=strides,
                                           writeable=x.flags.writeable)


DiagonalSubtensor = ops.DiagonalSubtensor
IncDiagonalSubtensor = ops.IncDiagonalSubtensor
# DiagonalSubtensor(x, i0, i1): the stripe of x across axes i0 and i1, a copy.
diagonal_subtensor = DiagonalSubtensor(False)
# IncDiagonalSubtensor(x, i0, i1, amt): x with amt added to that stripe.
inc_diagonal_subtensor = IncDiagonalSubtensor(False)

_MODES = ("valid", "half", "full")  # in the order of their padding


def _padding(mode, size):
    """The zeros a border mode adds on each side of an axis whose filter has `size` taps."""
    if mode == "valid":
        return 0 * size
    return size // 2 if mode == "half" else size - 1


def _time_taps(filters, filters_shape):
    """The filters' length in time: the hint, the static size, or the symbolic one."""
    if filters_shape is not None and filters_shape[1] is not None:
        return int(filters_shape[1])
    if filters.type.shape[1] is not None:
        return filters.type.shape[1]
    return cast(filters.shape[1], "int64")


def _check_modes(border_mode):
    """Aesara's checks of the three border modes (time, rows, columns)."""
    if isinstance(border_mode, str):
        border_mode = (border_mode,) * 3
    border_mode = tuple(border_mode)
    if len(border_mode) != 3:
        raise ValueError("invalid border mode", border_mode)
    if border_mode[1] != border_mode[2]:
        raise NotImplementedError("height and width bordermodes must match")
    for mode in border_mode[:2]:
        if mode == "same":
            raise NotImplementedError()
        if mode not in _MODES:
            raise ValueError("invalid border mode", mode)
    return border_mode


def _hint(shape, name):
    """A (N, T, C, H, W) shape hint moved to (N, C, T, H, W), or None."""
    if shape is None:
        return None
    shape = tuple(shape)
    if len(shape) != 5:
        raise ValueError("%s must have 5 elements (N, T, C, H, W), got %r" % (name, shape))
    return (shape[0], shape[2], shape[1], shape[3], shape[4])


def conv3d(signals, filters, signals_shape=None, filters_shape=None, border_mode="valid"):
    """Convolve spatio-temporal filters (Nf, Tf, C, Hf, Wf) with a movie (Ns, Ts, C, Hs, Ws),
    flipping the filters: the output is (Ns, Ts', Nf, Hs', Ws'). border_mode is 'valid',
    'full' or 'half', or one per axis (time, rows, columns) with the rows' and columns' equal."""
    from kiln.tensor.build import alloc, concatenate
    signals, filters = as_tensor_variable(signals), as_tensor_variable(filters)
    for name, v in (("signals", signals), ("filters", filters)):
        if v.ndim != 5:
            raise ValueError("conv3d2d.conv3d: %s must be a 5D tensor (batch, time, channel, "
                             "row, column), got %s" % (name, v.type))
    time_mode, space_mode, _ = _check_modes(border_mode)
    x = signals.dimshuffle(0, 2, 1, 3, 4)
    w = filters.dimshuffle(0, 2, 1, 3, 4)
    taps = _time_taps(filters, filters_shape)
    extra = _MODES.index(time_mode) - _MODES.index(space_mode)
    image_hint = _hint(signals_shape, "signals_shape")
    if extra > 0:  # the time axis pads more than the others: zeros added to the movie first
        width = _padding(time_mode, taps) - _padding(space_mode, taps)
        zeros = alloc(cast(as_tensor_variable(0), x.dtype), x.shape[0], x.shape[1], width,
                      x.shape[3], x.shape[4])
        x = concatenate([zeros, x, zeros], axis=2)
        image_hint = None if image_hint is None else image_hint[:2] + (None,) + image_hint[3:]
    y = _abstract_conv3d(x, w, input_shape=image_hint,
                         filter_shape=_hint(filters_shape, "filters_shape"),
                         border_mode=space_mode)
    if extra < 0:  # it pads less: the frames the others' padding added are cut off
        cut = _padding(space_mode, taps) - _padding(time_mode, taps)
        y = y[:, :, cut:y.shape[2] - cut]
    return y.dimshuffle(0, 2, 1, 3, 4)
