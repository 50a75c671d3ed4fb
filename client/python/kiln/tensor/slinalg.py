"""kiln.tensor.slinalg (Aesara's aesara.tensor.slinalg): Cholesky, the solvers, eigvalsh, expm and
the Lyapunov equations are core's ops (kiln.ops, computed on LAPACK as scipy.linalg computes
them, with Aesara's gradients); kron and the direct discrete Lyapunov solver are Aesara's graphs.
PyTensor's lu, lu_factor, lu_solve, pivot_to_permutation and block_diag (which Aesara lacks) have
PyTensor 2.34's names and semantics. On stacks of matrices (more dims than the op's gufunc
signature names) Cholesky, the solvers, Expm, the Lyapunov solvers and LUFactor build Blockwise
nodes, as PyTensor's Blockwise-wrapped ops; on matrices they are Aesara's ops.
"""
import warnings

from kiln import ops as _ops
from kiln.ops import (LU, BlockDiagonal, Eigvalsh, EigvalshGrad, ExpmGrad,  # noqa: F401
                      PivotToPermutations)
from kiln.tensor.basic import as_tensor_variable, dimshuffle
from kiln.tensor.blockwise import batched_view

# scipy.linalg's ops, batched over leading dims (Blockwise) where their inputs have them.
Cholesky = batched_view(_ops.Cholesky, __name__)
CholeskySolve = batched_view(_ops.CholeskySolve, __name__)
Solve = batched_view(_ops.Solve, __name__)
SolveTriangular = batched_view(_ops.SolveTriangular, __name__)
Expm = batched_view(_ops.Expm, __name__)
LUFactor = batched_view(_ops.LUFactor, __name__)
SolveContinuousLyapunov = batched_view(_ops.SolveContinuousLyapunov, __name__)
BilinearSolveDiscreteLyapunov = batched_view(_ops.BilinearSolveDiscreteLyapunov, __name__)

__all__ = ["cholesky", "solve", "eigvalsh", "kron", "expm"]

# Aesara's module-level op instances: cholesky(x) is Cholesky()'s call.
cholesky = Cholesky()
expm = Expm()
solvetriangular = SolveTriangular()
_solve_continuous_lyapunov = SolveContinuousLyapunov()
_solve_bilinear_direct_lyapunov = BilinearSolveDiscreteLyapunov()

_TRANS = {"N": 0, "T": 1, "C": 2, 0: 0, 1: 1, 2: 2}


def cho_solve(c_and_lower, b, check_finite=True):
    """x with a x = b, given (c, lower): the Cholesky factor of a and its side."""
    c, lower = c_and_lower
    return CholeskySolve(lower=lower, check_finite=check_finite)(c, b)


def solve(a, b, assume_a="gen", lower=False, check_finite=True):
    """x with a x = b for a square a assumed general ('gen'), symmetric ('sym'), Hermitian
    ('her') or positive definite ('pos'); lower: the triangle of a read (not for 'gen')."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"{assume_a} is not a recognized matrix structure")
    return Solve(assume_a=assume_a, lower=lower, check_finite=check_finite)(a, b)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, check_finite=True):
    """x with a x = b (trans 0 or 'N'), a^T x = b (1, 'T') or a^H x = b (2, 'C') for a
    triangular a (its lower or upper triangle), its diagonal taken as ones when unit_diagonal.
    Core's prop is the number: trans='T' prints trans=1."""
    if trans not in _TRANS:
        raise ValueError(f"trans must be one of 0, 1, 2, 'N', 'T', 'C'; got {trans!r}")
    return SolveTriangular(lower=lower, trans=_TRANS[trans], unit_diagonal=unit_diagonal,
                           check_finite=check_finite)(a, b)


def eigvalsh(a, b, lower=True):
    """The eigenvalues of the Hermitian a, or of the generalized problem a v = w b v (b
    positive definite); b None for the standard problem."""
    if b is None or getattr(b, "name", None) == "NoneConst":
        return Eigvalsh(lower)(a)
    return Eigvalsh(lower)(a, b)


def kron(a, b):
    """Aesara's kron: for two matrices the Kronecker product (scipy.linalg.kron); for other
    ranks (summing to 3 or more) Aesara's graph: outer(a, b) (of the flattened inputs)
    reshaped to a.shape + b.shape, dims 1 and 2 swapped, then merged as Aesara merges them (a
    vector result when the ranks sum to 3)."""
    from kiln.tensor.basic import reshape
    from kiln.tensor.build import concatenate
    from kiln.tensor.nnet.basic import outer

    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim + b.ndim <= 2:
        raise TypeError("kron: inputs dimensions must sum to 3 or more. "
                        f"You passed {int(a.ndim)} and {int(b.ndim)}.")
    o = outer(a.flatten() if a.ndim != 1 else a, b.flatten() if b.ndim != 1 else b)
    o = reshape(o, concatenate((a.shape, b.shape)), a.ndim + b.ndim)
    if o.ndim == 3:
        return dimshuffle(o, [1, 0, 2]).flatten()
    shf = dimshuffle(o, [0, 2, 1] + list(range(3, o.ndim)))
    return shf.reshape((o.shape[0] * o.shape[2], o.shape[1] * o.shape[3])
                       + tuple(o.shape[i] for i in range(4, o.ndim)))


