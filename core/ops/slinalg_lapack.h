// Private to the slinalg kernels (*_kernels.cc only): the LAPACK and BLAS routines they call,
// overloaded on the element type (work matrices in slinalg_work.h).
#ifndef KILN_CORE_OPS_SLINALG_LAPACK_H_
#define KILN_CORE_OPS_SLINALG_LAPACK_H_

#include <cblas.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "core/ops/lapack.h"
#include "core/ops/slinalg_kernels.h"
#include "core/ops/slinalg_work.h"

namespace kiln::slinalg::internal {

using lapack::Int;

// Overloads (one per element type) of the LAPACK routines the kernels call. ?potrf:
// the Cholesky factor.
inline void Potrf(char uplo, Int n, float* a, Int lda, Int* info) {
  lapack::spotrf_(&uplo, &n, a, &lda, info, 1);
}
inline void Potrf(char uplo, Int n, double* a, Int lda, Int* info) {
  lapack::dpotrf_(&uplo, &n, a, &lda, info, 1);
}
inline void Potrf(char uplo, Int n, lapack::C* a, Int lda, Int* info) {
  lapack::cpotrf_(&uplo, &n, a, &lda, info, 1);
}
inline void Potrf(char uplo, Int n, lapack::Z* a, Int lda, Int* info) {
  lapack::zpotrf_(&uplo, &n, a, &lda, info, 1);
}

// ?potrs: solve with a Cholesky factor.
inline void Potrs(char uplo, Int n, Int k, const float* a, Int lda, float* b, Int ldb, Int* info) {
  lapack::spotrs_(&uplo, &n, &k, a, &lda, b, &ldb, info, 1);
}
inline void Potrs(char uplo, Int n, Int k, const double* a, Int lda, double* b, Int ldb,
                  Int* info) {
  lapack::dpotrs_(&uplo, &n, &k, a, &lda, b, &ldb, info, 1);
}
inline void Potrs(char uplo, Int n, Int k, const lapack::C* a, Int lda, lapack::C* b, Int ldb,
                  Int* info) {
  lapack::cpotrs_(&uplo, &n, &k, a, &lda, b, &ldb, info, 1);
}
inline void Potrs(char uplo, Int n, Int k, const lapack::Z* a, Int lda, lapack::Z* b, Int ldb,
                  Int* info) {
  lapack::zpotrs_(&uplo, &n, &k, a, &lda, b, &ldb, info, 1);
}

// ?getrf of a square matrix.
inline void Getrf(Int n, float* a, Int lda, Int* ipiv, Int* info) {
  lapack::sgetrf_(&n, &n, a, &lda, ipiv, info);
}
inline void Getrf(Int n, double* a, Int lda, Int* ipiv, Int* info) {
  lapack::dgetrf_(&n, &n, a, &lda, ipiv, info);
}
inline void Getrf(Int n, lapack::C* a, Int lda, Int* ipiv, Int* info) {
  lapack::cgetrf_(&n, &n, a, &lda, ipiv, info);
}
inline void Getrf(Int n, lapack::Z* a, Int lda, Int* ipiv, Int* info) {
  lapack::zgetrf_(&n, &n, a, &lda, ipiv, info);
}

// ?getrs: solve with getrf's factors.
inline void Getrs(char t, Int n, Int k, const float* a, Int lda, const Int* ipiv, float* b, Int ldb,
                  Int* info) {
  lapack::sgetrs_(&t, &n, &k, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void Getrs(char t, Int n, Int k, const double* a, Int lda, const Int* ipiv, double* b,
                  Int ldb, Int* info) {
  lapack::dgetrs_(&t, &n, &k, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void Getrs(char t, Int n, Int k, const lapack::C* a, Int lda, const Int* ipiv, lapack::C* b,
                  Int ldb, Int* info) {
  lapack::cgetrs_(&t, &n, &k, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void Getrs(char t, Int n, Int k, const lapack::Z* a, Int lda, const Int* ipiv, lapack::Z* b,
                  Int ldb, Int* info) {
  lapack::zgetrs_(&t, &n, &k, a, &lda, ipiv, b, &ldb, info, 1);
}

// ?posv: a positive definite solve.
inline void Posv(char uplo, Int n, Int k, float* a, Int lda, float* b, Int ldb, Int* info) {
  lapack::sposv_(&uplo, &n, &k, a, &lda, b, &ldb, info, 1);
}
inline void Posv(char uplo, Int n, Int k, double* a, Int lda, double* b, Int ldb, Int* info) {
  lapack::dposv_(&uplo, &n, &k, a, &lda, b, &ldb, info, 1);
}
inline void Posv(char uplo, Int n, Int k, lapack::C* a, Int lda, lapack::C* b, Int ldb, Int* info) {
  lapack::cposv_(&uplo, &n, &k, a, &lda, b, &ldb, info, 1);
}
inline void Posv(char uplo, Int n, Int k, lapack::Z* a, Int lda, lapack::Z* b, Int ldb, Int* info) {
  lapack::zposv_(&uplo, &n, &k, a, &lda, b, &ldb, info, 1);
}

// ?sysv (hermitian: ?hesv for complex types, ?sysv for real ones).
inline void Sysv(bool hermitian, char uplo, Int n, Int k, float* a, Int lda, Int* ipiv, float* b,
                 Int ldb, float* work, Int lwork, Int* info) {
  (void)hermitian;
  lapack::ssysv_(&uplo, &n, &k, a, &lda, ipiv, b, &ldb, work, &lwork, info, 1);
}
inline void Sysv(bool hermitian, char uplo, Int n, Int k, double* a, Int lda, Int* ipiv, double* b,
                 Int ldb, double* work, Int lwork, Int* info) {
  (void)hermitian;
  lapack::dsysv_(&uplo, &n, &k, a, &lda, ipiv, b, &ldb, work, &lwork, info, 1);
}
inline void Sysv(bool hermitian, char uplo, Int n, Int k, lapack::C* a, Int lda, Int* ipiv,
                 lapack::C* b, Int ldb, lapack::C* work, Int lwork, Int* info) {
  if (hermitian) {
    lapack::chesv_(&uplo, &n, &k, a, &lda, ipiv, b, &ldb, work, &lwork, info, 1);
  } else {
    lapack::csysv_(&uplo, &n, &k, a, &lda, ipiv, b, &ldb, work, &lwork, info, 1);
  }
}
inline void Sysv(bool hermitian, char uplo, Int n, Int k, lapack::Z* a, Int lda, Int* ipiv,
                 lapack::Z* b, Int ldb, lapack::Z* work, Int lwork, Int* info) {
  if (hermitian) {
    lapack::zhesv_(&uplo, &n, &k, a, &lda, ipiv, b, &ldb, work, &lwork, info, 1);
  } else {
    lapack::zsysv_(&uplo, &n, &k, a, &lda, ipiv, b, &ldb, work, &lwork, info, 1);
  }
}

// ?trtrs: a triangular solve.
inline void Trtrs(char uplo, char t, char diag, Int n, Int k, const float* a, Int lda, float* b,
                  Int ldb, Int* info) {
  lapack::strtrs_(&uplo, &t, &diag, &n, &k, a, &lda, b, &ldb, info, 1, 1, 1);
}
inline void Trtrs(char uplo, char t, char diag, Int n, Int k, const double* a, Int lda, double* b,
                  Int ldb, Int* info) {
  lapack::dtrtrs_(&uplo, &t, &diag, &n, &k, a, &lda, b, &ldb, info, 1, 1, 1);
}
inline void Trtrs(char uplo, char t, char diag, Int n, Int k, const lapack::C* a, Int lda,
                  lapack::C* b, Int ldb, Int* info) {
  lapack::ctrtrs_(&uplo, &t, &diag, &n, &k, a, &lda, b, &ldb, info, 1, 1, 1);
}
inline void Trtrs(char uplo, char t, char diag, Int n, Int k, const lapack::Z* a, Int lda,
                  lapack::Z* b, Int ldb, Int* info) {
  lapack::ztrtrs_(&uplo, &t, &diag, &n, &k, a, &lda, b, &ldb, info, 1, 1, 1);
}

// c = op(a) op(b) (column-major; ta, tb: CblasNoTrans, CblasTrans or CblasConjTrans), for the
// double-precision work types of the matrix functions.
inline void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, Int m, Int n, Int k, const double* a,
                 Int lda, const double* b, Int ldb, double* c, Int ldc, double beta = 0.0) {
  cblas_dgemm(CblasColMajor, ta == CblasConjTrans ? CblasTrans : ta,
              tb == CblasConjTrans ? CblasTrans : tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}
inline void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, Int m, Int n, Int k, const lapack::Z* a,
                 Int lda, const lapack::Z* b, Int ldb, lapack::Z* c, Int ldc, double beta = 0.0) {
  const lapack::Z one(1.0), zb(beta);
  cblas_zgemm(CblasColMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zb, c, ldc);
}

}  // namespace kiln::slinalg::internal

#endif  // KILN_CORE_OPS_SLINALG_LAPACK_H_
