"""kiln.tensor.signal.pool (Aesara's aesara.tensor.signal.pool): max, sum and average pooling
over the last 2 (pool_2d), 3 (pool_3d) or `ndim` dims of a tensor, with Aesara's signatures,
defaults, warnings and errors. The ops are core's Pool, MaxPoolGrad, AveragePoolGrad and
DownsampleFactorMaxGradGrad (kiln.ops), written here with Aesara's constructors; core computes
them, types them and derives their gradients (to the second order) as Aesara does."""
import warnings

import numpy as np

from kiln import ops
from kiln.graph import Variable
from kiln.tensor.basic import as_tensor_variable, extract_constant, switch
from kiln.tensor.math import ge, maximum

_MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")


def _checked_mode(mode):
    """Aesara's mode check ('max_deterministic' is 'max' on the CPU)."""
    if mode == "max_deterministic":
        mode = "max"
    if mode not in _MODES:
        raise ValueError("Pool mode parameter only support 'max', 'sum', 'average_inc_pad' and "
                         "'average_exc_pad'. Got %s" % (mode,))
    return mode


def _deprecated(new, old, value, old_value, default=None, where=""):
    """Aesara's handling of the deprecated ds/st/padding keywords: the old name's value when
    only it is given (with a DeprecationWarning), ValueError when both are."""
    if old_value is None:
        return value
    if value is not None and value != default:
        if new == "pad":
            raise ValueError("You can't provide a tuple value to both 'padding' and pad."
                             "  Please provide a value only to pad.")
        if new == "stride":
            raise ValueError("You can't provide a tuple value to both 'st and 'stride'."
                             " Please provide a value only to 'stride'.")
        raise ValueError("You can't provide a tuple value to both 'ws' and 'ds'."
                         " Please provide a value only to 'ws'.")
    warnings.warn("The '%s' parameter%s is not going to exist anymore as it is going to be "
                  "replaced by the parameter '%s'." % (old, where, new),
                  category=DeprecationWarning, stacklevel=3)
    return old_value


def _window_args(ws, stride, pad, ds, st, padding, zero_pad, where=""):
    ws = _deprecated("ws", "ds", ws, ds, where=where)
    if ws is None:
        raise ValueError("You must provide a tuple value for the window size.")
    stride = _deprecated("stride", "st", stride, st, where=where)
    pad = _deprecated("pad", "padding", pad, padding, default=zero_pad, where=where)
    return ws, stride, pad


def _defaults(ws, stride, pad, nd):
    """make_node's defaults: stride = ws, pad = zeros."""
    return ws, ws if stride is None else stride, (0,) * nd if pad is None else pad


def _check_padding(ws, pad, nd, ignore_border):
    """Aesara's make_node checks on a padding given as a tuple or list."""
    if isinstance(pad, (tuple, list)):
        if max(pad) != 0 and not ignore_border:
            raise NotImplementedError("padding works only with ignore_border=True")
        if isinstance(ws, (tuple, list)) and any(pad[i] >= ws[i] for i in range(nd)):
            raise NotImplementedError("padding must be smaller than strides")


def _pool_nd(name, nd, input, ws, ignore_border, stride, pad, mode, ds, st, padding):
    ws, stride, pad = _window_args(ws, stride, pad, ds, st, padding, (0,) * nd)
    if input.ndim < nd:
        raise NotImplementedError("%s requires a dimension >= %d" % (name, nd))
    if ignore_border is None:
        warnings.warn("%s() will have the parameter ignore_border default value changed to True "
                      "(currently False). To have consistent behavior with all Aesara version, "
                      "explicitly add the parameter ignore_border=True." % name,
                      category=DeprecationWarning, stacklevel=3)
        ignore_border = False
    return Pool(ignore_border, ndim=nd, mode=mode)(input, ws, stride, pad)


def pool_2d(input, ws=None, ignore_border=None, stride=None, pad=(0, 0), mode="max", ds=None,
            st=None, padding=None):
    """Downscales input (N >= 2 dims) over its last 2 dims: mode ('max', 'sum',
    'average_inc_pad' or 'average_exc_pad') of each ws window, stride apart (ws by default), on
    input padded by pad zeros each side (which needs ignore_border=True). ignore_border None
    warns and means False: a partial window at the end of a dim is kept. ds, st and padding are
    the deprecated names of ws, stride and pad."""
    return _pool_nd("pool_2d", 2, input, ws, ignore_border, stride, pad, mode, ds, st, padding)


