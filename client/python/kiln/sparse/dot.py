"""kiln.sparse's matrix products (Aesara's, of aesara.sparse.basic): a sparse matrix times a
dense one (core's SparseDot), times a sparse one (SparseProductPairs), and the product sampled at
a sparse matrix's entries (SampledDot). A dense operand on the left is the transposed product."""
from kiln import ops
from kiln.sparse.basic import SparseFromDense, SparseOp, check, dense_from_sparse, transpose
from kiln.sparse.structure import coordinates, product
from kiln.sparse.type import is_scipy_sparse
from kiln.sparse.variable import (SparseVariable, as_sparse_or_tensor_variable,
                                  as_sparse_variable, sparse_variable)
from kiln.tensor.basic import as_tensor_variable, cast
from kiln.tensor.basic import transpose as tensor_transpose
from kiln.tensor.elemwise import upcast
from kiln.tensor.shape import specify_shape


def _float(dtype):
    """The dtype core's products compute in for a result of dtype: itself for a float, float64
    for an integer (cast back after); complex products are not supported."""
    if dtype.startswith("complex"):
        raise NotImplementedError("kiln.sparse: products of complex sparse matrices are not "
                                  "supported")
    return dtype if dtype.startswith("float") else "float64"


def sparse_dense(x, b, dtype):
    """x b for a sparse x and a dense matrix b, dense, of dtype. b's rows must be x's columns,
    which is checked when the function runs (SpecifyShape)."""
    b = specify_shape(b, (x.parts.shape[1], None))
    work = _float(dtype)
    if x.format == "csr":  # the rows straight from the indptr, as SciPy's csr_matvecs
        rows, cols, compressed = x.parts.indptr, x.parts.indices, True
    else:
        (rows, cols), compressed = coordinates(x), False
    out = ops.SparseDot(compressed=compressed)(cast(x.parts.data, work), rows, cols,
                                               x.parts.shape[0], cast(b, work))
    return cast(out, dtype)


def _sparse_vector(x, v, dtype):
    """x v for a sparse x and a dense vector v: a dense vector."""
    return sparse_dense(x, v.dimshuffle(0, "x"), dtype)[:, 0]


def _to_sparse(x):
    return as_sparse_variable(x) if is_scipy_sparse(x) else x


class StructuredDot(SparseOp):
    """The product of a sparse matrix with a dense one (dense) or a sparse one (sparse, in the
    first one's format); its gradient with respect to a is structured."""

    def make(self, a, b):
        a = as_sparse_variable(a)
        b = b if isinstance(b, SparseVariable) else as_tensor_variable(b)
        if b.ndim != 2:
            raise NotImplementedError("non-matrix b")
        dtype = upcast(a.dtype, b.dtype)
        if isinstance(b, SparseVariable):
            return sparse_variable(a.format, dtype, product(a, b, dtype))
        return sparse_dense(a, b, dtype)


_structured_dot = StructuredDot()


def structured_dot(x, y):
    """x y with at least one sparse operand: dense for a dense operand, else sparse."""
    x, y = _to_sparse(x), _to_sparse(y)
    if isinstance(x, SparseVariable):
        return _structured_dot(x, y)
    if not isinstance(y, SparseVariable):
        raise TypeError("structured_dot requires at least one sparse argument")
    return _transpose_any(_structured_dot(y.T, _transpose_any(as_tensor_variable(x))))


def _transpose_any(x):
    return transpose(x) if isinstance(x, SparseVariable) else tensor_transpose(x)


