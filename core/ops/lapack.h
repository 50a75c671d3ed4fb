// Prototypes of the Fortran LAPACK routines that OpenBLAS exports (dpotrf_, zgesdd_...). Debian
// ships no LAPACKE header beside OpenBLAS and none is needed: these are the Fortran symbols, every
// argument by pointer, column-major storage, LP64 (32-bit) integers, and for every CHARACTER
// argument a hidden length (size_t) appended at the end, as gfortran passes it (the routines
// OpenBLAS rewrote in C ignore it). Include this only from *_kernels.cc files.
//
// Conventions: `S` float, `D` double, `C` std::complex<float>, `Z` std::complex<double>. A
// workspace query is lwork = -1 (the optimal size comes back in work[0]). `info` < 0 is a bad
// argument (a bug on our side); `info` > 0 is the routine's documented numerical failure.
#ifndef KILN_CORE_OPS_LAPACK_H_
#define KILN_CORE_OPS_LAPACK_H_

#include <complex>
#include <cstddef>

namespace kiln::lapack {

// LAPACK's INTEGER in OpenBLAS's LP64 build.
using Int = int;
// The hidden length of a CHARACTER argument.
using StrLen = std::size_t;
// Single-precision complex.
using C = std::complex<float>;
// Double-precision complex.
using Z = std::complex<double>;
// The select function of ?gees for real matrices (unused when sort = 'N').
using SelectReal = Int (*)(const double*, const double*);
// The select function of sgees.
using SelectRealS = Int (*)(const float*, const float*);
// The select function of ?gees for complex matrices (unused when sort = 'N').
using SelectComplex = Int (*)(const Z*);
// The select function of cgees.
using SelectComplexC = Int (*)(const C*);

// NOLINTBEGIN: Fortran names and signatures as LAPACK declares them. Declared inside the
// namespace with C linkage: the names are the global symbols, callers write lapack::dpotrf_.
extern "C" {

// Cholesky factorization A = L L^H or U^H U.
void spotrf_(const char* uplo, const Int* n, float* a, const Int* lda, Int* info, StrLen);
void dpotrf_(const char* uplo, const Int* n, double* a, const Int* lda, Int* info, StrLen);
void cpotrf_(const char* uplo, const Int* n, C* a, const Int* lda, Int* info, StrLen);
void zpotrf_(const char* uplo, const Int* n, Z* a, const Int* lda, Int* info, StrLen);

// Solve A X = B given the Cholesky factor of A.
void spotrs_(const char* uplo, const Int* n, const Int* nrhs, const float* a, const Int* lda,
             float* b, const Int* ldb, Int* info, StrLen);
void dpotrs_(const char* uplo, const Int* n, const Int* nrhs, const double* a, const Int* lda,
             double* b, const Int* ldb, Int* info, StrLen);
void cpotrs_(const char* uplo, const Int* n, const Int* nrhs, const C* a, const Int* lda, C* b,
             const Int* ldb, Int* info, StrLen);
void zpotrs_(const char* uplo, const Int* n, const Int* nrhs, const Z* a, const Int* lda, Z* b,
             const Int* ldb, Int* info, StrLen);

// LU factorization with partial pivoting, P A = L U (ipiv 1-based).
void sgetrf_(const Int* m, const Int* n, float* a, const Int* lda, Int* ipiv, Int* info);
void dgetrf_(const Int* m, const Int* n, double* a, const Int* lda, Int* ipiv, Int* info);
void cgetrf_(const Int* m, const Int* n, C* a, const Int* lda, Int* ipiv, Int* info);
void zgetrf_(const Int* m, const Int* n, Z* a, const Int* lda, Int* ipiv, Int* info);

// Solve A X = B, A^T X = B or A^H X = B (trans 'N', 'T', 'C') given getrf's factors.
void sgetrs_(const char* trans, const Int* n, const Int* nrhs, const float* a, const Int* lda,
             const Int* ipiv, float* b, const Int* ldb, Int* info, StrLen);
void dgetrs_(const char* trans, const Int* n, const Int* nrhs, const double* a, const Int* lda,
             const Int* ipiv, double* b, const Int* ldb, Int* info, StrLen);
void cgetrs_(const char* trans, const Int* n, const Int* nrhs, const C* a, const Int* lda,
             const Int* ipiv, C* b, const Int* ldb, Int* info, StrLen);
void zgetrs_(const char* trans, const Int* n, const Int* nrhs, const Z* a, const Int* lda,
             const Int* ipiv, Z* b, const Int* ldb, Int* info, StrLen);

// Inverse from getrf's factors.
void sgetri_(const Int* n, float* a, const Int* lda, const Int* ipiv, float* work, const Int* lwork,
             Int* info);
void dgetri_(const Int* n, double* a, const Int* lda, const Int* ipiv, double* work,
             const Int* lwork, Int* info);
void cgetri_(const Int* n, C* a, const Int* lda, const Int* ipiv, C* work, const Int* lwork,
             Int* info);
void zgetri_(const Int* n, Z* a, const Int* lda, const Int* ipiv, Z* work, const Int* lwork,
             Int* info);

// Reciprocal condition number (1-norm or inf-norm) from getrf's factors.
void sgecon_(const char* norm, const Int* n, const float* a, const Int* lda, const float* anorm,
             float* rcond, float* work, Int* iwork, Int* info, StrLen);
void dgecon_(const char* norm, const Int* n, const double* a, const Int* lda, const double* anorm,
             double* rcond, double* work, Int* iwork, Int* info, StrLen);
void cgecon_(const char* norm, const Int* n, const C* a, const Int* lda, const float* anorm,
             float* rcond, C* work, float* rwork, Int* info, StrLen);
void zgecon_(const char* norm, const Int* n, const Z* a, const Int* lda, const double* anorm,
             double* rcond, Z* work, double* rwork, Int* info, StrLen);

// Matrix norm ('M' max abs, '1'/'O' one, 'I' infinity, 'F' Frobenius).
float slange_(const char* norm, const Int* m, const Int* n, const float* a, const Int* lda,
              float* work, StrLen);
double dlange_(const char* norm, const Int* m, const Int* n, const double* a, const Int* lda,
               double* work, StrLen);
float clange_(const char* norm, const Int* m, const Int* n, const C* a, const Int* lda, float* work,
              StrLen);
double zlange_(const char* norm, const Int* m, const Int* n, const Z* a, const Int* lda,
               double* work, StrLen);

// Solve A X = B for general A (LU with partial pivoting).
void sgesv_(const Int* n, const Int* nrhs, float* a, const Int* lda, Int* ipiv, float* b,
            const Int* ldb, Int* info);
void dgesv_(const Int* n, const Int* nrhs, double* a, const Int* lda, Int* ipiv, double* b,
            const Int* ldb, Int* info);
void cgesv_(const Int* n, const Int* nrhs, C* a, const Int* lda, Int* ipiv, C* b, const Int* ldb,
            Int* info);
void zgesv_(const Int* n, const Int* nrhs, Z* a, const Int* lda, Int* ipiv, Z* b, const Int* ldb,
            Int* info);

// Solve A X = B for symmetric A (Bunch-Kaufman).
void ssysv_(const char* uplo, const Int* n, const Int* nrhs, float* a, const Int* lda, Int* ipiv,
            float* b, const Int* ldb, float* work, const Int* lwork, Int* info, StrLen);
void dsysv_(const char* uplo, const Int* n, const Int* nrhs, double* a, const Int* lda, Int* ipiv,
            double* b, const Int* ldb, double* work, const Int* lwork, Int* info, StrLen);
void csysv_(const char* uplo, const Int* n, const Int* nrhs, C* a, const Int* lda, Int* ipiv, C* b,
            const Int* ldb, C* work, const Int* lwork, Int* info, StrLen);
void zsysv_(const char* uplo, const Int* n, const Int* nrhs, Z* a, const Int* lda, Int* ipiv, Z* b,
            const Int* ldb, Z* work, const Int* lwork, Int* info, StrLen);

// Solve A X = B for Hermitian A (Bunch-Kaufman).
void chesv_(const char* uplo, const Int* n, const Int* nrhs, C* a, const Int* lda, Int* ipiv, C* b,
            const Int* ldb, C* work, const Int* lwork, Int* info, StrLen);
void zhesv_(const char* uplo, const Int* n, const Int* nrhs, Z* a, const Int* lda, Int* ipiv, Z* b,
            const Int* ldb, Z* work, const Int* lwork, Int* info, StrLen);

// Solve A X = B for Hermitian positive definite A (Cholesky).
void sposv_(const char* uplo, const Int* n, const Int* nrhs, float* a, const Int* lda, float* b,
            const Int* ldb, Int* info, StrLen);
void dposv_(const char* uplo, const Int* n, const Int* nrhs, double* a, const Int* lda, double* b,
            const Int* ldb, Int* info, StrLen);
void cposv_(const char* uplo, const Int* n, const Int* nrhs, C* a, const Int* lda, C* b,
            const Int* ldb, Int* info, StrLen);
void zposv_(const char* uplo, const Int* n, const Int* nrhs, Z* a, const Int* lda, Z* b,
            const Int* ldb, Int* info, StrLen);

// Solve op(A) X = B for triangular A (trans 'N', 'T', 'C'; diag 'N' or 'U').
void strtrs_(const char* uplo, const char* trans, const char* diag, const Int* n, const Int* nrhs,
             const float* a, const Int* lda, float* b, const Int* ldb, Int* info, StrLen, StrLen,
             StrLen);
void dtrtrs_(const char* uplo, const char* trans, const char* diag, const Int* n, const Int* nrhs,
             const double* a, const Int* lda, double* b, const Int* ldb, Int* info, StrLen, StrLen,
             StrLen);
void ctrtrs_(const char* uplo, const char* trans, const char* diag, const Int* n, const Int* nrhs,
             const C* a, const Int* lda, C* b, const Int* ldb, Int* info, StrLen, StrLen, StrLen);
void ztrtrs_(const char* uplo, const char* trans, const char* diag, const Int* n, const Int* nrhs,
             const Z* a, const Int* lda, Z* b, const Int* ldb, Int* info, StrLen, StrLen, StrLen);

// Eigenvalues (jobz 'N') or eigenpairs (jobz 'V') of a symmetric matrix, divide and conquer.
void ssyevd_(const char* jobz, const char* uplo, const Int* n, float* a, const Int* lda, float* w,
             float* work, const Int* lwork, Int* iwork, const Int* liwork, Int* info, StrLen,
             StrLen);
void dsyevd_(const char* jobz, const char* uplo, const Int* n, double* a, const Int* lda, double* w,
             double* work, const Int* lwork, Int* iwork, const Int* liwork, Int* info, StrLen,
             StrLen);
// Eigenvalues or eigenpairs of a Hermitian matrix, divide and conquer.
void cheevd_(const char* jobz, const char* uplo, const Int* n, C* a, const Int* lda, float* w,
             C* work, const Int* lwork, float* rwork, const Int* lrwork, Int* iwork,
             const Int* liwork, Int* info, StrLen, StrLen);
void zheevd_(const char* jobz, const char* uplo, const Int* n, Z* a, const Int* lda, double* w,
             Z* work, const Int* lwork, double* rwork, const Int* lrwork, Int* iwork,
             const Int* liwork, Int* info, StrLen, StrLen);

// Generalized symmetric-definite eigenproblem A x = lambda B x (itype 1), divide and conquer.
void ssygvd_(const Int* itype, const char* jobz, const char* uplo, const Int* n, float* a,
             const Int* lda, float* b, const Int* ldb, float* w, float* work, const Int* lwork,
             Int* iwork, const Int* liwork, Int* info, StrLen, StrLen);
void dsygvd_(const Int* itype, const char* jobz, const char* uplo, const Int* n, double* a,
             const Int* lda, double* b, const Int* ldb, double* w, double* work, const Int* lwork,
             Int* iwork, const Int* liwork, Int* info, StrLen, StrLen);
// Generalized Hermitian-definite eigenproblem, divide and conquer.
void chegvd_(const Int* itype, const char* jobz, const char* uplo, const Int* n, C* a,
             const Int* lda, C* b, const Int* ldb, float* w, C* work, const Int* lwork,
             float* rwork, const Int* lrwork, Int* iwork, const Int* liwork, Int* info, StrLen,
             StrLen);
void zhegvd_(const Int* itype, const char* jobz, const char* uplo, const Int* n, Z* a,
             const Int* lda, Z* b, const Int* ldb, double* w, Z* work, const Int* lwork,
             double* rwork, const Int* lrwork, Int* iwork, const Int* liwork, Int* info, StrLen,
             StrLen);

// Eigenvalues and left/right eigenvectors of a general matrix (jobvl, jobvr 'N' or 'V').
void sgeev_(const char* jobvl, const char* jobvr, const Int* n, float* a, const Int* lda, float* wr,
            float* wi, float* vl, const Int* ldvl, float* vr, const Int* ldvr, float* work,
            const Int* lwork, Int* info, StrLen, StrLen);
void dgeev_(const char* jobvl, const char* jobvr, const Int* n, double* a, const Int* lda,
            double* wr, double* wi, double* vl, const Int* ldvl, double* vr, const Int* ldvr,
            double* work, const Int* lwork, Int* info, StrLen, StrLen);
void cgeev_(const char* jobvl, const char* jobvr, const Int* n, C* a, const Int* lda, C* w, C* vl,
            const Int* ldvl, C* vr, const Int* ldvr, C* work, const Int* lwork, float* rwork,
            Int* info, StrLen, StrLen);
void zgeev_(const char* jobvl, const char* jobvr, const Int* n, Z* a, const Int* lda, Z* w, Z* vl,
            const Int* ldvl, Z* vr, const Int* ldvr, Z* work, const Int* lwork, double* rwork,
            Int* info, StrLen, StrLen);

// Singular value decomposition, divide and conquer (jobz 'A', 'S', 'O' or 'N').
void sgesdd_(const char* jobz, const Int* m, const Int* n, float* a, const Int* lda, float* s,
             float* u, const Int* ldu, float* vt, const Int* ldvt, float* work, const Int* lwork,
             Int* iwork, Int* info, StrLen);
void dgesdd_(const char* jobz, const Int* m, const Int* n, double* a, const Int* lda, double* s,
             double* u, const Int* ldu, double* vt, const Int* ldvt, double* work, const Int* lwork,
             Int* iwork, Int* info, StrLen);
void cgesdd_(const char* jobz, const Int* m, const Int* n, C* a, const Int* lda, float* s, C* u,
             const Int* ldu, C* vt, const Int* ldvt, C* work, const Int* lwork, float* rwork,
             Int* iwork, Int* info, StrLen);
void zgesdd_(const char* jobz, const Int* m, const Int* n, Z* a, const Int* lda, double* s, Z* u,
             const Int* ldu, Z* vt, const Int* ldvt, Z* work, const Int* lwork, double* rwork,
             Int* iwork, Int* info, StrLen);

// QR factorization (Householder reflectors in a and tau).
void sgeqrf_(const Int* m, const Int* n, float* a, const Int* lda, float* tau, float* work,
             const Int* lwork, Int* info);
void dgeqrf_(const Int* m, const Int* n, double* a, const Int* lda, double* tau, double* work,
             const Int* lwork, Int* info);
void cgeqrf_(const Int* m, const Int* n, C* a, const Int* lda, C* tau, C* work, const Int* lwork,
             Int* info);
void zgeqrf_(const Int* m, const Int* n, Z* a, const Int* lda, Z* tau, Z* work, const Int* lwork,
             Int* info);

// The explicit Q of geqrf (real: orgqr; complex: ungqr).
void sorgqr_(const Int* m, const Int* n, const Int* k, float* a, const Int* lda, const float* tau,
             float* work, const Int* lwork, Int* info);
void dorgqr_(const Int* m, const Int* n, const Int* k, double* a, const Int* lda, const double* tau,
             double* work, const Int* lwork, Int* info);
void cungqr_(const Int* m, const Int* n, const Int* k, C* a, const Int* lda, const C* tau, C* work,
             const Int* lwork, Int* info);
void zungqr_(const Int* m, const Int* n, const Int* k, Z* a, const Int* lda, const Z* tau, Z* work,
             const Int* lwork, Int* info);

// Minimum-norm least squares by SVD, divide and conquer (rcond < 0: machine precision).
void sgelsd_(const Int* m, const Int* n, const Int* nrhs, float* a, const Int* lda, float* b,
             const Int* ldb, float* s, const float* rcond, Int* rank, float* work, const Int* lwork,
             Int* iwork, Int* info);
void dgelsd_(const Int* m, const Int* n, const Int* nrhs, double* a, const Int* lda, double* b,
             const Int* ldb, double* s, const double* rcond, Int* rank, double* work,
             const Int* lwork, Int* iwork, Int* info);
void cgelsd_(const Int* m, const Int* n, const Int* nrhs, C* a, const Int* lda, C* b,
             const Int* ldb, float* s, const float* rcond, Int* rank, C* work, const Int* lwork,
             float* rwork, Int* iwork, Int* info);
void zgelsd_(const Int* m, const Int* n, const Int* nrhs, Z* a, const Int* lda, Z* b,
             const Int* ldb, double* s, const double* rcond, Int* rank, Z* work, const Int* lwork,
             double* rwork, Int* iwork, Int* info);

// Schur decomposition A = Z T Z^H (jobvs 'V', sort 'N': no ordering, select unused).
void sgees_(const char* jobvs, const char* sort, SelectRealS select, const Int* n, float* a,
            const Int* lda, Int* sdim, float* wr, float* wi, float* vs, const Int* ldvs,
            float* work, const Int* lwork, Int* bwork, Int* info, StrLen, StrLen);
void dgees_(const char* jobvs, const char* sort, SelectReal select, const Int* n, double* a,
            const Int* lda, Int* sdim, double* wr, double* wi, double* vs, const Int* ldvs,
            double* work, const Int* lwork, Int* bwork, Int* info, StrLen, StrLen);
void cgees_(const char* jobvs, const char* sort, SelectComplexC select, const Int* n, C* a,
            const Int* lda, Int* sdim, C* w, C* vs, const Int* ldvs, C* work, const Int* lwork,
            float* rwork, Int* bwork, Int* info, StrLen, StrLen);
void zgees_(const char* jobvs, const char* sort, SelectComplex select, const Int* n, Z* a,
            const Int* lda, Int* sdim, Z* w, Z* vs, const Int* ldvs, Z* work, const Int* lwork,
            double* rwork, Int* bwork, Int* info, StrLen, StrLen);

// Sylvester equation op(A) X + isgn X op(B) = scale C for quasi-triangular A and B.
void strsyl_(const char* trana, const char* tranb, const Int* isgn, const Int* m, const Int* n,
             const float* a, const Int* lda, const float* b, const Int* ldb, float* c,
             const Int* ldc, float* scale, Int* info, StrLen, StrLen);
void dtrsyl_(const char* trana, const char* tranb, const Int* isgn, const Int* m, const Int* n,
             const double* a, const Int* lda, const double* b, const Int* ldb, double* c,
             const Int* ldc, double* scale, Int* info, StrLen, StrLen);
void ctrsyl_(const char* trana, const char* tranb, const Int* isgn, const Int* m, const Int* n,
             const C* a, const Int* lda, const C* b, const Int* ldb, C* c, const Int* ldc,
             float* scale, Int* info, StrLen, StrLen);
void ztrsyl_(const char* trana, const char* tranb, const Int* isgn, const Int* m, const Int* n,
             const Z* a, const Int* lda, const Z* b, const Int* ldb, Z* c, const Int* ldc,
             double* scale, Int* info, StrLen, StrLen);

}  // extern "C"
// NOLINTEND

}  // namespace kiln::lapack

#endif  // KILN_CORE_OPS_LAPACK_H_