def pool_3d(input, ws=None, ignore_border=None, stride=None, pad=(0, 0, 0), mode="max",
            ds=None, st=None, padding=None):
    """pool_2d over the last 3 dims of input (N >= 3 dims)."""
    return _pool_nd("pool_3d", 3, input, ws, ignore_border, stride, pad, mode, ds, st, padding)


def max_pool_2d_same_size(input, patch_size):
    """input (4-d) with every element that is not the maximum of its patch_size patch (the
    patches do not overlap) set to zero: the same shape as input."""
    output = Pool(True)(input, patch_size)
    return MaxPoolGrad(True)(input, output, output, patch_size)


def _out_shape(imgshape, ws, ignore_border, stride, pad, ndim, ds, st, padding, grad):
    """Pool.out_shape and PoolGrad.out_shape: ints for ints, symbolic dims otherwise."""
    where = " in PoolGrad" if grad else ""
    ws, stride, pad = _window_args(ws, stride, pad, ds, st, padding,
                                   None if grad else (0,) * (ndim or 2), where)
    ndim = 2 if ndim is None else ndim
    assert ndim > 0
    if len(imgshape) < ndim:
        raise TypeError("imgshape must have at least %d dimensions" % ndim)
    stride = ws if stride is None else stride
    pad = (0,) * ndim if pad is None else pad

    def length(v, w, s):
        if ignore_border:
            if not grad and not isinstance(w, Variable) and not isinstance(s, Variable) \
                    and w == s:
                return v // s
            n = (v - w) // s + 1
            return maximum(n, 0) if isinstance(n, Variable) else np.maximum(n, 0)
        if isinstance(v, Variable):
            return switch(ge(s, w), (v - 1) // s + 1, maximum(0, (v - 1 - w) // s + 1) + 1)
        if s >= w:
            return (v - 1) // s + 1
        return max(0, (v - 1 - w) // s + 1) + 1

    dims = [extract_constant(imgshape[-ndim + i]) + pad[i] * 2 for i in range(ndim)]
    return list(imgshape[:-ndim]) + [length(dims[i], ws[i], stride[i]) for i in range(ndim)]


class _PoolOp:
    """What the pooling ops share: Aesara's constructor signature, `openmp`, and a __call__
    that passes keywords (ws=, stride=, pad=) to make_node."""

    openmp = False

    def __call__(self, *inputs, **kwargs):
        return self.make_node(*inputs, **kwargs).outputs[0]

    def _node(self, tensors, ws, stride, pad, check_pad):
        nd = self.ndim
        ws, stride, pad = _defaults(ws, stride, pad, nd)
        if check_pad:
            _check_padding(ws, pad, nd, self.ignore_border)
        params = [as_tensor_variable(v) for v in (ws, stride, pad)]
        for v in params:
            assert v.ndim == 1
        return ops.GeneratedOp.make_node(self, *tensors, *params)

    @classmethod
    def from_attrs(cls, attrs):
        return cls._from(bool(attrs.get("ignore_border", False)), attrs.get("mode", cls._mode),
                         int(attrs.get("ndim", 2)))


@ops.view
class Pool(_PoolOp, ops.Pool):
    """Pool{ignore_border, mode, ndim}(x, ws, stride=None, pad=None): sum, average or max over
    the windows of x's last ndim dims (see pool_2d)."""

    _mode = "max"

    def __init__(self, ignore_border=False, mode="max", ndim=2, openmp=None):
        ops.Pool.__init__(self, ignore_border=bool(ignore_border), mode=_checked_mode(mode),
                          ndim=ndim)

    @classmethod
    def _from(cls, ignore_border, mode, ndim):
        return cls(ignore_border, mode, ndim)

    @staticmethod
    def out_shape(imgshape, ws=None, ignore_border=False, stride=None, pad=None, ndim=2, ds=None,
                  st=None, padding=None):
        """The output shape for an input of shape imgshape (ints, or symbolic dims)."""
        return _out_shape(imgshape, ws, ignore_border, stride, pad, ndim, ds, st, padding, False)

    def make_node(self, x, ws, stride=None, pad=None):
        x = as_tensor_variable(x)
        if x.type.ndim < self.ndim:
            raise TypeError()
        return self._node([x], ws, stride, pad, check_pad=True)


class PoolGrad(_PoolOp):
    """The base of MaxPoolGrad and AveragePoolGrad, as in Aesara: out_shape and the props."""

    __props__ = ("ignore_border", "mode", "ndim")

    @staticmethod
    def out_shape(imgshape, ws=None, ignore_border=False, stride=None, pad=None, ndim=2, ds=None,
                  st=None, padding=None):
        """The pooled shape for an input of shape imgshape (ints, or symbolic dims)."""
        return _out_shape(imgshape, ws, ignore_border, stride, pad, ndim, ds, st, padding, True)


@ops.view
class MaxPoolGrad(PoolGrad, ops.MaxPoolGrad):
    """MaxPoolGrad(ignore_border, ndim)(x, maxout, gz, ws, stride=None, pad=None): x's
    gradient of max pooling."""

    _mode = "max"

    def __init__(self, ignore_border, ndim=2, openmp=None):
        ops.MaxPoolGrad.__init__(self, ignore_border=bool(ignore_border), mode="max", ndim=ndim)

    @classmethod
    def _from(cls, ignore_border, mode, ndim):
        return cls(ignore_border, ndim)

    def make_node(self, x, maxout, gz, ws, stride=None, pad=None):
        tensors = [as_tensor_variable(v) for v in (x, maxout, gz)]
        return self._node(tensors, ws, stride, pad, check_pad=False)


@ops.view
class AveragePoolGrad(PoolGrad, ops.AveragePoolGrad):
    """AveragePoolGrad(ignore_border, mode, ndim)(x, gz, ws, stride=None, pad=None): x's
    gradient of sum or average pooling."""

    _mode = "average_inc_pad"

    def __init__(self, ignore_border, mode="average_inc_pad", ndim=2):
        assert mode in ("sum", "average_inc_pad", "average_exc_pad")
        ops.AveragePoolGrad.__init__(self, ignore_border=bool(ignore_border), mode=mode,
                                     ndim=ndim)

    @classmethod
    def _from(cls, ignore_border, mode, ndim):
        return cls(ignore_border, mode, ndim)

    def make_node(self, x, gz, ws, stride=None, pad=None, dummy=None):
        tensors = [as_tensor_variable(v) for v in (x, gz)]
        return self._node(tensors, ws, stride, pad, check_pad=False)


@ops.view
class DownsampleFactorMaxGradGrad(_PoolOp, ops.DownsampleFactorMaxGradGrad):
    """DownsampleFactorMaxGradGrad(ignore_border, mode='max', ndim)(x, maxout, ggx, ws, ...):
    MaxPoolGrad's gradient with respect to gz, in maxout's shape."""

    _mode = "max"

    def __init__(self, ignore_border, mode="max", ndim=2, openmp=None):
        assert mode == "max"
        ops.DownsampleFactorMaxGradGrad.__init__(self, ignore_border=bool(ignore_border),
                                                 mode=mode, ndim=ndim)

    @classmethod
    def _from(cls, ignore_border, mode, ndim):
        return cls(ignore_border, mode, ndim)

    def make_node(self, x, maxout, gz, ws, stride=None, pad=None):
        tensors = [as_tensor_variable(v) for v in (x, maxout, gz)]
        return self._node(tensors, ws, stride, pad, check_pad=True)


@ops.view
class MaxPoolRop(_PoolOp, ops.MaxPoolRop):
    """MaxPoolRop(ignore_border, mode='max', ndim)(x, eval_point, ws, stride=None, pad=None):
    max pooling's R-operator: per window, eval_point at x's first maximum (C order), in
    eval_point's dtype. (kiln.gradient.Rop of a pooling computes the same product from the
    gradients, summing over tied maxima where this takes the first.)"""

    _mode = "max"

    def __init__(self, ignore_border=False, mode="max", ndim=2, openmp=None):
        assert mode == "max"
        ops.MaxPoolRop.__init__(self, ignore_border=bool(ignore_border), mode=mode, ndim=ndim)

    @classmethod
    def _from(cls, ignore_border, mode, ndim):
        return cls(ignore_border, mode, ndim)

    def make_node(self, x, eval_point, ws, stride=None, pad=None):
        x = as_tensor_variable(x)
        if x.type.ndim < self.ndim:
            raise TypeError()
        tensors = [x, as_tensor_variable(eval_point)]
        return self._node(tensors, ws, stride, pad, check_pad=True)
