"""kiln.tensor.subtensor (Aesara's aesara.tensor.subtensor): indexing reads and writes, and
take (AdvancedSubtensor1)."""
from kiln.graph import CoreOp
from kiln.tensor.basic import as_tensor_variable, flatten
from kiln.tensor.indexing import inc_subtensor, set_subtensor, subtensor

__all__ = ["take", "set_subtensor", "inc_subtensor", "subtensor"]


def take(a, indices, axis=None):
    """numpy.take with an integer vector of indices: rows of a (along axis 0), or elements of
    the flattened a when axis is None. Other axes: a[:, indices] through a transpose."""
    a, indices = as_tensor_variable(a), as_tensor_variable(indices)
    if indices.ndim != 1:
        raise NotImplementedError("take: only an integer vector of indices is supported, "
                                  "got %s" % indices.type)
    if axis is None:
        a, axis = flatten(a), 0
    axis %= a.ndim
    if axis == 0:
        return CoreOp("AdvancedSubtensor1", [])(a, indices)
    order = [axis] + [d for d in range(a.ndim) if d != axis]
    back = sorted(range(a.ndim), key=lambda d: order[d])
    return take(a.dimshuffle(*order), indices, 0).dimshuffle(*back)