def iscomplexobj(x):
    """True when x's dtype is complex (Aesara's helper of the same name)."""
    return "complex" in x.type.dtype


def _direct_solve_discrete_lyapunov(A, Q):
    """Aesara's direct method: solve(I - kron(A, conj(A)), Q.ravel()) reshaped to Q's shape."""
    from kiln.tensor.basic import reshape
    from kiln.tensor.build import eye
    from kiln.tensor.math import conjugate

    A_ = as_tensor_variable(A)
    Q_ = as_tensor_variable(Q)
    AA = kron(A_, conjugate(A_)) if "complex" in A_.type.dtype else kron(A_, A_)
    X = solve(eye(AA.shape[0]) - AA, Q_.ravel())
    return reshape(X, Q_.shape)


def solve_discrete_lyapunov(A, Q, method="direct"):
    """X with A X A^H - X + Q = 0: method "direct" (a Kronecker system, for small N) or
    "bilinear" (a transformation to a continuous equation, an op)."""
    if method not in ["direct", "bilinear"]:
        raise ValueError(
            f'Parameter "method" must be one of "direct" or "bilinear", found {method}')
    if method == "direct":
        return _direct_solve_discrete_lyapunov(A, Q)
    return _solve_bilinear_direct_lyapunov(A, Q)


def solve_continuous_lyapunov(A, Q):
    """X with A X + X A^H = Q (scipy.linalg.solve_continuous_lyapunov)."""
    return _solve_continuous_lyapunov(A, Q)


def lu(a, permute_l=False, check_finite=True, p_indices=False, overwrite_a=False):
    """a = P L U (PyTensor's lu): (P, L, U); (P L, U) when permute_l; (p, L, U) with
    a = L[p] U when p_indices. overwrite_a is ignored, as in PyTensor."""
    return LU(permute_l=permute_l, check_finite=check_finite, p_indices=p_indices)(a)


def lu_factor(a, *, check_finite=True, overwrite_a=False):
    """(LU, pivots): LAPACK's packed factors and 0-based row interchanges (int32)."""
    return LUFactor(check_finite=check_finite)(a)


def pivot_to_permutation(p, inverse=False):
    """The permutation (int64) of LAPACK's row interchanges p, or its inverse."""
    return PivotToPermutations(inverse=inverse)(as_tensor_variable(p))


def lu_solve(LU_and_pivots, b, trans=False, b_ndim=None, check_finite=True, overwrite_b=False):
    """x with a x = b (a^T x = b when trans) given lu_factor(a), as PyTensor's graph: b's rows
    permuted, then two triangular solves."""
    from kiln.tensor.sort import argsort

    lu_, pivots = LU_and_pivots
    lu_, pivots, b = as_tensor_variable(lu_), as_tensor_variable(pivots), as_tensor_variable(b)
    inv_permutation = pivot_to_permutation(pivots, inverse=True)
    x = b if trans else b[inv_permutation]
    t = 1 if trans else 0
    x = solve_triangular(lu_, x, trans=t, lower=not trans, unit_diagonal=not trans,
                         check_finite=check_finite)
    x = solve_triangular(lu_, x, trans=t, lower=bool(trans), unit_diagonal=bool(trans),
                         check_finite=check_finite)
    return x[argsort(inv_permutation)] if trans else x


def block_diag(*matrices):
    """The matrices on the diagonal of a zero matrix (scipy.linalg.block_diag)."""
    return BlockDiagonal(n_inputs=len(matrices))(*matrices)


_DEPRECATED = {
    "solve_lower_triangular": ("`solve_lower_triangular` is deprecated; use `solve` instead.",
                               lambda: SolveTriangular(lower=True)),
    "solve_upper_triangular": ("`solve_upper_triangular` is deprecated; use `solve` instead.",
                               lambda: SolveTriangular(lower=False)),
    "solve_symmetric": ("`solve_symmetric` is deprecated; use `solve` instead.",
                        lambda: Solve(assume_a="sym")),
}


def __getattr__(name):
    """Aesara's deprecated names, with its DeprecationWarning."""
    if name in _DEPRECATED:
        msg, make = _DEPRECATED[name]
        warnings.warn(msg, DeprecationWarning, stacklevel=2)
        return make()
    raise AttributeError(f"module {__name__} has no attribute {name}")


def __dir__():
    return sorted(__all__ + list(_DEPRECATED))
