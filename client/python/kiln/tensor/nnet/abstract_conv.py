"""kiln.tensor.nnet.abstract_conv (Aesara's aesara.tensor.nnet.abstract_conv): the abstract
convolution ops (AbstractConv2d, AbstractConv3d and their gradInputs / gradWeights ops, computed
by core: im2col and OpenBLAS) with Aesara's constructors, props and names, and the functions that
build them (conv2d, conv3d, the gradients, conv2d_transpose, the shape helpers, separable and
causal convolutions, bilinear upsampling). Unshared convolution raises NotImplementedError."""
import warnings

import numpy as np

from kiln import ops
from kiln.tensor.basic import as_tensor_variable, get_scalar_constant_value
from kiln.tensor.exceptions import NotScalarConstantError

__all__ = ["AbstractConv", "AbstractConv2d", "AbstractConv2d_gradInputs",
           "AbstractConv2d_gradWeights", "AbstractConv3d", "AbstractConv3d_gradInputs",
           "AbstractConv3d_gradWeights", "AbstractConv_gradInputs", "AbstractConv_gradWeights",
           "BaseAbstractConv", "abstract_conv2d", "bilinear_kernel_1D", "bilinear_kernel_2D",
           "bilinear_upsampling", "border_mode_to_pad", "frac_bilinear_upsampling", "causal_conv1d", "conv2d",
           "conv2d_grad_wrt_inputs", "conv2d_grad_wrt_weights", "conv2d_transpose", "conv3d",
           "conv3d_grad_wrt_inputs", "conv3d_grad_wrt_weights", "get_conv_gradinputs_shape",
           "get_conv_gradinputs_shape_1axis", "get_conv_gradweights_shape",
           "get_conv_gradweights_shape_1axis", "get_conv_output_shape", "get_conv_shape_1axis",
           "separable_conv2d", "separable_conv3d"]


# --- shapes ------------------------------------------------------------------------------------

def _pads_1axis(border_mode, dilated):
    """The (low, high) padding of one axis for a kernel spanning `dilated`."""
    if border_mode == "half":
        return dilated // 2, dilated // 2
    if border_mode == "full":
        return dilated - 1, dilated - 1
    if border_mode == "valid":
        return 0, 0
    low, high = border_mode if isinstance(border_mode, tuple) else (border_mode, border_mode)
    if low < 0 or high < 0:
        raise ValueError("border_mode must be >= 0")
    return low, high


def _per_axis(border_mode, i):
    return border_mode[i] if isinstance(border_mode, tuple) else border_mode


def get_conv_shape_1axis(image_shape, kernel_shape, border_mode, subsample, dilation=1):
    """The output size of one axis of a convolution (None when an argument is None):
    (image + pads - dilated kernel) // subsample + 1; symbolic sizes give a graph."""
    if any(v is None for v in (image_shape, kernel_shape, border_mode, subsample, dilation)):
        return None
    dilated = (kernel_shape - 1) * dilation + 1
    low, high = _pads_1axis(border_mode, dilated)
    out = image_shape - dilated
    if low != 0:
        out += low
    if high != 0:
        out += high
    if subsample != 1:
        out = out // subsample
    return out + 1


def get_conv_output_shape(image_shape, kernel_shape, border_mode, subsample,
                          filter_dilation=None):
    """The output shape (batch, filters, spatial...) of a convolution of these image and kernel
    shapes, None where unknown."""
    ndim = len(image_shape) - 2
    dilation = filter_dilation if filter_dilation is not None else (1,) * len(subsample)
    kshp = kernel_shape[-ndim:]
    return (image_shape[0], kernel_shape[0]) + tuple(
        get_conv_shape_1axis(image_shape[2 + i], kshp[i], _per_axis(border_mode, i),
                             subsample[i], dilation[i]) for i in range(len(subsample)))


def get_conv_gradweights_shape_1axis(image_shape, top_shape, border_mode, subsample, dilation):
    """The kernel size of one axis from the image and output sizes; None when unknown or not
    determined (subsample > 1, border_mode 'half')."""
    if any(v is None for v in (image_shape, top_shape, border_mode, subsample, dilation)):
        return None
    if subsample != 1 or border_mode == "half":
        return None
    if border_mode == "full":
        size = top_shape - image_shape
    elif border_mode == "valid":
        size = image_shape - top_shape
    else:
        low, high = _pads_1axis(border_mode, 0)
        size = image_shape + low + high - top_shape
    if dilation > 1:
        size = size / dilation
    return size + 1


