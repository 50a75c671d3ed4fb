"""kiln.sparse's types, constructors, conversions and structural ops (Aesara's
aesara.sparse.basic): each of Aesara's ops is a SparseOp whose call builds the result's parts
with core's ops. Arithmetic is in kiln.sparse.math, products in kiln.sparse.dot."""
import numpy as np

from kiln import ops
from kiln.config import config
from kiln.sparse.structure import assemble, coordinates, dims, other_format, scatter, take
from kiln.sparse.type import BSR_UNSUPPORTED, DTYPES, SparseTensorType
from kiln.sparse.variable import SparseVariable, as_sparse_variable, sparse_variable
from kiln.tensor.basic import (ELEMWISE, as_tensor_variable, constant, dimshuffle,
                               ones_like, shape, switch, zeros_like)
from kiln.tensor.basic import cast as tensor_cast
from kiln.tensor.build import arange, concatenate, stack
from kiln.tensor.elemwise import upcast
from kiln.tensor.indexing import nonzero
from kiln.tensor.reduce import sum as tensor_sum
from kiln.tensor.variable import TensorVariable

class SparseOp:
    """One of Aesara's sparse ops. Kiln has no sparse node: calling the op builds the parts of
    its result (or its dense result) with core's ops. Ops of one class with equal props are
    equal; str is Aesara's."""

    __props__ = ()

    def _props(self):
        return tuple(getattr(self, p) for p in self.__props__)

    def __eq__(self, other):
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self):
        return hash((type(self).__name__, self._props()))

    def __str__(self):
        if not self.__props__:
            return type(self).__name__
        return "%s{%s}" % (type(self).__name__,
                           ", ".join("%s=%r" % (p, getattr(self, p)) for p in self.__props__))

    __repr__ = __str__

    def __call__(self, *inputs):
        return self.make(*inputs)

    def make(self, *inputs):
        raise NotImplementedError


def check(condition, message):
    """AssertionError(message) unless condition: where Aesara asserts an argument's kind."""
    if not condition:
        raise AssertionError(message)


# --- types and constructors --------------------------------------------------------------------

def matrix(format, name=None, dtype=None):
    """A new sparse input of this format and dtype (floatX by default)."""
    return SparseTensorType(format, dtype or config.floatX)(name)


def csr_matrix(name=None, dtype=None):
    """A new CSR input."""
    return matrix("csr", name, dtype)


def csc_matrix(name=None, dtype=None):
    """A new CSC input."""
    return matrix("csc", name, dtype)


def bsr_matrix(name=None, dtype=None):
    """Aesara's BSR input: not supported (NotImplementedError); Kiln has CSR and CSC."""
    raise NotImplementedError(BSR_UNSUPPORTED)


bsr_dmatrix = bsr_fmatrix = bsr_matrix
csr_dmatrix = SparseTensorType("csr", "float64")
csc_dmatrix = SparseTensorType("csc", "float64")
csr_fmatrix = SparseTensorType("csr", "float32")
csc_fmatrix = SparseTensorType("csc", "float32")

all_dtypes = list(DTYPES)
complex_dtypes = [t for t in all_dtypes if t.startswith("complex")]
float_dtypes = [t for t in all_dtypes if t.startswith("float")]
int_dtypes = [t for t in all_dtypes if t.startswith("int")]
uint_dtypes = [t for t in all_dtypes if t.startswith("uint")]
integer_dtypes = int_dtypes + uint_dtypes
continuous_dtypes = complex_dtypes + float_dtypes
discrete_dtypes = integer_dtypes


# --- the four arrays ---------------------------------------------------------------------------

class CSMProperties(SparseOp):
    """The four tensors of a CSR or CSC matrix: [data, indices, indptr, shape] (int64 index
    vectors, where Aesara's are int32)."""

    def make(self, csm):
        return list(as_sparse_variable(csm).parts)


csm_properties = CSMProperties()


def csm_data(csm):
    """The data vector (the stored entries) of a sparse matrix."""
    return csm_properties(csm)[0]


def csm_indices(csm):
    """The indices vector of a sparse matrix (column numbers for CSR, row numbers for CSC)."""
    return csm_properties(csm)[1]


def csm_indptr(csm):
    """The indptr vector of a sparse matrix (where each row's, or column's, entries start)."""
    return csm_properties(csm)[2]


def csm_shape(csm):
    """The shape of a sparse matrix: an int64 vector of 2."""
    return csm_properties(csm)[3]


