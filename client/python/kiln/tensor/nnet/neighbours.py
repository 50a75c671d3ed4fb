"""aesara.tensor.nnet.neighbours: images2neibs (core's Images2Neibs op) and neibs2images, its
inverse on disjoint windows, built as Aesara builds it."""
from kiln.ops import Images2Neibs
from kiln.tensor.basic import as_tensor_variable

__all__ = ["Images2Neibs", "images2neibs", "neibs2images"]


def images2neibs(ten4, neib_shape, neib_step=None, mode="valid"):
    """The windows of shape neib_shape (rows, columns) of each image ten4[i, j], taken every
    neib_step (default: neib_shape, disjoint windows), as the rows of a matrix:
    Images2Neibs{mode}(ten4, neib_shape, neib_step). Modes: 'valid', 'ignore_borders',
    'wrap_centered', 'half', 'full'."""
    neib_shape = as_tensor_variable(neib_shape)
    # Omitted, the step is neib_shape itself (the same variable, as in Aesara's make_node).
    neib_step = neib_shape if neib_step is None else neib_step
    return Images2Neibs(mode)(ten4, neib_shape, neib_step)


def neibs2images(neibs, neib_shape, original_shape, mode="valid"):
    """The 4-d tensor of original_shape whose disjoint windows of neib_shape images2neibs gave
    `neibs` ('valid'; 'ignore_borders' fills the cut borders with zeros)."""
    from kiln.tensor.basic import floatx
    from kiln.tensor.build import concatenate, stack, zeros
    from kiln.tensor.indexing import set_subtensor
    neibs = as_tensor_variable(neibs)
    neib_shape = as_tensor_variable(neib_shape)
    original_shape = as_tensor_variable(original_shape)
    new_neib_shape = stack([original_shape[-1] // neib_shape[1], neib_shape[1]])
    output_2d = images2neibs(neibs.dimshuffle("x", "x", 0, 1), new_neib_shape, mode=mode)
    if mode == "ignore_borders":
        # set_subtensor keeps a symbolic original_shape checked when the function runs.
        valid_shape = original_shape
        valid_shape = set_subtensor(valid_shape[2],
                                    (valid_shape[2] // neib_shape[0]) * neib_shape[0])
        valid_shape = set_subtensor(valid_shape[3],
                                    (valid_shape[3] // neib_shape[1]) * neib_shape[1])
        output_4d = output_2d.reshape(valid_shape, ndim=4)
        for d in (2, 3):  # the borders the windows left out, as zeros
            pad_shape = [output_4d.shape[i] for i in range(4)]
            pad_shape[d] = original_shape[d] - valid_shape[d]
            output_4d = concatenate([output_4d, zeros(pad_shape, dtype=floatx())], axis=d)
    elif mode == "valid":
        output_4d = output_2d.reshape(original_shape, ndim=4)
    else:
        raise NotImplementedError("neibs2images do not support mode=%s" % mode)
    return output_4d
