"""kiln.tensor.nlinalg (Aesara's aesara.tensor.nlinalg). The ops are core's (kiln.ops: computed on
LAPACK as numpy.linalg computes them, with Aesara's gradients, and PyTensor 2.34's for SVD and
QRFull); matrix_dot, matrix_power, trace and norm are Aesara's graphs (norm with PyTensor's axis
and keepdims). slogdet is PyTensor's (Aesara 2.9.4 has none), computed by core's SLogDet.

Where Aesara's declared types are wrong, core gives the values' types: Lstsq's x has b's rank,
TensorSolve's result the solution's rank, MatrixPinv's static shape is transposed, and Eigh's
eigenvectors of a complex matrix are complex. inv is MatrixInverse (Aesara's separate Inv op
computes the same without a gradient)."""
import numpy as np

from kiln import scalar as aes  # noqa: F401  (Aesara's module aliases)
from kiln.graph import Apply, Op  # noqa: F401
from kiln.graph.null_type import DisconnectedType  # noqa: F401
from kiln import ops as _ops
from kiln.ops import EighGrad, Lstsq, TensorInv, TensorSolve  # noqa: F401
from kiln.tensor import basic as at  # noqa: F401
from kiln.tensor import math as tm  # noqa: F401
from kiln.tensor.array_funcs import extract_diag  # noqa: F401
from kiln.tensor.basic import as_tensor_variable
from kiln.tensor.nnet.basic import dot
from kiln.tensor.type import dvector, lscalar, matrix, scalar, vector  # noqa: F401

from kiln.tensor.blockwise import Blockwise, batched_view  # noqa: E402,F401

# numpy.linalg's ops are batched as PyTensor's Blockwise-wrapped ones: on a matrix each is itself
# (Aesara's op and name); on a stack of matrices its node is Blockwise{<op>, <signature>}, so
# det of a (1000, 8, 8) tensor is 1000 determinants.
MatrixInverse = batched_view(_ops.MatrixInverse, __name__)
Det = batched_view(_ops.Det, __name__)
SLogDet = batched_view(_ops.SLogDet, __name__)
Eig = batched_view(_ops.Eig, __name__)
Eigh = batched_view(_ops.Eigh, __name__)
MatrixPinv = batched_view(_ops.MatrixPinv, __name__)
SVD = batched_view(_ops.SVD, __name__)
QRFull = batched_view(_ops.QRFull, __name__)

__all__ = ["pinv", "inv", "trace", "matrix_dot", "det", "eig", "eigh", "qr", "svd", "lstsq",
           "matrix_power", "norm", "tensorinv", "tensorsolve", "slogdet"]

# Aesara's Inv: the same inverse as MatrixInverse (core has one op for both, with its gradient).
Inv = MatrixInverse

# Aesara's module-level op instances.
matrix_inverse = inv = MatrixInverse()
det = Det()
eig = Eig()
lstsq = Lstsq()


def pinv(x, hermitian=False):
    """The Moore-Penrose pseudo-inverse of a matrix (numpy.linalg.pinv, rcond 1e-15); hermitian
    takes it from the eigenvalues of a Hermitian x."""
    return MatrixPinv(hermitian=hermitian)(x)


def slogdet(x):
    """(sign, log |det x|) of a square matrix (numpy.linalg.slogdet), both of x's dtype."""
    return tuple(SLogDet()(x))


def eigh(a, UPLO="L"):
    """(w, v): the ascending eigenvalues and the eigenvectors (columns) of a Hermitian matrix,
    read from its lower ('L') or upper ('U') triangle."""
    return Eigh(UPLO)(a)


def qr(a, mode="reduced"):
    """numpy.linalg.qr: (q, r) for 'reduced' ((M, K), (K, N)) and 'complete' ((M, M), (M, N)), r
    alone (K, N) for 'r', (h, tau) ((N, M), (K,)) for 'raw'; K = min(M, N)."""
    return QRFull(mode)(a)


def svd(a, full_matrices=1, compute_uv=1):
    """numpy.linalg.svd: (u, s, vt), or s alone without compute_uv; full_matrices gives u (M, M)
    and vt (N, N), else (M, K) and (K, N)."""
    return SVD(bool(full_matrices), bool(compute_uv))(a)


def tensorinv(a, ind=2):
    """numpy.linalg.tensorinv: the inverse of a for tensordot over its first `ind` dims."""
    return TensorInv(ind)(a)


def tensorsolve(a, b, axes=None):
    """numpy.linalg.tensorsolve: x with tensordot(a, x, b.ndim) == b; axes of a moved last."""
    return TensorSolve(None if axes is None else tuple(axes))(a, b)


