"""kiln.sparse: Aesara's aesara.sparse over Kiln. A CSR or CSC matrix is carried as SciPy's four
arrays: data (its dtype), indices and indptr (int64 vectors), shape (an int64 vector of 2); a
CSR matrix's indptr runs over its rows and its indices are column numbers, a CSC one's the other
way round, and the indices are sorted and unique within each row (column). In a graph a
SparseVariable holds the four as tensors (x.parts), which core's sparse ops compute with
(core/ops/sparse.h); function() takes and returns SciPy matrices, kiln.shared(matrix) makes a
sparse shared variable, and grad with respect to a sparse variable is the matrix of its
structure whose entries are the gradients of its stored entries (structured)."""
from kiln.sparse import basic, math as _math_module, sharedvar  # noqa: F401
from kiln.sparse.basic import (  # noqa: F401
    CSC, CSM, CSR, Cast, CSMProperties, Diag, DenseFromSparse, EnsureSortedIndices,
    GetItem2d, GetItem2Lists, GetItemList, GetItemScalar, HStack, Neg, Remove0,
    SparseFromDense, SparseOp, SquareDiagonal, Transpose, VStack, all_dtypes, bcast,
    bsr_dmatrix, bsr_fmatrix, bsr_matrix, ccast, cast, clean, complex_dtypes,
    continuous_dtypes, csc_dmatrix, csc_fmatrix, csc_from_dense, csc_matrix, csm_data,
    csm_indices, csm_indptr, csm_properties, csm_shape, csr_dmatrix, csr_fmatrix,
    csr_from_dense, csr_matrix, dcast, dense_from_sparse, diag, discrete_dtypes,
    ensure_sorted_indices, fcast, float_dtypes, get_item_2d, get_item_2lists, get_item_list,
    get_item_scalar, hstack, icast, int_dtypes, integer_dtypes, lcast, matrix, neg, remove0,
    sp_ones_like, sp_zeros_like, sparse_grad, square_diagonal, transpose, uint_dtypes,
    vstack, wcast, zcast)
from kiln.sparse.dot import (  # noqa: F401
    Dot, SamplingDot, StructuredDot, TrueDot, Usmm, dot, sampling_dot, structured_dot, true_dot,
    usmm)
from kiln.sparse.math import (  # noqa: F401
    STRUCTURED, AddSD, AddSS, AddSSData, ColScaleCSC, MulSD, MulSS, MulSV, RowScaleCSC, SpSum,
    StructuredAddSV, add, add_s_d, add_s_s, add_s_s_data, col_scale, conj, conjugate, eq, ge,
    gt, le, lt, mul, mul_s_d, mul_s_s, mul_s_v, neq, row_scale, sp_sum, structured_add_s_v,
    structured_monoid, sub)
from kiln.sparse.sharedvar import SparseTensorSharedVariable  # noqa: F401
from kiln.sparse.sharedvar import sparse_constructor as shared  # noqa: F401
from kiln.sparse.type import SparseTensorType  # noqa: F401
from kiln.sparse.variable import (  # noqa: F401
    SparseConstant, SparseVariable, as_sparse, as_sparse_or_tensor_variable, as_sparse_variable,
    constant)

# The comparison ops (EqualSS, less_than_s_d...) and the functions of the stored entries
# (structured_exp, sqrt, rint...): each named in its module's table.
globals().update({name: getattr(_math_module, name) for name in STRUCTURED})
globals().update({name: getattr(_math_module, name) for name in dir(_math_module)
                  if name.endswith(("SS", "SD", "_s_s", "_s_d")) and not name.startswith("_")})
as_symbolic_sparse = as_sparse_variable