def get_conv_gradweights_shape(image_shape, top_shape, border_mode, subsample,
                               filter_dilation=None, num_groups=1, unshared=False):
    """The kernel shape from the image and output shapes (None where not determined)."""
    dilation = filter_dilation if filter_dilation is not None else (1,) * len(subsample)
    nchan = top_shape[1] // num_groups if num_groups > 1 else top_shape[1]
    spatial = tuple(get_conv_gradweights_shape_1axis(
        image_shape[2 + i], top_shape[2 + i], _per_axis(border_mode, i), subsample[i],
        dilation[i]) for i in range(len(subsample)))
    if unshared:
        return (nchan,) + tuple(top_shape[2:]) + (image_shape[1],) + spatial
    return (nchan, image_shape[1]) + spatial


def get_conv_gradinputs_shape_1axis(kernel_shape, top_shape, border_mode, subsample, dilation):
    """The image size of one axis from the kernel and output sizes; None when unknown or not
    determined (subsample > 1)."""
    if any(v is None for v in (kernel_shape, top_shape, border_mode, subsample, dilation)):
        return None
    if subsample != 1:
        return None
    dilated = (kernel_shape - 1) * dilation + 1
    low, high = _pads_1axis(border_mode, dilated)
    size = top_shape + dilated - 1
    if low > 0:
        size -= low
    if high > 0:
        size -= high
    return size


def get_conv_gradinputs_shape(kernel_shape, top_shape, border_mode, subsample,
                              filter_dilation=None, num_groups=1):
    """The image shape from the kernel and output shapes (None where not determined)."""
    ndim = len(top_shape) - 2
    dilation = filter_dilation if filter_dilation is not None else (1,) * len(subsample)
    nkern = kernel_shape[1] * num_groups if num_groups > 1 else kernel_shape[1]
    kshp = kernel_shape[-ndim:]
    return (top_shape[0], nkern) + tuple(get_conv_gradinputs_shape_1axis(
        kshp[i], top_shape[2 + i], _per_axis(border_mode, i), subsample[i], dilation[i])
        for i in range(len(subsample)))


def border_mode_to_pad(mode, convdim, kshp):
    """The ((low, high), ...) padding of each spatial axis for a border_mode."""
    if isinstance(mode, tuple):
        if len(mode) != convdim:
            raise ValueError("invalid border_mode {} which must be a tuple of length {}"
                             .format(mode, convdim))
        pads = []
        for m in mode:
            if isinstance(m, int) and m >= 0:
                pads.append((m, m))
            elif isinstance(m, tuple) and all(isinstance(b, int) for b in m) and min(m) >= 0:
                if len(m) != 2:
                    raise NotImplementedError("Asymmetric padding not implemented for %dd"
                                              % len(m))
                pads.append((m[0], m[1]))
            else:
                raise ValueError("invalid border mode {}. The tuple can only contain integers "
                                 "or tuples of length 2".format(mode))
        return tuple(pads)
    if mode in ("full", "half", "valid"):
        return tuple(_pads_1axis(mode, kshp[i]) for i in range(convdim))
    raise ValueError('invalid border_mode {}, which must be either "valid", "full", "half", '
                     'an integer or a tuple of length {}'.format(mode, convdim))


# --- the ops -----------------------------------------------------------------------------------

def _shape_hint(hint, length, name):
    """Aesara's imshp / kshp: a tuple of ints (constants allowed) and None."""
    if not hint:
        return (None,) * length
    out = []
    for v in hint:
        if v is None:
            out.append(None)
            continue
        try:
            out.append(int(get_scalar_constant_value(v, only_process_constants=True)))
        except (NotScalarConstantError, TypeError, ValueError):
            raise ValueError("%s should be None or a tuple of constant int values" % name) \
                from None
    return tuple(out)


