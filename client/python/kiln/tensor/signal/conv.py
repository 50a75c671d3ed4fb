"""kiln.tensor.signal.conv (Aesara's aesara.tensor.signal.conv): conv2d of a 2-d image or a 3-d
stack of images by a 2-d filter or a 3-d stack of filters (a true convolution, border_mode
'valid' or 'full'), built on the abstract convolution as Aesara builds it on its ConvOp: inputs
reshaped to 4-d, the output flattened back (a dim dropped for each 2-d argument)."""
from kiln.tensor.build import join, stack
from kiln.tensor.nnet.abstract_conv import conv2d as _abstract_conv2d
from kiln.tensor.basic import reshape


def conv2d(input, filters, image_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), **kargs):
    """Convolves each image of `input` ((rows, columns) or (batch, rows, columns)) with each
    filter of `filters` ((rows, columns) or (filters, rows, columns)); the output is
    (batch, filters, rows, columns) without the dims of 2-d arguments."""
    from kiln.tensor.basic import flatten
    if input.ndim not in (2, 3):
        raise AssertionError("input must be a 2-d or 3-d tensor, not %d-d" % input.ndim)
    if filters.ndim not in (2, 3):
        raise AssertionError("filters must be a 2-d or 3-d tensor, not %d-d" % filters.ndim)
    if border_mode not in ("valid", "full"):
        raise ValueError("Mode %s not implemented" % str(border_mode))
    imshp = kshp = None
    if filter_shape and image_shape:
        imshp = (image_shape[0] if input.ndim == 3 else 1, 1) + tuple(image_shape[-2:])
        kshp = (filter_shape[0] if filters.ndim == 3 else 1, 1) + tuple(filter_shape[-2:])
    sym_bsize = input.shape[0] if input.ndim == 3 else 1
    sym_nkern = filters.shape[0] if filters.ndim == 3 else 1
    input4d = reshape(input, join(0, stack([sym_bsize, 1]), input.shape[-2:]), ndim=4)
    filters4d = reshape(filters, join(0, stack([sym_nkern, 1]), filters.shape[-2:]), ndim=4)
    output = _abstract_conv2d(input4d, filters4d, input_shape=imshp, filter_shape=kshp,
                              border_mode=border_mode, subsample=tuple(subsample))
    if input.ndim == 2 and filters.ndim == 2:
        output = flatten(output.T, ndim=2).T
    elif input.ndim == 2 or filters.ndim == 2:
        output = flatten(output.T, ndim=3).T
    return output