def _index_vector(v, what):
    """v as an int64 vector, or Aesara's TypeError naming `what`."""
    v = as_tensor_variable(np.asarray(v, dtype="int64") if not hasattr(v, "type") else v)
    if v.ndim != 1 or v.dtype not in integer_dtypes:
        raise TypeError("%s must be vector of integers" % what, v, v.type)
    return tensor_cast(v, "int64")


class CSM(SparseOp):
    """The sparse matrix of four tensors: CSM(format)(data, indices, indptr, shape). The indices
    must be sorted and unique within each row (column), as SciPy's canonical format; core's
    kernels check that they are in range when the matrix is used."""

    __props__ = ("format",)

    def __init__(self, format):
        if format not in ("csr", "csc"):
            raise ValueError("format must be one of: 'csr', 'csc'", format)
        self.format = format

    def make(self, data, indices, indptr, shape):
        data = as_tensor_variable(data)
        if data.ndim != 1:
            raise TypeError("data argument must be a vector", data.type, data.ndim)
        parts = [data, _index_vector(indices, "indices"), _index_vector(indptr, "indptr"),
                 _index_vector(shape, "shape")]
        return sparse_variable(self.format, data.dtype, parts)


CSC = CSM("csc")
CSR = CSM("csr")


# --- conversions -------------------------------------------------------------------------------

class DenseFromSparse(SparseOp):
    """The dense matrix of a sparse one (a tensor given is returned as it is). Its gradient is
    structured: the gradient of each stored entry."""

    def __init__(self, structured=True):
        self.sparse_grad = structured

    def __str__(self):
        return "DenseFromSparse{structured_grad=%s}" % self.sparse_grad

    def __call__(self, x):
        return x if not isinstance(x, SparseVariable) else self.make(x)

    def make(self, x):
        x = as_sparse_variable(x)
        return ops.SparseToDense()(x.parts.data, *coordinates(x), x.parts.shape)


dense_from_sparse = DenseFromSparse()


class SparseFromDense(SparseOp):
    """The sparse matrix of a dense one's nonzero entries (a vector is a row, a scalar 1x1; a
    sparse one given is returned as it is). Its gradient reaches the nonzero entries."""

    __props__ = ("format",)

    def __init__(self, format):
        self.format = format

    def __str__(self):
        return "SparseFromDense{%s}" % self.format

    def __call__(self, x):
        return x if isinstance(x, SparseVariable) else self.make(x)

    def make(self, x):
        x = as_tensor_variable(x)
        if x.ndim > 2:
            raise TypeError("kiln.sparse has no sparse tensor types with more than 2 "
                            "dimensions, but %s.ndim = %d" % (x, x.ndim))
        if x.ndim < 2:
            x = dimshuffle(x, ["x"] * (2 - x.ndim) + list(range(x.ndim)))
        # nonzero reads in C order: row by row (CSR's order), or column by column of x.T.
        if self.format == "csr":
            major, minor = nonzero(x)
            rows, cols = major, minor
        else:
            major, minor = nonzero(x.T)
            rows, cols = minor, major
        return sparse_variable(self.format, x.dtype, [
            ops.SparseGather()(x, rows, cols), minor,
            ops.CompressIndptr()(major, dims(self.format, shape(x))[0]), shape(x)])


csr_from_dense = SparseFromDense("csr")
csc_from_dense = SparseFromDense("csc")


class Cast(SparseOp):
    """The matrix with its entries cast to out_type."""

    __props__ = ("out_type",)

    def __init__(self, out_type):
        self.out_type = out_type

    def __str__(self):
        return "Cast(%s)" % self.out_type

    def make(self, x):
        x = as_sparse_variable(x)
        return x.with_data(tensor_cast(x.parts.data, self.out_type))


bcast, wcast, icast, lcast = Cast("int8"), Cast("int16"), Cast("int32"), Cast("int64")
fcast, dcast, ccast, zcast = (Cast("float32"), Cast("float64"), Cast("complex64"),
                              Cast("complex128"))


def cast(variable, dtype):
    """The sparse matrix with its entries cast to dtype."""
    return Cast(dtype)(variable)



# --- structure ---------------------------------------------------------------------------------

class Transpose(SparseOp):
    """The transpose: the same arrays, read as the other format (CSR <-> CSC)."""

    def __str__(self):
        return "SparseTranspose"

    def make(self, x):
        x = as_sparse_variable(x)
        p = x.parts
        return sparse_variable(other_format(x.format), x.dtype,
                               [p.data, p.indices, p.indptr, p.shape[::-1]])


