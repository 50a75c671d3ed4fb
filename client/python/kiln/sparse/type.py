"""SparseTensorType (Aesara's aesara.sparse.type): the type of a CSR or CSC matrix, and its values
as SciPy holds them. A value is canonical here: its indices sorted and unique within each row
(CSR) or column (CSC), indices and indptr int64. SciPy is imported when a value is first read,
not with kiln."""
import sys

import numpy as np

from kiln.graph import Variable
from kiln.tensor.elemwise import upcast
from kiln.tensor.variable import SparseOperand

FORMATS = ("csr", "csc")
# The dtypes Aesara's SparseTensorType accepts (neither bool nor float16).
DTYPES = ("float32", "float64", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64",
          "int64", "complex64", "complex128")
BSR_UNSUPPORTED = ("kiln.sparse: the BSR format is not supported; Kiln carries CSR and CSC "
                   "matrices (csr_matrix, csc_matrix)")


def is_scipy_sparse(value):
    """Whether value is a SciPy sparse matrix (no import: none exists before SciPy's)."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and module.issparse(value)


def canonical(matrix, format):
    """A SciPy sparse matrix in `format` with its indices sorted and unique (duplicates summed),
    as Kiln's ops expect; the matrix itself when it already is."""
    matrix = matrix.asformat(format)
    if not matrix.has_canonical_format:
        matrix = matrix.copy()
        matrix.sum_duplicates()
    return matrix


def value_parts(matrix):
    """The four arrays of a canonical CSR or CSC matrix: data, indices, indptr, shape."""
    return [np.ascontiguousarray(matrix.data), matrix.indices.astype(np.int64),
            matrix.indptr.astype(np.int64), np.array(matrix.shape, dtype=np.int64)]


def value_from_parts(format, data, indices, indptr, shape):
    """The SciPy matrix of these four arrays."""
    import scipy.sparse
    cls = scipy.sparse.csr_matrix if format == "csr" else scipy.sparse.csc_matrix
    return cls((data, indices, indptr), shape=tuple(int(s) for s in shape))


class SparseTensorType:
    """Aesara's type of a sparse matrix: a format ("csr" or "csc"), a dtype and a static shape
    (None for an unknown dim). Its variables (SparseVariable) carry the four arrays of SciPy's
    layout as tensors; called, it makes a new input variable: csr_dmatrix("x")."""

    ndim = 2
    # SparseVariable, set by kiln.sparse.variable (the layer above).
    variable_type = None

    def __init__(self, format, dtype, shape=None, name=None, broadcastable=None):
        if format == "bsr":
            raise NotImplementedError(BSR_UNSUPPORTED)
        if format not in FORMATS:
            raise ValueError('unsupported format "%s" not in list' % (format,))
        dtype = np.dtype(dtype).name
        if dtype not in DTYPES:
            raise TypeError("Unsupported dtype for SparseTensorType: %s" % dtype)
        if shape is None:
            shape = ((None, None) if broadcastable is None
                     else tuple(1 if b else None for b in broadcastable))
        self.format = format
        self.dtype = dtype
        self.shape = tuple(None if s is None else int(s) for s in shape)
        self.name = name

    broadcastable = property(lambda self: tuple(s == 1 for s in self.shape))

    def __eq__(self, other):
        return (isinstance(other, SparseTensorType)
                and (self.format, self.dtype, self.shape) == (other.format, other.dtype,
                                                              other.shape))

    def __hash__(self):
        return hash(("sparse", self.format, self.dtype, self.shape))

    def __str__(self):
        return "SparseTensorType{dtype=%r, format=%r, shape=%s}" % (self.dtype, self.format,
                                                                     self.shape)

    def __repr__(self):
        return "Sparse(%s, %s, %s)" % (self.dtype, self.shape, self.format)

    def clone(self, dtype=None, shape=None, format=None):
        """This type with another dtype, static shape or format."""
        return SparseTensorType(format or self.format, dtype or self.dtype,
                                self.shape if shape is None else shape)

    def is_super(self, otype):
        """Whether every variable of otype is one of this type: the same format and dtype, and
        each of this type's static dims equal in otype."""
        return (isinstance(otype, SparseTensorType) and otype.format == self.format
                and otype.dtype == self.dtype
                and all(s is None or s == o for s, o in zip(self.shape, otype.shape)))

    def __call__(self, name=None):
        """A new input variable of this type, named `name`."""
        return self.variable_type.input(self, name)

    def filter(self, value, strict=False, allow_downcast=None, name=None):
        """value as a canonical SciPy matrix of this type, by Aesara's rules: any SciPy sparse
        matrix, dense array or nested list is converted to this format; its dtype must upcast
        to this one (unless allow_downcast). TypeError otherwise, after `name: `."""
        import scipy.sparse
        prefix = "%s: " % name if name else ""
        if isinstance(value, (Variable, SparseOperand)):
            raise TypeError(prefix + "Expected an array-like object, but found a Variable: "
                            "maybe you are trying to call a function on a (possibly shared) "
                            "variable instead of a numeric array?")
        cls = scipy.sparse.csr_matrix if self.format == "csr" else scipy.sparse.csc_matrix
        if is_scipy_sparse(value) and value.format == self.format and value.dtype == self.dtype:
            matrix = value
        elif strict:
            raise TypeError(prefix + "%r is not sparse, or not the right dtype (is %s, expected "
                            "%s)" % (value, getattr(value, "dtype", type(value).__name__),
                                     self.dtype))
        elif allow_downcast:
            matrix = cls(value, dtype=self.dtype)
        else:
            matrix = cls(value)
            if upcast(self.dtype, matrix.dtype.name) != self.dtype:
                raise TypeError(prefix + "Expected %s dtype but got %s"
                                % (self.dtype, matrix.dtype))
            matrix = matrix.astype(self.dtype)
        if not all(want is None or want == got for want, got in zip(self.shape, matrix.shape)):
            raise TypeError(prefix + "The type's shape (%s) is not compatible with the data's "
                            "(%s)" % (self.shape, matrix.shape))
        return canonical(matrix, self.format)
