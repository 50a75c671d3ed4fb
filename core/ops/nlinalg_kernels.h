// The kernels behind aesara.tensor.nlinalg's ops, through OpenBLAS's LAPACK: each computes one
// matrix problem on strided matrix views (so that a batched op can loop over a stack of them),
// for float, double, std::complex<float> and std::complex<double>. Numerical failures (a
// singular matrix, an iteration that does not converge) come back as INVALID_ARGUMENT with
// NumPy's LinAlgError wording; the caller prefixes the op's name. Dimensions must fit LAPACK's
// 32-bit integers (checked: INVALID_ARGUMENT otherwise); work buffers are tensors, charged to
// the call's memory budget.
#ifndef KILN_CORE_OPS_NLINALG_KERNELS_H_
#define KILN_CORE_OPS_NLINALG_KERNELS_H_

#include <complex>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ops/lapack_matrix.h"

namespace kiln::nlinalg {

using ::kiln::MatrixRef;

// A C-order (row-major) view of rows x cols elements at `data`.
template <typename T>
MatrixRef<T> RowMajor(T* data, int64_t rows, int64_t cols) {
  return {data, rows, cols, cols, 1};
}

using ::kiln::Real;
using ::kiln::RealOf;

// OK when rows and cols fit LAPACK's integers and rows * cols elements fit the tensor limits.
absl::Status CheckLapackDims(int64_t rows, int64_t cols);

// out = a^-1 (n x n); "Singular matrix" when a is singular.
template <typename T>
absl::Status Inverse(MatrixRef<const T> a, MatrixRef<T> out);

// The determinant of a (n x n), 1 for n = 0, 0 for a singular a.
template <typename T>
absl::StatusOr<T> Determinant(MatrixRef<const T> a);

// numpy.linalg.slogdet: (sign, log |det a|), sign of modulus 1 (0 and -inf when singular).
template <typename T>
absl::StatusOr<std::pair<T, Real<T>>> LogDeterminant(MatrixRef<const T> a);

// out (n x m) = numpy.linalg.pinv(a) (m x n) with rcond 1e-15: singular values at or below
// rcond * the largest are dropped; `hermitian` takes them from the eigenvalues of a.
template <typename T>
absl::Status PseudoInverse(MatrixRef<const T> a, bool hermitian, MatrixRef<T> out);

// numpy.linalg.eig of a (n x n): the eigenvalues in w (n) and the unit right eigenvectors as
// the columns of v, complex; "Eigenvalues did not converge" when LAPACK's QR iteration fails.
template <typename T>
absl::Status EigGeneral(MatrixRef<const T> a, std::complex<Real<T>>* w,
                        MatrixRef<std::complex<Real<T>>> v);

// numpy.linalg.eigh(a, uplo) of a (n x n), read from its lower ('L') or upper ('U') triangle:
// the eigenvalues ascending in w, the eigenvectors as the columns of v (skipped when v.data is
// null).
template <typename T>
absl::Status EigHermitian(MatrixRef<const T> a, char uplo, Real<T>* w, MatrixRef<T> v);

// numpy.linalg.svd of a (m x n): the k = min(m, n) singular values, descending, in s; when u.data
// is not null, u (m x m or m x k) and vt (n x n or k x n) as `full_matrices` says.
template <typename T>
absl::Status Svd(MatrixRef<const T> a, bool full_matrices, Real<T>* s, MatrixRef<T> u,
                 MatrixRef<T> vt);

// numpy.linalg.qr modes.
enum class QrMode { kReduced, kComplete, kR, kRaw };

// numpy.linalg.qr(a, mode) of a (m x n), k = min(m, n): kReduced q (m x k), r (k x n);
// kComplete q (m x m), r (m x n); kR r (k x n) only; kRaw h (n x m: LAPACK's reflectors,
// transposed) into q and tau (k) into `tau`.
template <typename T>
absl::Status Qr(MatrixRef<const T> a, QrMode mode, MatrixRef<T> q, MatrixRef<T> r, T* tau);

// numpy.linalg.lstsq(a, b, rcond) for a (m x n), b (m x nrhs): x (n x nrhs), the singular values
// of a in s (min(m, n)), the residual sums of squares per column in `residuals` (written only
// when the rank is n < m; the caller sizes them), and the rank as the result. rcond < 0 means
// machine precision.
template <typename T>
absl::StatusOr<int64_t> LeastSquares(MatrixRef<const T> a, MatrixRef<const T> b, Real<T> rcond,
                                     MatrixRef<T> x, Real<T>* s, Real<T>* residuals);

// x (n x nrhs) solving a x = b for a (n x n), b (n x nrhs); "Singular matrix" when a is singular.
template <typename T>
absl::Status Solve(MatrixRef<const T> a, MatrixRef<const T> b, MatrixRef<T> x);

// The gradient of numpy.linalg.eigh(a, uplo)'s (w, v) given their output gradients (gw, gv),
// Aesara's EighGrad: g = v (diag(gw) + F o (v^T gv)^T...) v^T folded onto the triangle `uplo`
// reads (tril(g) + triu(g, 1)^T for 'L'); all n x n but w, gw (n). Real types only.
template <typename T>
void EighGradient(MatrixRef<const T> v, const T* w, const T* gw, MatrixRef<const T> gv, char uplo,
                  MatrixRef<T> out);

}  // namespace kiln::nlinalg

#endif  // KILN_CORE_OPS_NLINALG_KERNELS_H_
