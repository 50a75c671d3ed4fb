"""Sparse shared variables (Aesara's aesara.sparse.sharedvar): kiln.shared of a SciPy matrix. The
value lives as four shared tensors (data, indices, indptr, shape), which functions read and
update like any other; the variable reads and writes them as one SciPy matrix."""
from kiln.sparse.type import SparseTensorType, value_from_parts, value_parts
from kiln.sparse.variable import SparseVariable
from kiln.tensor.sharedvar import SharedVariable

_PART_NAMES = ("data", "indices", "indptr", "shape")


class SparseTensorSharedVariable(SparseVariable):
    """A sparse matrix whose value functions read and update: its parts are shared variables
    ("W.data"...). get_value() is a SciPy matrix of its format; set_value takes any matrix its
    type's filter does."""

    def __init__(self, type, value, name=None):
        arrays = value_parts(type.filter(value, allow_downcast=False, name=name))
        parts = [SharedVariable(a, name=None if name is None else "%s.%s" % (name, kind),
                                shape=(2,) if kind == "shape" else None)
                 for kind, a in zip(_PART_NAMES, arrays)]
        super().__init__(type, parts, name=name)

    def get_value(self, borrow=False):
        """The value: a SciPy matrix of the variable's format."""
        return value_from_parts(self.format,
                                *[p.get_value(borrow=borrow) for p in self.parts])

    def set_value(self, value, borrow=False):
        """Sets the value: a SciPy matrix (any format, converted), as the type's filter reads
        it."""
        arrays = value_parts(self.type.filter(value, allow_downcast=False, name=str(self)))
        for part, array in zip(self.parts, arrays):
            part.set_value(array)


def sparse_constructor(value, name=None, strict=False, allow_downcast=None, borrow=False,
                       format=None):
    """Aesara's shared(value) for a SciPy sparse matrix: a SparseTensorSharedVariable of its
    format (or `format`) and dtype."""
    type = SparseTensorType(format or value.format, value.dtype)
    return SparseTensorSharedVariable(type, value, name=name)