def _normalize_border(border_mode, convdim):
    """Aesara's border_mode after its constructor: a mode string, or a tuple with an int per
    symmetric axis and a (low, high) pair per asymmetric one; all zero is 'valid'."""
    if isinstance(border_mode, (int, np.integer)) and not isinstance(border_mode, bool):
        if border_mode < 0:
            raise ValueError("invalid border_mode {}, which must be a non-negative integer"
                             .format(border_mode))
        border_mode = (int(border_mode),) * convdim
    elif isinstance(border_mode, tuple):
        if len(border_mode) != convdim:
            raise ValueError("invalid border_mode {}, which must be a tuple of length {}"
                             .format(border_mode, convdim))
        normalized = []
        for mode in border_mode:
            if isinstance(mode, (int, np.integer)) and mode >= 0:
                normalized.append(int(mode))
            elif (isinstance(mode, tuple) and len(mode) == 2 and min(mode) >= 0
                  and all(isinstance(m, (int, np.integer)) for m in mode)):
                if convdim != 2:
                    raise NotImplementedError("Asymmetric padding not implemented for %dD"
                                              % convdim)
                normalized.append(int(mode[0]) if mode[0] == mode[1]
                                  else (int(mode[0]), int(mode[1])))
            else:
                raise ValueError("invalid border mode {}. The tuple can only contain integers "
                                 " or pairs of integers".format(border_mode))
        border_mode = tuple(normalized)
    elif border_mode not in ("valid", "full", "half"):
        raise ValueError('invalid border_mode {}, which must be either "valid", "full", "half", '
                         'an integer or a tuple of length {}'.format(border_mode, convdim))
    if isinstance(border_mode, tuple) and all(m == 0 or m == (0, 0) for m in border_mode):
        border_mode = "valid"
    return border_mode


def _border_wire(border_mode):
    """border_mode on the wire: the mode, or the flat (low, high) pads."""
    if isinstance(border_mode, str):
        return border_mode
    flat = []
    for m in border_mode:
        flat.extend(m if isinstance(m, tuple) else (m, m))
    return flat


def _border_from_wire(value):
    if isinstance(value, str):
        return value
    pads = list(value)
    return tuple(pads[i] if pads[i] == pads[i + 1] else (pads[i], pads[i + 1])
                 for i in range(0, len(pads), 2))


class BaseAbstractConv:
    """Aesara's BaseAbstractConv: the props of every convolution op (convdim, border_mode,
    subsample, filter_flip, imshp, kshp, filter_dilation, num_groups, unshared), checked and
    normalized as Aesara's constructor does; core computes and names the op."""

    def __init__(self, convdim, imshp=None, kshp=None, border_mode="valid", subsample=None,
                 filter_flip=True, filter_dilation=None, num_groups=1, unshared=False):
        if not isinstance(self, ops.GeneratedOp):
            raise TypeError("%s is abstract in Kiln: use AbstractConv2d or AbstractConv3d (and "
                            "their _gradInputs and _gradWeights)" % type(self).__name__)
        if convdim not in (2, 3):
            raise ValueError("convolution dimension {} is not supported".format(convdim))
        if unshared:
            raise NotImplementedError(
                "Kiln does not support unshared (locally connected) convolution")
        self.convdim = convdim
        self.border_mode = _normalize_border(border_mode, convdim)
        self.imshp = _shape_hint(imshp, 2 + convdim, "imshp")
        self.kshp = _shape_hint(kshp, 2 + convdim, "kshp")
        subsample = (1,) * convdim if subsample is None else tuple(int(s) for s in subsample)
        if len(subsample) != convdim:
            raise ValueError("subsample must have {} elements".format(convdim))
        dilation = ((1,) * convdim if filter_dilation is None
                    else tuple(int(d) for d in filter_dilation))
        if len(dilation) != convdim:
            raise ValueError("filter_dilation must have {} elements".format(convdim))
        if num_groups < 1:
            raise ValueError("num_groups must have value greater than zero")
        self.subsample = subsample
        self.filter_flip = bool(filter_flip)
        self.filter_dilation = dilation
        self.num_groups = int(num_groups)
        self.unshared = False
        self.core_op()  # core bounds the props (a stride of 0, a huge pad)

    def wire_attrs(self):
        return [("convdim", self.convdim), ("border_mode", _border_wire(self.border_mode)),
                ("subsample", list(self.subsample)), ("filter_flip", int(self.filter_flip)),
                ("imshp", [-1 if d is None else d for d in self.imshp]),
                ("kshp", [-1 if d is None else d for d in self.kshp]),
                ("filter_dilation", list(self.filter_dilation)),
                ("num_groups", self.num_groups), ("unshared", int(self.unshared))]

    @classmethod
    def from_attrs(cls, attrs):
        hint = (lambda key: None if key not in attrs
                else tuple(None if d == -1 else d for d in attrs[key]))
        return cls(imshp=hint("imshp"), kshp=hint("kshp"),
                   border_mode=_border_from_wire(attrs.get("border_mode", "valid")),
                   subsample=attrs.get("subsample"),
                   filter_flip=bool(attrs.get("filter_flip", 1)),
                   filter_dilation=attrs.get("filter_dilation"),
                   num_groups=attrs.get("num_groups", 1),
                   **({"unshared": bool(attrs["unshared"])} if attrs.get("unshared") else {}))

    def do_constant_folding(self, fgraph, node):
        return False


