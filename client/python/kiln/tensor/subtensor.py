"""kiln.tensor.subtensor (Aesara's aesara.tensor.subtensor): indexing reads and writes, and
take."""
from kiln.tensor.basic import as_tensor_variable, flatten
from kiln.tensor.indexing import inc_subtensor, set_subtensor, subtensor

__all__ = ["take", "set_subtensor", "inc_subtensor", "subtensor"]


def take(a, indices, axis=None):
    """numpy.take: a's entries at the integer indices (of any rank) along axis, or of the
    flattened a when axis is None."""
    a, indices = as_tensor_variable(a), as_tensor_variable(indices)
    if axis is None:
        a, axis = flatten(a), 0
    return subtensor(a, (slice(None),) * (axis % a.ndim) + (indices,))