transpose = Transpose()


class Neg(SparseOp):
    """The negated matrix."""

    def __str__(self):
        return "SparseNeg"

    def make(self, x):
        x = as_sparse_variable(x)
        return x.with_data(-x.parts.data)


neg = Neg()


class Remove0(SparseOp):
    """The matrix without its explicitly stored zeros."""

    __props__ = ("inplace",)

    def __init__(self, inplace=False):
        self.inplace = inplace

    def __str__(self):
        return "Remove0{%s}" % ("inplace" if self.inplace else "")

    def make(self, x):
        x = as_sparse_variable(x)
        p = x.parts
        kept = nonzero(p.data)[0]
        major = take(ops.ExpandIndptr()(p.indptr), kept)
        return sparse_variable(x.format, x.dtype, [
            take(p.data, kept), take(p.indices, kept),
            ops.CompressIndptr()(major, dims(x.format, p.shape)[0]), p.shape])


remove0 = Remove0()


class EnsureSortedIndices(SparseOp):
    """The matrix itself: Kiln's indices are always sorted (SciPy's canonical format)."""

    __props__ = ("inplace",)

    def __init__(self, inplace):
        self.inplace = inplace

    def __str__(self):
        return "EnsureSortedIndices{%s}" % ("inplace" if self.inplace else "no_inplace")

    def make(self, x):
        return as_sparse_variable(x)


ensure_sorted_indices = EnsureSortedIndices(inplace=False)


def clean(x):
    """The matrix without explicit zeros, its indices sorted (they always are in Kiln)."""
    return ensure_sorted_indices(remove0(x))


def sp_ones_like(x):
    """The matrix of x's structure with every stored entry 1."""
    x = as_sparse_variable(x)
    return x.with_data(ones_like(x.parts.data))


def sp_zeros_like(x):
    """A matrix of x's shape, format and dtype with no stored entry."""
    x = as_sparse_variable(x)
    p = x.parts
    return sparse_variable(x.format, x.dtype, [
        constant(np.zeros(0, dtype=x.dtype)), constant(np.zeros(0, dtype="int64")),
        zeros_like(p.indptr), p.shape])


class HStack(SparseOp):
    """The matrices side by side (their rows must agree), in `format` (CSC by default)."""

    __props__ = ("format", "dtype")
    axis = 1  # the axis the blocks are joined along

    def __init__(self, format=None, dtype=None):
        if dtype is None:
            raise ValueError("The output dtype must be specified.")
        self.format = format or "csc"
        self.dtype = dtype

    def __str__(self):
        return "%s(%s,%s)" % (type(self).__name__, self.format, self.dtype)

    def make(self, *blocks):
        if not blocks:
            raise ValueError("Cannot join an empty list of sparses.")
        blocks = [as_sparse_variable(b) for b in blocks]
        rows, cols, total = [], [], None  # total: the blocks' length along axis so far
        for b in blocks:
            coords = list(coordinates(b))
            if total is not None:
                coords[self.axis] = coords[self.axis] + total
            rows.append(coords[0])
            cols.append(coords[1])
            length = b.parts.shape[self.axis]
            total = length if total is None else total + length
        data = concatenate([tensor_cast(b.parts.data, self.dtype) for b in blocks])
        first = blocks[0].parts.shape
        out_shape = stack([first[0], total] if self.axis == 1 else [total, first[1]])
        parts = assemble(self.format, data, concatenate(rows), concatenate(cols), out_shape)
        return sparse_variable(self.format, self.dtype, parts)


class VStack(HStack):
    """The matrices one above the other (their columns must agree), in `format` (CSC by
    default)."""

    axis = 0


def hstack(blocks, format=None, dtype=None):
    """The sparse matrices side by side (SciPy's hstack), of their upcast dtype by default."""
    blocks = [as_sparse_variable(b) for b in blocks]
    return HStack(format, dtype or upcast(*[b.dtype for b in blocks]))(*blocks)


def vstack(blocks, format=None, dtype=None):
    """The sparse matrices one above the other (SciPy's vstack)."""
    blocks = [as_sparse_variable(b) for b in blocks]
    return VStack(format, dtype or upcast(*[b.dtype for b in blocks]))(*blocks)


