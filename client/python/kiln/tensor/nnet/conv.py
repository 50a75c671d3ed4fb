"""kiln.tensor.nnet.conv (Aesara's aesara.tensor.nnet.conv): the deprecated conv2d, which
convolves (flips the filters) with border_mode 'valid' or 'full' and a stride.

Aesara builds its legacy ConvOp; Kiln builds the AbstractConv2d that Aesara's own rewrites turn
that op into, with the same values (so dprint shows AbstractConv2d, not ConvOp)."""
import warnings

from kiln.tensor.nnet.abstract_conv import conv2d as _abstract_conv2d


def _constant_shape(shape, name):
    """A shape hint of ints (and None): constants are read, symbolic sizes refused."""
    from kiln.tensor.basic import as_tensor_variable, get_scalar_constant_value
    from kiln.tensor.exceptions import NotScalarConstantError
    if shape is None:
        return None
    out = []
    for v in shape:
        if v is None:
            out.append(None)
            continue
        try:
            out.append(int(get_scalar_constant_value(as_tensor_variable(v))))
        except NotScalarConstantError:
            raise NotScalarConstantError(
                "The convolution need that the shape information are constant values. We got "
                "%s for the %s parameter" % (v, name)) from None
    return tuple(out)


def _check_types(input, filters):
    """ConvOp's checks of its inputs (Aesara's messages): 4D images and kernels of one dtype."""
    if input.ndim != 4:
        raise TypeError('ConvOp (make_node) requires input be a 4D tensor; received "<%s>" (%d '
                        'dims)' % (input.type, input.ndim))
    if filters.ndim != 4:
        raise TypeError("make_node requires 4D tensor of kernels")
    if input.dtype != filters.dtype:
        raise NotImplementedError("The image and the kernel must have the same type.inputs(%s), "
                                  "kerns(%s)" % (input.dtype, filters.dtype))


def conv2d(input, filters, image_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), **kargs):
    """The legacy conv2d of (batch, channels, rows, columns) images by (filters, channels, rows,
    columns) filters; border_mode 'valid' or 'full'."""
    warnings.warn("aesara.tensor.nnet.conv.conv2d is deprecated. Use aesara.tensor.nnet.conv2d "
                  "instead.", DeprecationWarning)
    from kiln.tensor.basic import as_tensor_variable
    if border_mode not in ("valid", "full"):
        raise ValueError("Mode %s not implemented" % str(border_mode))
    input, filters = as_tensor_variable(input), as_tensor_variable(filters)
    _check_types(input, filters)
    image_shape = _constant_shape(image_shape, "image_shape")
    filter_shape = _constant_shape(filter_shape, "filter_shape")
    if image_shape and filter_shape and None not in (image_shape[1], filter_shape[1]) \
            and image_shape[1] != filter_shape[1]:
        raise ValueError("image_shape %s and filter_shape %s disagree on the channels"
                         % (image_shape, filter_shape))
    return _abstract_conv2d(input, filters, input_shape=image_shape, filter_shape=filter_shape,
                            border_mode=border_mode, subsample=tuple(subsample))
