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


# Aesara's op classes and functions at this path: the ops are core's (kiln.ops), the
# functions write through kiln.tensor.indexing.
from kiln.ops import (AdvancedIncSubtensor, AdvancedIncSubtensor1,  # noqa: E402
                      AdvancedSubtensor, AdvancedSubtensor1, IncSubtensor, Subtensor)
from kiln.tensor.exceptions import AdvancedIndexingError, NotScalarConstantError  # noqa: E402,F401
from kiln.tensor.basic import get_scalar_constant_value  # noqa: E402,F401

__all__ += ["Subtensor", "IncSubtensor", "AdvancedSubtensor1", "AdvancedIncSubtensor1",
            "AdvancedSubtensor", "AdvancedIncSubtensor",
            "advanced_subtensor1", "advanced_inc_subtensor1", "advanced_set_subtensor1",
            "advanced_subtensor", "advanced_inc_subtensor", "advanced_set_subtensor",
            "AdvancedIndexingError", "get_scalar_constant_value"]


def advanced_subtensor1(x, ilist):
    """x[ilist] for an integer vector ilist: x's rows at those indices."""
    return AdvancedSubtensor1()(x, ilist)


def advanced_inc_subtensor1(x, y, ilist):
    """x with y added at the rows ilist (repeated indices accumulate)."""
    return AdvancedIncSubtensor1(set=0)(x, y, ilist)


def advanced_set_subtensor1(x, y, ilist):
    """x with y written at the rows ilist."""
    return AdvancedIncSubtensor1(set=1)(x, y, ilist)


def advanced_subtensor(x, *args):
    """x[args] with advanced (integer array or boolean) indices, as NumPy reads them
    (AdvancedSubtensor)."""
    return subtensor(x, tuple(args))


def advanced_inc_subtensor(x, y, *args):
    """x with y added at x[args], repeated indices accumulating (AdvancedIncSubtensor)."""
    return inc_subtensor(subtensor(x, tuple(args)), y)


def advanced_set_subtensor(x, y, *args):
    """x with y written at x[args] (AdvancedIncSubtensor{set_instead_of_inc=True})."""
    return set_subtensor(subtensor(x, tuple(args)), y)
