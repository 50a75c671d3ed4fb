// Unblocked factorizations and solves of small dense matrices (n up to kMaxDim), in place on
// contiguous row-major buffers: the per-item kernels of the batched slinalg fast path
// (small_linalg_batch.cc), where a LAPACK call, its copies and checks cost more than the work.
// Instantiated for float and double, and for N, the matrices' order when known at compile time (2
// to 8: the loops unrolled; 0: n given at run time). Each follows LAPACK's unblocked routine
// (potf2, getf2, getrs, trtrs), so results agree with the LAPACK path to rounding.
#ifndef KILN_CORE_OPS_SMALL_LINALG_H_
#define KILN_CORE_OPS_SMALL_LINALG_H_

#include <cstdint>

namespace kiln::small_linalg {

// The largest n the batched fast path takes; past it the per-item LAPACK path runs.
inline constexpr int64_t kMaxDim = 32;
// The largest n with loops unrolled for it (N below).
inline constexpr int kMaxFixedDim = 8;

// The lower Cholesky factor L of the n x n w (w = L L^T) in place, from w's lower triangle; its
// strict upper triangle zeroed. 0, or k > 0 when the leading minor of order k is not positive
// definite (potrf's info; w then partly overwritten).
template <typename T, int N = 0>
int CholeskyLower(T* w, int n);

// getf2: w = P L U in place with partial pivoting (the first largest |w(i, j)| of each column),
// L's unit diagonal implied; piv[j] is the row swapped with row j. 0, or k > 0 when U(k-1, k-1)
// is exactly zero (the factorization still completed).
template <typename T, int N = 0>
int LuFactor(T* w, int n, int* piv);

// getrs: b (n x k) = m^-1 b, or (m^T)^-1 b when `transpose`, for m = P L U from LuFactor.
template <typename T, int N = 0>
void LuSolve(const T* lu, const int* piv, int n, bool transpose, T* b, int k);

// trsm: b (n x k) = op(a)^-1 b for the `lower` (else upper) triangle of the n x n a (the other
// triangle unread), op transposing when `transpose`, a's diagonal taken as ones when `unit`.
// No check of the diagonal (a zero gives infinities, as LAPACK's trsm).
template <typename T, int N = 0>
void TriangularSolve(const T* a, int n, bool lower, bool transpose, bool unit, T* b, int k);

// trtrs's check: 0, or k > 0 when a's diagonal entry k - 1 is exactly zero.
template <typename T>
int ZeroDiagonal(const T* a, int n);

}  // namespace kiln::small_linalg

#endif  // KILN_CORE_OPS_SMALL_LINALG_H_