class Dot(SparseOp):
    """The product of two matrices or a matrix and a vector, at least one sparse: dense."""

    def __str__(self):
        return "SparseDot"

    def make(self, x, y):
        x, y = as_sparse_or_tensor_variable(x), as_sparse_or_tensor_variable(y)
        if not isinstance(x, SparseVariable) and not isinstance(y, SparseVariable):
            raise TypeError("Sparse dot product should have at least one sparse variable as "
                            "inputs, but the inputs are %s (%s) and %s (%s)."
                            % (x, x.type, y, y.type))
        for k, v in enumerate((x, y)):
            if not isinstance(v, SparseVariable) and v.ndim not in (1, 2):
                raise TypeError("Input %d (0-indexed) must have ndim of 1 or 2, %d given."
                                % (k, v.ndim))
        dtype = upcast(x.dtype, y.dtype)
        if isinstance(x, SparseVariable) and isinstance(y, SparseVariable):
            return dense_from_sparse(sparse_variable(x.format, dtype,
                                                     product(x, y, dtype)))
        if isinstance(x, SparseVariable):
            return sparse_dense(x, y, dtype) if y.ndim == 2 else _sparse_vector(x, y, dtype)
        if x.ndim == 1:  # v y = y^T v
            return _sparse_vector(y.T, x, dtype)
        return tensor_transpose(sparse_dense(y.T, tensor_transpose(x), dtype))


_dot = Dot()


def dot(x, y):
    """x y with at least one sparse operand (matrices, or a matrix and a vector): dense."""
    x, y = _to_sparse(x), _to_sparse(y)
    if not isinstance(x, SparseVariable) and not isinstance(y, SparseVariable):
        raise TypeError("dot: at least one operand must be sparse")
    return _dot(x, y)


class TrueDot(SparseOp):
    """The product of a sparse matrix with a matrix of its dtype: sparse, in its format."""

    def __init__(self, grad_preserves_dense=True):
        self.grad_preserves_dense = grad_preserves_dense

    def make(self, x, y):
        if not isinstance(x, SparseVariable):
            raise TypeError(x)
        y = y if isinstance(y, SparseVariable) else as_tensor_variable(y)
        if x.dtype != y.dtype:
            raise NotImplementedError()
        if isinstance(y, SparseVariable):
            return sparse_variable(x.format, x.dtype, product(x, y, x.dtype))
        check(y.ndim == 2, "TrueDot: y must be a matrix, got %s" % y.type)
        return SparseFromDense(x.format)(sparse_dense(x, y, x.dtype))


def true_dot(x, y, grad_preserves_dense=True):
    """x y with at least one sparse operand: sparse (in the sparse operand's format; the
    first one's when both are)."""
    x, y = _to_sparse(x), _to_sparse(y)
    if isinstance(x, SparseVariable):
        return TrueDot(grad_preserves_dense)(x, y)
    if not isinstance(y, SparseVariable):
        raise TypeError("true_dot: at least one operand must be sparse")
    return transpose(TrueDot(grad_preserves_dense)(y.T, tensor_transpose(as_tensor_variable(x))))


class SamplingDot(SparseOp):
    """x y^T computed only at the entries p stores, times them: sparse, p's structure and
    dtype (x is m x k and y n x k)."""

    def make(self, x, y, p):
        x, y, p = as_tensor_variable(x), as_tensor_variable(y), as_sparse_variable(p)
        work = _float(upcast(x.dtype, y.dtype))
        sampled = ops.SampledDot()(*coordinates(p), cast(x, work), cast(y, work))
        return p.with_data(cast(p.parts.data * sampled, p.dtype))


sampling_dot = SamplingDot()


class Usmm(SparseOp):
    """alpha * (x y) + z for matrices x and y, at least one sparse, and a dense z: dense."""

    def __str__(self):
        return "Usmm{no_inplace}"

    def make(self, alpha, x, y, z):
        if not isinstance(x, SparseVariable) and not isinstance(y, SparseVariable):
            raise TypeError(x)
        alpha, z = as_tensor_variable(alpha), as_tensor_variable(z)
        check(z.ndim == 2, "Usmm: z must be a matrix, got %s" % z.type)
        dtype = upcast(alpha.dtype, x.dtype, y.dtype, z.dtype)
        return cast(alpha * _dot(x, y) + z, dtype)


usmm = Usmm()