class AbstractConv(BaseAbstractConv):
    """The forward convolution (make_node(img, kern)); see AbstractConv2d, AbstractConv3d."""


class AbstractConv_gradWeights(BaseAbstractConv):
    """The gradient wrt the filters: make_node(img, topgrad, shape), shape the kernel's spatial
    shape."""

    def make_node(self, img, topgrad, shape, add_assert_shape=True):
        return super().make_node(img, topgrad, as_tensor_variable(shape))


class AbstractConv_gradInputs(BaseAbstractConv):
    """The gradient wrt the inputs: make_node(kern, topgrad, shape), shape the image's spatial
    shape."""

    def make_node(self, kern, topgrad, shape, add_assert_shape=True):
        return super().make_node(kern, topgrad, as_tensor_variable(shape))


def _op_class(base, generated, convdim, doc):
    """One of Aesara's six classes: its constructor's signature (Aesara's defaults for
    `convdim`), the generated op of core's below."""
    unshared_arg = convdim == 2

    def __init__(self, imshp=None, kshp=None, border_mode="valid", subsample=(1,) * convdim,
                 filter_flip=True, filter_dilation=(1,) * convdim, num_groups=1,
                 unshared=False):
        if unshared and not unshared_arg:
            raise TypeError("%s has no unshared argument" % type(self).__name__)
        BaseAbstractConv.__init__(self, convdim, imshp, kshp, border_mode, subsample,
                                  filter_flip, filter_dilation, num_groups, unshared)

    cls = type(generated.kind, (base, generated), {
        "__module__": __name__, "__qualname__": generated.kind, "__doc__": doc,
        "__init__": __init__})
    return ops.view(cls)


AbstractConv2d = _op_class(AbstractConv, ops.AbstractConv2d, 2,
                           "Aesara's AbstractConv2d: the forward 2-d convolution.")
AbstractConv3d = _op_class(AbstractConv, ops.AbstractConv3d, 3,
                           "Aesara's AbstractConv3d: the forward 3-d convolution.")
AbstractConv2d_gradWeights = _op_class(
    AbstractConv_gradWeights, ops.AbstractConv2d_gradWeights, 2,
    "Aesara's AbstractConv2d_gradWeights: (img, topgrad, kernel height and width).")
AbstractConv3d_gradWeights = _op_class(
    AbstractConv_gradWeights, ops.AbstractConv3d_gradWeights, 3,
    "Aesara's AbstractConv3d_gradWeights: (img, topgrad, kernel depth, height and width).")
AbstractConv2d_gradInputs = _op_class(
    AbstractConv_gradInputs, ops.AbstractConv2d_gradInputs, 2,
    "Aesara's AbstractConv2d_gradInputs: (kern, topgrad, image height and width).")
AbstractConv3d_gradInputs = _op_class(
    AbstractConv_gradInputs, ops.AbstractConv3d_gradInputs, 3,
    "Aesara's AbstractConv3d_gradInputs: (kern, topgrad, image depth, height and width).")


# --- the functions -----------------------------------------------------------------------------

def abstract_conv2d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
                    subsample=(1, 1), filter_flip=True, filter_dilation=(1, 1), num_groups=1,
                    unshared=False):
    """AbstractConv2d(...)(input, filters)."""
    input, filters = as_tensor_variable(input), as_tensor_variable(filters)
    return AbstractConv2d(imshp=input_shape, kshp=filter_shape, border_mode=border_mode,
                          subsample=subsample, filter_flip=filter_flip,
                          filter_dilation=filter_dilation, num_groups=num_groups,
                          unshared=unshared)(input, filters)


