"""kiln.tensor.slinalg (Aesara's aesara.tensor.slinalg). Kiln's core has no ops for it yet:
cholesky, solve, eigvalsh, expm and the triangular solves are absent, not stubbed. kron is
built from Kiln's products."""
from kiln.tensor.basic import as_tensor_variable, dimshuffle

__all__ = ["kron"]


def kron(a, b):
    """The Kronecker product of two matrices (or two tensors of the same rank >= 2)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim != b.ndim or a.ndim < 2:
        raise TypeError("kron: kron(a, b) takes tensors of the same rank >= 2; got ranks %d and "
                        "%d" % (a.ndim, b.ndim))
    n = a.ndim
    # out[i0, j0, i1, j1, ...] = a[i0, i1, ...] b[j0, j1, ...], then pairs merged
    pa = dimshuffle(a, [d for k in range(n) for d in (k, "x")])
    pb = dimshuffle(b, [d for k in range(n) for d in ("x", k)])
    out = pa * pb
    shape = [a.shape[k] * b.shape[k] for k in range(n)]
    return out.reshape(shape, ndim=n)
