"""kiln.tensor.blas (Aesara's aesara.tensor.blas): the BLAS ops core's specialize phase makes
of dots (Dot22, Gemm, Gemv), and batched_dot. Compiling rewrites dot into them on the server;
the ops can also be applied directly (gemm_no_inplace(z, a, x, y, b) is b z + a x y)."""
from kiln.ops import Dot, Dot22, Gemm, Gemv  # noqa: F401
from kiln.graph.standin import C_CODE, unsupported
from kiln.tensor.basic import as_tensor_variable
from kiln.tensor.nnet.basic import matmul

__all__ = ["Dot22", "Gemm", "Gemv", "gemm_no_inplace", "gemm_inplace", "gemv_no_inplace",
           "gemv_inplace", "batched_dot"]

gemm_no_inplace = Gemm(inplace=False)
gemm_inplace = Gemm(inplace=True)
gemm = gemm_no_inplace
gemv_no_inplace = Gemv(inplace=False)
gemv_inplace = Gemv(inplace=True)
gemv = gemv_no_inplace
ldflags = unsupported("ldflags", C_CODE)
blas_header_text = unsupported("blas_header_text", C_CODE)


def batched_dot(a, b):
    """The dot of a[i] and b[i] for each i of the first (batch) dim."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim < 2 or b.ndim < 2:
        raise TypeError("batched_dot: both arguments need a batch dim and at least one more")
    if a.ndim == 2 and b.ndim == 2:
        return (a * b).sum(axis=1)
    if a.ndim == 2:
        return matmul(a.dimshuffle(0, "x", 1), b)[:, 0]
    if b.ndim == 2:
        return matmul(a, b.dimshuffle(0, 1, "x"))[..., 0]
    return matmul(a, b)