def conv2d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), filter_flip=True, image_shape=None, filter_dilation=(1, 1),
           num_groups=1, unshared=False, **kwargs):
    """Aesara's conv2d: a mini-batch of images (batch, channels, rows, columns) convolved with
    filters (filters, channels / num_groups, rows, columns); border_mode 'valid', 'full',
    'half', an int, or an int or (low, high) pair per axis; image_shape is input_shape's old
    name."""
    if "imshp_logical" in kwargs or "kshp_logical" in kwargs:
        raise ValueError(
            "Keyword arguments 'imshp_logical' and 'kshp_logical' for conv2d are not supported "
            "anymore (and have not been a reliable way to perform upsampling). That feature is "
            "still available by calling aesara.tensor.nnet.conv.conv2d() for the time being.")
    if kwargs:
        warnings.warn(str(kwargs.keys()) + " are now deprecated in "
                      "`tensor.nnet.abstract_conv.conv2d` interface and will be ignored.",
                      stacklevel=2)
    if image_shape is not None:
        warnings.warn("The `image_shape` keyword argument to `tensor.nnet.conv2d` is "
                      "deprecated, it has been renamed to `input_shape`.", stacklevel=2)
        if input_shape is not None:
            raise ValueError("input_shape and image_shape should not be provided at the same "
                             "time.")
        input_shape = image_shape
    return abstract_conv2d(input, filters, input_shape, filter_shape, border_mode, subsample,
                           filter_flip, filter_dilation, num_groups, unshared)


def conv3d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1, 1), filter_flip=True, filter_dilation=(1, 1, 1), num_groups=1):
    """Aesara's conv3d: conv2d for (batch, channels, depth, rows, columns) volumes."""
    input, filters = as_tensor_variable(input), as_tensor_variable(filters)
    return AbstractConv3d(imshp=input_shape, kshp=filter_shape, border_mode=border_mode,
                          subsample=subsample, filter_flip=filter_flip,
                          filter_dilation=filter_dilation, num_groups=num_groups)(input, filters)


def _is_symbolic(v):
    from kiln.tensor.var import TensorConstant, TensorVariable
    return isinstance(v, TensorVariable) and not isinstance(v, TensorConstant)


def _grad_wrt_inputs(op_class, ndim, output_grad, filters, input_shape, filter_shape, kwargs):
    filters, output_grad = as_tensor_variable(filters), as_tensor_variable(output_grad)
    for d in (0, 1):
        if _is_symbolic(input_shape[d]):
            raise ValueError("input_shape[%d] must be a constant or None." % d)
    for d in range(2, 2 + ndim):
        if input_shape[d] is None:
            raise ValueError("input_shape[%d] must be a symbolic variable, a constant or None."
                             % d)
    if filter_shape is not None and len(filter_shape) != 2 + ndim:
        raise ValueError("The length of filter_shape was %d, but we expected %d."
                         % (len(filter_shape), 2 + ndim))
    numerical = [None if _is_symbolic(v) else v for v in input_shape]
    op = op_class(imshp=numerical, kshp=filter_shape, **kwargs)
    return op(filters, output_grad, list(input_shape[-ndim:]))


def _grad_wrt_weights(op_class, ndim, input, output_grad, filter_shape, input_shape, kwargs):
    input, output_grad = as_tensor_variable(input), as_tensor_variable(output_grad)
    for d in (0, 1):
        if _is_symbolic(filter_shape[d]):
            raise ValueError("filter_shape[%d] must be a constant or None." % d)
    numerical = [None if _is_symbolic(v) else v for v in filter_shape]
    op = op_class(imshp=input_shape, kshp=numerical, **kwargs)
    return op(input, output_grad, list(filter_shape[-ndim:]))


def conv2d_grad_wrt_inputs(output_grad, filters, input_shape, filter_shape=None,
                           border_mode="valid", subsample=(1, 1), filter_flip=True,
                           filter_dilation=(1, 1), num_groups=1, unshared=False):
    """The gradient of conv2d wrt its input: AbstractConv2d_gradInputs(filters, output_grad,
    input_shape[-2:]); input_shape's last two entries may be symbolic."""
    return _grad_wrt_inputs(AbstractConv2d_gradInputs, 2, output_grad, filters, input_shape,
                            filter_shape, dict(border_mode=border_mode, subsample=subsample,
                                               filter_flip=filter_flip,
                                               filter_dilation=filter_dilation,
                                               num_groups=num_groups, unshared=unshared))


