// The kernels of aesara.tensor.slinalg's ops on LAPACK (OpenBLAS): each solves one matrix problem
// given pointers and strides, so that a batched op can loop over leading dims. Instantiated for
// float, double, std::complex<float> and std::complex<double>; sizes are the caller's to check
// (every dim at most kMaxLapackDim, the buffers allocated).
#ifndef KILN_CORE_OPS_SLINALG_KERNELS_H_
#define KILN_CORE_OPS_SLINALG_KERNELS_H_

#include <complex>
#include <cstdint>
#include <type_traits>

#include "core/ops/lapack_matrix.h"

namespace kiln::slinalg {

// The largest dim LAPACK's 32-bit integers take.
inline constexpr int64_t kMaxLapackDim = 0x7fffffff;

using ::kiln::MatrixRef;
using ::kiln::Real;
using ::kiln::RealOf;

// The structure Solve assumes of a (scipy.linalg.solve's assume_a).
enum class Structure { kGeneral, kSymmetric, kHermitian, kPositive };

// The factor of a (square) in out: lower (a = L L^H) or upper (a = U^H U), from a's triangle on
// that side; the other triangle zeroed. 0, or k > 0 when the leading minor of order k is not
// positive definite.
template <typename T>
int Cholesky(MatrixRef<const T> a, bool lower, MatrixRef<T> out);

// x (n x k) = a^-1 b for a square a of the given structure (its `lower` triangle read when
// symmetric, Hermitian or positive). 0, or k > 0 when a is singular (or not positive definite)
// at k.
template <typename T>
int Solve(MatrixRef<const T> a, MatrixRef<const T> b, Structure structure, bool lower,
          MatrixRef<T> x);

// getrf of the square a: the packed factors (L's unit diagonal implied) into lu and the 0-based
// row interchanges into pivots (row i was swapped with row pivots[i]). 0, or k > 0 when U's k-th
// diagonal entry is exactly zero (the factors are still complete, as scipy returns them).
template <typename T>
int LuFactor(MatrixRef<const T> a, MatrixRef<T> lu, int32_t* pivots);

// x = op(a)^-1 b for a triangular a (op: trans 0 none, 1 transpose, 2 conjugate transpose),
// its diagonal taken as ones when unit_diagonal. 0, or k > 0 when a's k-th diagonal entry is 0.
template <typename T>
int SolveTriangular(MatrixRef<const T> a, MatrixRef<const T> b, bool lower, int trans,
                    bool unit_diagonal, MatrixRef<T> x);

// x = (c c^H)^-1 b (lower) or (c^H c)^-1 b (upper) given the Cholesky factor c.
template <typename T>
void CholeskySolve(MatrixRef<const T> c, bool lower, MatrixRef<const T> b, MatrixRef<T> x);

// The eigenvalues w (ascending, n of them, stride w_stride) of the Hermitian a, or of the
// generalized problem a v = w b v when b.data is not null (b Hermitian positive definite), from
// the `lower` triangles; the eigenvectors (b-orthonormal columns) in v when v.data is not null.
// 0, or k > 0 for LAPACK's failures (k > n: b is not positive definite at k - n).
template <typename T>
int Eigh(MatrixRef<const T> a, MatrixRef<const T> b, bool lower, Real<T>* w, int64_t w_stride,
         MatrixRef<T> v);

// Aesara's EigvalshGrad: with (w, v) the eigenpairs of (a, b), ga = v diag(gw) v^H and
// gb = -v diag(gw w) v^H (gb only when b.data is not null), each folded onto the `lower`
// triangle as tri(g) + tri1(g)^T. LAPACK's info as Eigh's.
template <typename T>
int EighGrad(MatrixRef<const T> a, MatrixRef<const T> b, MatrixRef<const T> gw, bool lower,
             MatrixRef<T> ga, MatrixRef<T> gb);

// exp(a) of a square a (scaling and squaring with Pade approximants, Al-Mohy and Higham 2009's
// orders and thresholds as scipy.linalg.expm). Non-finite entries give a NaN result.
template <typename T>
int Expm(MatrixRef<const T> a, MatrixRef<T> out);

// The gradient of sum(g * exp(a)) with respect to a: the Frechet derivative of exp at a^H in
// the direction g, the top-right block of exp([[a^H, g], [0, a^H]]).
template <typename T>
int ExpmGrad(MatrixRef<const T> a, MatrixRef<const T> g, MatrixRef<T> out);

// x solving a x + x a^H = q (scipy.linalg.solve_continuous_lyapunov) through a's Schur form.
// 0, or 1 when the Schur decomposition fails to converge (a's eigenvalues perturbed when some
// pair sums to nearly zero is not a failure: LAPACK's result is returned, as scipy does).
template <typename T>
int SolveContinuousLyapunov(MatrixRef<const T> a, MatrixRef<const T> q, MatrixRef<T> x);

// x solving a x a^H - x + q = 0 by the bilinear transformation to a continuous equation
// (scipy.linalg.solve_discrete_lyapunov, method="bilinear"). 0, or k > 0 when a + I is
// singular, -1 when the Schur decomposition fails.
template <typename T>
int SolveDiscreteLyapunovBilinear(MatrixRef<const T> a, MatrixRef<const T> q, MatrixRef<T> x);

}  // namespace kiln::slinalg

#endif  // KILN_CORE_OPS_SLINALG_KERNELS_H_