def matrix_dot(*args):
    """The product of the matrices, left to right: dot(dot(a, b), c)..."""
    out = args[0]
    for a in args[1:]:
        out = dot(out, a)
    return out


def trace(X):
    """The sum of the matrix's diagonal."""
    from kiln.tensor.array_funcs import diagonal
    return diagonal(as_tensor_variable(X)).sum()


def matrix_power(M, n):
    """M to the integer power n by squaring (pinv(M) to -n for n < 0, the identity for 0)."""
    from kiln.tensor.build import eye
    if n < 0:
        M = pinv(M)
        n = abs(n)
    if n == 0:
        return eye(M.shape[-2])
    if n <= 3:
        out = M
        for _ in range(n - 1):
            out = dot(out, M)
        return out
    result = z = None
    while n > 0:
        z = M if z is None else dot(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else dot(result, z)
    return result


def _is(ord, *values):
    return any(ord is v or (not isinstance(ord, str) and not isinstance(v, str) and ord == v)
               or (isinstance(ord, str) and ord == v) for v in values)


def _vector_norm(x, ord, axis, keepdims, complex_input):
    from kiln.tensor.math import neq, sqrt
    from kiln.tensor.reduce import max as kmax, min as kmin, sum as ksum
    if ord is None or (_is(ord, "fro", "f") and x.ndim >= 2):  # rows of a matrix, as PyTensor
        sq = (abs(x) ** 2) if complex_input else x * x
        return sqrt(ksum(sq, axis=axis, keepdims=keepdims))
    if _is(ord, "inf", np.inf):
        return kmax(abs(x), axis=axis, keepdims=keepdims)
    if _is(ord, "-inf", -np.inf):
        return kmin(abs(x), axis=axis, keepdims=keepdims)
    if _is(ord, 0):
        return ksum(neq(x, 0), axis=axis, keepdims=keepdims)
    if _is(ord, 1):
        return ksum(abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    return ksum(abs(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x, ord, row, col, complex_input):
    from kiln.tensor.math import sqrt
    from kiln.tensor.reduce import max as kmax, min as kmin, sum as ksum
    if ord is None or _is(ord, "fro", "f"):
        sq = (abs(x) ** 2) if complex_input else x * x
        return sqrt(ksum(sq, axis=(row, col)))
    if _is(ord, "inf", np.inf, "-inf", -np.inf):
        reduce = kmax if _is(ord, "inf", np.inf) else kmin
        return reduce(ksum(abs(x), axis=col), axis=row - 1 if row > col else row)
    if _is(ord, 1, -1):
        reduce = kmax if _is(ord, 1) else kmin
        return reduce(ksum(abs(x), axis=row), axis=col - 1 if col > row else col)
    if _is(ord, 2, -2, "nuc"):
        rest = [d for d in range(x.ndim) if d not in (row, col)]
        m = x.dimshuffle(rest + [row, col])  # a stack of matrices: their singular values
        s = SVD(False, False)(m)
        return kmax(s, axis=-1) if _is(ord, 2) else kmin(s, axis=-1) if _is(ord, -2) \
            else ksum(s, axis=-1)
    raise ValueError(f"Invalid norm order for matrices: {ord}")


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: a vector norm (ord None/2, 'inf'/np.inf, '-inf', 0, 1, any p) of a
    vector or along one axis, a matrix norm (None/'fro', 'inf', '-inf', 1, -1, 2, -2, 'nuc') of a
    matrix or over two axes; a tensor of higher rank without axis is a batch of matrices (its
    last two dims). Aesara's norm(x, ord) is the same call."""
    from kiln.tensor.shape import expand_dims
    x = as_tensor_variable(x)
    complex_input = x.dtype.startswith("complex")
    if x.ndim == 0:
        raise ValueError("'axis' entry is out of bounds.")
    if axis is None:
        axis = (0,) if x.ndim == 1 else (x.ndim - 2, x.ndim - 1)
    elif not isinstance(axis, (tuple, list)):
        try:
            axis = (int(axis),)
        except Exception as e:
            raise TypeError("'axis' must be None, an integer, or a tuple of integers") from e
    axis = tuple(int(a) % x.ndim for a in axis)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis[0], keepdims, complex_input)
    if len(axis) == 2:
        if axis[0] == axis[1]:
            raise ValueError("Duplicate axes given.")
        out = _matrix_norm(x, ord, axis[0], axis[1], complex_input)
        return expand_dims(out, sorted(axis)) if keepdims else out
    raise ValueError("Improper number of dimensions to norm.")