def conv3d_grad_wrt_inputs(output_grad, filters, input_shape, filter_shape=None,
                           border_mode="valid", subsample=(1, 1, 1), filter_flip=True,
                           filter_dilation=(1, 1, 1), num_groups=1):
    """The gradient of conv3d wrt its input."""
    return _grad_wrt_inputs(AbstractConv3d_gradInputs, 3, output_grad, filters, input_shape,
                            filter_shape, dict(border_mode=border_mode, subsample=subsample,
                                               filter_flip=filter_flip,
                                               filter_dilation=filter_dilation,
                                               num_groups=num_groups))


def conv2d_grad_wrt_weights(input, output_grad, filter_shape, input_shape=None,
                            border_mode="valid", subsample=(1, 1), filter_flip=True,
                            filter_dilation=(1, 1), num_groups=1, unshared=False):
    """The gradient of conv2d wrt its filters: AbstractConv2d_gradWeights(input, output_grad,
    filter_shape[-2:])."""
    return _grad_wrt_weights(AbstractConv2d_gradWeights, 2, input, output_grad, filter_shape,
                             input_shape, dict(border_mode=border_mode, subsample=subsample,
                                               filter_flip=filter_flip,
                                               filter_dilation=filter_dilation,
                                               num_groups=num_groups, unshared=unshared))


def conv3d_grad_wrt_weights(input, output_grad, filter_shape, input_shape=None,
                            border_mode="valid", subsample=(1, 1, 1), filter_flip=True,
                            filter_dilation=(1, 1, 1), num_groups=1):
    """The gradient of conv3d wrt its filters."""
    return _grad_wrt_weights(AbstractConv3d_gradWeights, 3, input, output_grad, filter_shape,
                             input_shape, dict(border_mode=border_mode, subsample=subsample,
                                               filter_flip=filter_flip,
                                               filter_dilation=filter_dilation,
                                               num_groups=num_groups))


def conv2d_transpose(input, filters, output_shape, filter_shape=None, border_mode="valid",
                     input_dilation=(1, 1), filter_flip=True, filter_dilation=(1, 1),
                     num_groups=1, unshared=False):
    """The transposed convolution: conv2d_grad_wrt_inputs of `input` with the forward
    convolution's subsample = input_dilation; filters are (input channels, output channels,
    rows, columns)."""
    return conv2d_grad_wrt_inputs(output_grad=input, filters=filters, input_shape=output_shape,
                                  filter_shape=filter_shape, border_mode=border_mode,
                                  subsample=input_dilation, filter_flip=filter_flip,
                                  filter_dilation=filter_dilation, num_groups=num_groups,
                                  unshared=unshared)


def _separable(conv, ndim, input, depthwise_filters, pointwise_filters, num_channels,
               input_shape, depthwise_filter_shape, pointwise_filter_shape, border_mode,
               subsample, filter_flip, filter_dilation):
    depthwise_shape = None
    if input_shape is not None and depthwise_filter_shape is not None:
        depthwise_shape = get_conv_output_shape(input_shape, depthwise_filter_shape,
                                                border_mode, subsample, filter_dilation)
    depthwise = conv(input, depthwise_filters, input_shape=input_shape,
                     filter_shape=depthwise_filter_shape, border_mode=border_mode,
                     subsample=subsample, filter_flip=filter_flip,
                     filter_dilation=filter_dilation, num_groups=num_channels)
    return conv(depthwise, pointwise_filters, input_shape=depthwise_shape,
                filter_shape=pointwise_filter_shape, border_mode="valid",
                subsample=(1,) * ndim, filter_flip=filter_flip,
                filter_dilation=(1,) * ndim, num_groups=1)


def separable_conv2d(input, depthwise_filters, pointwise_filters, num_channels,
                     input_shape=None, depthwise_filter_shape=None,
                     pointwise_filter_shape=None, border_mode="valid", subsample=(1, 1),
                     filter_flip=True, filter_dilation=(1, 1)):
    """A depthwise convolution (one group per channel) then a pointwise (1x1) one."""
    return _separable(conv2d, 2, input, depthwise_filters, pointwise_filters, num_channels,
                      input_shape, depthwise_filter_shape, pointwise_filter_shape,
                      border_mode, subsample, filter_flip, filter_dilation)