class SquareDiagonal(SparseOp):
    """The square CSC matrix with this dense vector on its diagonal."""

    def make(self, diag):
        diag = as_tensor_variable(diag)
        if diag.ndim != 1:
            raise TypeError("data argument must be a vector", diag.type)
        n = diag.shape[0]
        return sparse_variable("csc", diag.dtype, [
            diag, arange(n, dtype="int64"), arange(n + 1, dtype="int64"), stack([n, n])])


square_diagonal = SquareDiagonal()


class Diag(SparseOp):
    """The diagonal of a sparse matrix, as a dense vector (of length min(shape), NumPy's)."""

    def make(self, x):
        x = as_sparse_variable(x)
        rows, cols = coordinates(x)
        on = ELEMWISE["eq"](rows, cols)
        n = ELEMWISE["minimum"](x.parts.shape[0], x.parts.shape[1])
        return scatter(n, x.dtype, [(switch(on, x.parts.data, 0), switch(on, rows, 0))])


diag = Diag()


# --- indexing ----------------------------------------------------------------------------------

class GetItemScalar(SparseOp):
    """The entry x[i, j] of a sparse matrix, a dense scalar (0 where none is stored)."""

    def make(self, x, index):
        x = as_sparse_variable(x)
        rows, cols = coordinates(x)
        eq = ELEMWISE["eq"]
        here = ELEMWISE["and_"](eq(rows, index[0]), eq(cols, index[1]))
        return tensor_cast(tensor_sum(switch(here, x.parts.data, 0)), x.dtype)


class GetItem2Lists(SparseOp):
    """The entries x[ind1[k], ind2[k]] of a sparse matrix, as a dense vector (read from the
    dense matrix)."""

    def make(self, x, ind1, ind2):
        return ops.SparseGather()(dense_from_sparse(x), tensor_cast(ind1, "int64"),
                                  tensor_cast(ind2, "int64"))


class GetItemList(SparseOp):
    """The rows of a sparse matrix listed in `index`, as a sparse matrix of its type (read from
    the dense matrix)."""

    def make(self, x, index):
        x = as_sparse_variable(x)
        return SparseFromDense(x.format)(dense_from_sparse(x)[as_tensor_variable(index)])


class GetItem2d(SparseOp):
    """The sparse matrix x[a:b, c:d] (slices only: Kiln has no sparse vector; read from the
    dense matrix)."""

    def make(self, x, index):
        x = as_sparse_variable(x)
        index = tuple(index) if isinstance(index, (tuple, list)) else (index,)
        check(len(index) in (1, 2), "a sparse matrix takes one or two slices")
        for i in index:
            if not isinstance(i, slice):
                if np.isscalar(i) or getattr(i, "ndim", None) == 0:
                    raise NotImplementedError("Kiln has no sparse vector: use X[a:b, c:d], "
                                              "X[a:b, c:c+1] or X[a:b] instead.")
                raise ValueError("Advanced indexing is not implemented for sparse matrices. "
                                 "Argument not supported: %s" % (i,))
        return SparseFromDense(x.format)(dense_from_sparse(x)[index])


get_item_scalar = GetItemScalar()
get_item_2lists = GetItem2Lists()
get_item_list = GetItemList()
get_item_2d = GetItem2d()


def _is_scalar_index(i):
    return np.isscalar(i) or (isinstance(i, TensorVariable) and i.ndim == 0
                              and i.dtype in integer_dtypes)


def getitem(x, index):
    """x[index] as Aesara reads it: x[i, j] a dense scalar, x[list1, list2] a dense vector,
    x[list] rows and x[a:b, c:d] a sparse matrix."""
    index = index if isinstance(index, tuple) else (index,)
    if len(index) == 2 and _is_scalar_index(index[0]) and _is_scalar_index(index[1]):
        return get_item_scalar(x, index)
    if len(index) == 2 and isinstance(index[0], list):
        return get_item_2lists(x, index[0], index[1])
    if len(index) == 1 and isinstance(index[0], list):
        return get_item_list(x, index[0])
    return get_item_2d(x, index)


def sparse_grad(var):
    """Aesara's request for a sparse gradient of x[indices]: Kiln's gradient of
    AdvancedSubtensor1 is dense, so var is returned as it is (TypeError for other ops)."""
    if var.owner is None or type(var.owner.op).__name__ not in ("AdvancedSubtensor1",
                                                                "AdvancedSubtensor"):
        raise TypeError("Sparse gradient is only implemented for AdvancedSubtensor and "
                        "AdvancedSubtensor1")
    return var