def separable_conv3d(input, depthwise_filters, pointwise_filters, num_channels,
                     input_shape=None, depthwise_filter_shape=None,
                     pointwise_filter_shape=None, border_mode="valid", subsample=(1, 1, 1),
                     filter_flip=True, filter_dilation=(1, 1, 1)):
    """separable_conv2d for volumes."""
    return _separable(conv3d, 3, input, depthwise_filters, pointwise_filters, num_channels,
                      input_shape, depthwise_filter_shape, pointwise_filter_shape,
                      border_mode, subsample, filter_flip, filter_dilation)


def causal_conv1d(input, filters, filter_shape, input_shape=None, subsample=1,
                  filter_flip=True, filter_dilation=1, num_groups=1, unshared=False):
    """A 1-d convolution of (batch, channels, time) whose output at t sees only the input up
    to t: a 2-d convolution with the time axis padded on the left by the dilated filter's
    length - 1."""
    input, filters = as_tensor_variable(input), as_tensor_variable(filters)
    if input.ndim != 3:
        raise ValueError("Input should be 3D for causal convolution.")
    if filters.ndim != 3:
        raise ValueError("Filters should be 3D for causal convolution")
    if input_shape is not None:
        if len(input_shape) != 3:
            raise ValueError("input_shape must have 3 entries")
        input_shape = tuple(input_shape) + (1,)
    if len(filter_shape) != 3:
        raise ValueError("filter_shape must have 3 entries")
    filter_shape = tuple(filter_shape) + (1,)
    left_pad = filter_dilation * (filter_shape[2] - 1)
    op = AbstractConv2d(imshp=input_shape, kshp=filter_shape, border_mode=((left_pad, 0), 0),
                        subsample=(subsample, 1), filter_flip=filter_flip,
                        filter_dilation=(filter_dilation, 1), num_groups=num_groups,
                        unshared=unshared)
    output = op(input.dimshuffle(0, 1, 2, "x"), filters.dimshuffle(0, 1, 2, "x"))
    return output[:, :, :, 0]


def bilinear_kernel_1D(ratio, normalize=True):
    """The 1-d bilinear interpolation kernel of an upsampling by `ratio`: 1..ratio..1, divided
    by ratio when normalized (floatX)."""
    from kiln import config
    from kiln.tensor.basic import cast
    from kiln.tensor.build import arange, concatenate
    half = arange(1, ratio + 1, dtype=config.floatX)
    kern = concatenate([half, half[-2::-1]])
    if normalize:
        kern = kern / cast(ratio, config.floatX)
    return kern


def bilinear_kernel_2D(ratio, normalize=True):
    """The 2-d bilinear kernel, the outer product of the 1-d ones; ratio is an int or a
    (vertical, horizontal) pair."""
    ratio_v, ratio_h = ratio if isinstance(ratio, tuple) else (ratio, ratio)
    hkern = bilinear_kernel_1D(ratio=ratio_h, normalize=normalize).dimshuffle("x", 0)
    vkern = bilinear_kernel_1D(ratio=ratio_v, normalize=normalize).dimshuffle(0, "x")
    return hkern * vkern


def frac_bilinear_upsampling(input, frac_ratio):
    """Bilinear upsampling of (batch, channels, rows, columns) images by a fraction p / q
    (frac_ratio: (p, q), or one (p, q) pair per axis): the edge-padded images, upsampled by p
    with the bilinear kernel spread by a dilation of p, taken every q-th pixel."""
    from math import gcd

    from kiln import config
    from kiln.tensor.basic import as_tensor_variable as as_tensor
    from kiln.tensor.build import concatenate, zeros
    row, col = input.shape[2], input.shape[3]
    up_input = input.reshape((-1, 1, row, col))
    if not isinstance(frac_ratio, tuple):
        raise ValueError("frac_ratio must be a tuple")
    if isinstance(frac_ratio[0], tuple):
        reduced = [(p // gcd(p, q), q // gcd(p, q)) for p, q in frac_ratio]
        ratio = (reduced[0][0], reduced[1][0])
        subsample = (reduced[0][1], reduced[1][1])
    else:
        p, q = frac_ratio
        ratio = (p // gcd(p, q),) * 2
        subsample = (q // gcd(p, q),) * 2
    padded = concatenate((up_input[:, :, :1, :], up_input, up_input[:, :, -1:, :]), axis=2)
    padded = concatenate((padded[:, :, :, :1], padded, padded[:, :, :, -1:]), axis=3)
    double_pad = (2 * as_tensor([row, col]) - 1) * np.array(ratio) + 1
    pad = double_pad // 2
    kern = bilinear_kernel_2D(ratio=ratio).dimshuffle("x", "x", 0, 1).astype(config.floatX)
    pad_kern = concatenate((
        zeros((kern.shape[0], kern.shape[1], pad[0], kern.shape[3]), dtype=config.floatX),
        kern,
        zeros((kern.shape[0], kern.shape[1], double_pad[0] - pad[0], kern.shape[3]),
              dtype=config.floatX)), axis=2)
    pad_kern = concatenate((
        zeros((pad_kern.shape[0], pad_kern.shape[1], pad_kern.shape[2], pad[1]),
              dtype=config.floatX),
        pad_kern,
        zeros((pad_kern.shape[0], pad_kern.shape[1], pad_kern.shape[2], double_pad[1] - pad[1]),
              dtype=config.floatX)), axis=3)
    upsampled = conv2d(pad_kern, padded, border_mode="valid", filter_dilation=ratio,
                       subsample=subsample)
    return upsampled.reshape((input.shape[0], input.shape[1], upsampled.shape[2],
                              upsampled.shape[3]))


def bilinear_upsampling(input, ratio=None, frac_ratio=None, batch_size=None,
                        num_input_channels=None, use_1D_kernel=True):
    """Upsamples (batch, channels, rows, columns) images by an integer ratio with bilinear
    interpolation: the images edge-padded by one pixel, then transposed convolutions with the
    bilinear kernel (two 1-d ones, or one 2-d); or by a fraction (frac_ratio, with
    use_1D_kernel=False: frac_bilinear_upsampling)."""
    from kiln.tensor.build import concatenate
    if ratio and frac_ratio:
        raise ValueError("can't use ratio and frac_ratio together")
    if not (ratio or frac_ratio):
        raise ValueError("No ratio (or frac_ratio) provided")
    if frac_ratio:
        if use_1D_kernel:
            raise ValueError("For fractional ratios 1D kernel method not implemented. You may "
                             "want to pass use_1D_kernel as False")
        return frac_bilinear_upsampling(input, frac_ratio=frac_ratio)
    try:
        up_bs = batch_size * num_input_channels
    except TypeError:
        up_bs = None
    row, col = input.shape[2], input.shape[3]
    up_input = input.reshape((-1, 1, row, col))
    padded = concatenate((up_input[:, :, :1, :], up_input, up_input[:, :, -1:, :]), axis=2)
    padded = concatenate((padded[:, :, :, :1], padded, padded[:, :, :, -1:]), axis=3)
    pad = 2 * ratio - (ratio - 1) // 2 - 1
    if use_1D_kernel:
        kern = bilinear_kernel_1D(ratio=ratio, normalize=True)
        rows_up = conv2d_grad_wrt_inputs(
            output_grad=padded, filters=kern.dimshuffle("x", "x", 0, "x"),
            input_shape=(up_bs, 1, row * ratio, col + 2), filter_shape=(1, 1, None, 1),
            border_mode=(pad, 0), subsample=(ratio, 1), filter_flip=True,
            filter_dilation=(1, 1))
        upsampled = conv2d_grad_wrt_inputs(
            output_grad=rows_up, filters=kern.dimshuffle("x", "x", "x", 0),
            input_shape=(up_bs, 1, row * ratio, col * ratio), filter_shape=(1, 1, 1, None),
            border_mode=(0, pad), subsample=(1, ratio), filter_flip=True,
            filter_dilation=(1, 1))
    else:
        kern = bilinear_kernel_2D(ratio=ratio, normalize=True)
        upsampled = conv2d_grad_wrt_inputs(
            output_grad=padded, filters=kern.dimshuffle("x", "x", 0, 1),
            input_shape=(up_bs, 1, row * ratio, col * ratio), filter_shape=(1, 1, None, None),
            border_mode=(pad, pad), subsample=(ratio, ratio), filter_flip=True,
            filter_dilation=(1, 1))
    return upsampled.reshape((input.shape[0], input.shape[1], row * ratio, col * ratio))
