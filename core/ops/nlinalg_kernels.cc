#include "core/ops/nlinalg_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/ops/lapack.h"
#include "core/tensor/status_macros.h"
#include "core/tensor/tensor.h"

namespace kiln::nlinalg {
namespace {

using lapack::Int;

// The tensor dtype that stores T.
template <typename T>
constexpr DType DTypeFor() {
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  if constexpr (std::is_same_v<T, std::complex<float>>) return DType::kComplex64;
  if constexpr (std::is_same_v<T, std::complex<double>>) return DType::kComplex128;
  if constexpr (std::is_same_v<T, Int>) return DType::kInt32;
}

// A work buffer of `count` T (at least one), a tensor so that the call's budget is charged.
template <typename T>
class Work {
 public:
  static absl::StatusOr<Work> Make(int64_t count) {
    count = std::max<int64_t>(count, 1);
    RETURN_IF_ERROR(CheckShape("LAPACK workspace", {count}, DTypeFor<T>()));
    return Work(Tensor::Empty(DTypeFor<T>(), {count}));
  }
  T* data() { return tensor_.data<T>(); }
  T& operator[](int64_t i) { return data()[i]; }

 private:
  explicit Work(Tensor t) : tensor_(std::move(t)) {}
  Tensor tensor_;
};

// The column-major copy of a, with leading dimension max(1, rows) (and `min_cols` columns at
// least).
template <typename T>
absl::StatusOr<Work<T>> ColMajor(MatrixRef<const T> a, int64_t ld, int64_t cols) {
  ASSIGN_OR_RETURN(Work<T> w, Work<T>::Make(ld * cols));
  std::fill(w.data(), w.data() + std::max<int64_t>(ld * cols, 1), T(0));
  for (int64_t j = 0; j < a.cols; ++j) {
    for (int64_t i = 0; i < a.rows; ++i) w[i + j * ld] = a(i, j);
  }
  return w;
}

// out(i, j) = w[i + j * ld] for the rows and cols of out.
template <typename T>
void FromColMajor(const T* w, int64_t ld, MatrixRef<T> out) {
  for (int64_t i = 0; i < out.rows; ++i) {
    for (int64_t j = 0; j < out.cols; ++j) out(i, j) = w[i + j * ld];
  }
}

template <typename T>
T Conj(T x) {
  if constexpr (std::is_same_v<T, Real<T>>) {
    return x;
  } else {
    return std::conj(x);
  }
}

// The size a workspace query left in work[0].
template <typename T>
int64_t QueriedSize(T w) {
  return static_cast<int64_t>(std::real(w)) + 1;
}

// A queried workspace size as LAPACK's integer, or INVALID_ARGUMENT when it does not fit one
// (a matrix too large for LP64 LAPACK).
template <typename T>
absl::StatusOr<Int> WorkSize(T w) {
  const int64_t n = QueriedSize(w);
  if (n > std::numeric_limits<Int>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the LAPACK workspace of ", n, " elements is past its 32-bit sizes"));
  }
  return static_cast<Int>(n);
}

absl::Status NotConverged(const char* what) { return absl::InvalidArgumentError(what); }
absl::Status SingularMatrix() { return absl::InvalidArgumentError("Singular matrix"); }

// ---- LAPACK by type ----------------------------------------------------------------------------

void Getrf(Int m, Int n, float* a, Int lda, Int* ipiv, Int* info) {
  lapack::sgetrf_(&m, &n, a, &lda, ipiv, info);
}
void Getrf(Int m, Int n, double* a, Int lda, Int* ipiv, Int* info) {
  lapack::dgetrf_(&m, &n, a, &lda, ipiv, info);
}
void Getrf(Int m, Int n, lapack::C* a, Int lda, Int* ipiv, Int* info) {
  lapack::cgetrf_(&m, &n, a, &lda, ipiv, info);
}
void Getrf(Int m, Int n, lapack::Z* a, Int lda, Int* ipiv, Int* info) {
  lapack::zgetrf_(&m, &n, a, &lda, ipiv, info);
}

void Gesv(Int n, Int nrhs, float* a, Int lda, Int* ipiv, float* b, Int ldb, Int* info) {
  lapack::sgesv_(&n, &nrhs, a, &lda, ipiv, b, &ldb, info);
}
void Gesv(Int n, Int nrhs, double* a, Int lda, Int* ipiv, double* b, Int ldb, Int* info) {
  lapack::dgesv_(&n, &nrhs, a, &lda, ipiv, b, &ldb, info);
}
void Gesv(Int n, Int nrhs, lapack::C* a, Int lda, Int* ipiv, lapack::C* b, Int ldb, Int* info) {
  lapack::cgesv_(&n, &nrhs, a, &lda, ipiv, b, &ldb, info);
}
void Gesv(Int n, Int nrhs, lapack::Z* a, Int lda, Int* ipiv, lapack::Z* b, Int ldb, Int* info) {
  lapack::zgesv_(&n, &nrhs, a, &lda, ipiv, b, &ldb, info);
}

// ?syevd / ?heevd, with the workspace sizes queried first.
template <typename T>
absl::Status Heevd(char jobz, char uplo, Int n, T* a, Int lda, Real<T>* w) {
  Int info = 0, lwork = -1, liwork = -1, lrwork = -1, iwork_size = 0;
  T work_size{};
  Real<T> rwork_size{};
  auto call = [&](T* work, Real<T>* rwork, Int* iwork) {
    if constexpr (std::is_same_v<T, float>) {
      lapack::ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    } else if constexpr (std::is_same_v<T, double>) {
      lapack::dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    } else if constexpr (std::is_same_v<T, lapack::C>) {
      lapack::cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork,
                      &info, 1, 1);
    } else {
      lapack::zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork,
                      &info, 1, 1);
    }
  };
  call(&work_size, &rwork_size, &iwork_size);
  if (info != 0) return absl::InternalError(absl::StrCat("?syevd query: info ", info));
  ASSIGN_OR_RETURN(Work<T> work, Work<T>::Make(QueriedSize(work_size)));
  ASSIGN_OR_RETURN(Work<Real<T>> rwork, Work<Real<T>>::Make(QueriedSize(rwork_size)));
  ASSIGN_OR_RETURN(Work<Int> iwork, Work<Int>::Make(int64_t{iwork_size} + 1));
  ASSIGN_OR_RETURN(lwork, WorkSize(work_size));
  ASSIGN_OR_RETURN(lrwork, WorkSize(rwork_size));
  liwork = iwork_size + 1;
  call(work.data(), rwork.data(), iwork.data());
  if (info > 0) return NotConverged("Eigenvalues did not converge");
  if (info < 0) return absl::InternalError(absl::StrCat("?syevd: info ", info));
  return absl::OkStatus();
}

// ?gesdd, with the workspace size queried first.
template <typename T>
absl::Status Gesdd(char jobz, Int m, Int n, T* a, Int lda, Real<T>* s, T* u, Int ldu, T* vt,
                   Int ldvt) {
  const int64_t k = std::min(m, n), big = std::max(m, n);
  ASSIGN_OR_RETURN(Work<Int> iwork, Work<Int>::Make(8 * k));
  const int64_t lrwork = jobz == 'N' ? 7 * k : k * std::max(5 * k + 7, 2 * big + 2 * k + 1);
  ASSIGN_OR_RETURN(Work<Real<T>> rwork, Work<Real<T>>::Make(lrwork));
  Int info = 0, lwork = -1;
  auto call = [&](T* work) {
    if constexpr (std::is_same_v<T, float>) {
      lapack::sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork.data(),
                      &info, 1);
    } else if constexpr (std::is_same_v<T, double>) {
      lapack::dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork.data(),
                      &info, 1);
    } else if constexpr (std::is_same_v<T, lapack::C>) {
      lapack::cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork.data(),
                      iwork.data(), &info, 1);
    } else {
      lapack::zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork.data(),
                      iwork.data(), &info, 1);
    }
  };
  T work_size{};
  call(&work_size);
  if (info != 0) return absl::InternalError(absl::StrCat("?gesdd query: info ", info));
  ASSIGN_OR_RETURN(Work<T> work, Work<T>::Make(QueriedSize(work_size)));
  ASSIGN_OR_RETURN(lwork, WorkSize(work_size));
  call(work.data());
  if (info > 0) return NotConverged("SVD did not converge");
  if (info < 0) return absl::InternalError(absl::StrCat("?gesdd: info ", info));
  return absl::OkStatus();
}

// ?geqrf, then (when q_cols > 0) ?orgqr / ?ungqr in place for the first q_cols columns of Q.
template <typename T>
absl::Status Geqrf(Int m, Int n, T* a, Int lda, T* tau) {
  Int info = 0, lwork = -1;
  auto call = [&](T* work) {
    if constexpr (std::is_same_v<T, float>) {
      lapack::sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
    } else if constexpr (std::is_same_v<T, double>) {
      lapack::dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
    } else if constexpr (std::is_same_v<T, lapack::C>) {
      lapack::cgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
    } else {
      lapack::zgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
    }
  };
  T work_size{};
  call(&work_size);
  ASSIGN_OR_RETURN(Work<T> work, Work<T>::Make(QueriedSize(work_size)));
  ASSIGN_OR_RETURN(lwork, WorkSize(work_size));
  call(work.data());
  if (info != 0) return absl::InternalError(absl::StrCat("?geqrf: info ", info));
  return absl::OkStatus();
}

template <typename T>
absl::Status Orgqr(Int m, Int n, Int k, T* a, Int lda, const T* tau) {
  Int info = 0, lwork = -1;
  auto call = [&](T* work) {
    if constexpr (std::is_same_v<T, float>) {
      lapack::sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
    } else if constexpr (std::is_same_v<T, double>) {
      lapack::dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
    } else if constexpr (std::is_same_v<T, lapack::C>) {
      lapack::cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
    } else {
      lapack::zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
    }
  };
  T work_size{};
  call(&work_size);
  ASSIGN_OR_RETURN(Work<T> work, Work<T>::Make(QueriedSize(work_size)));
  ASSIGN_OR_RETURN(lwork, WorkSize(work_size));
  call(work.data());
  if (info != 0) return absl::InternalError(absl::StrCat("?orgqr: info ", info));
  return absl::OkStatus();
}

// The LU factors of a square a in a column-major buffer, with the pivots; `singular` set when
// a zero pivot was met.
template <typename T>
struct Lu {
  Work<T> factors;
  Work<Int> pivots;
  int64_t n;
  bool singular;
};

template <typename T>
absl::StatusOr<Lu<T>> Factor(MatrixRef<const T> a) {
  const int64_t n = a.rows, ld = std::max<int64_t>(n, 1);
  ASSIGN_OR_RETURN(Work<T> f, ColMajor(a, ld, n));
  ASSIGN_OR_RETURN(Work<Int> piv, Work<Int>::Make(n));
  Int info = 0;
  if (n > 0)
    Getrf(static_cast<Int>(n), static_cast<Int>(n), f.data(), static_cast<Int>(ld), piv.data(),
          &info);
  if (info < 0) return absl::InternalError(absl::StrCat("?getrf: info ", info));
  return Lu<T>{std::move(f), std::move(piv), n, info > 0};
}

}  // namespace

absl::Status CheckLapackDims(int64_t rows, int64_t cols) {
  constexpr int64_t kMax = std::numeric_limits<Int>::max();
  if (rows < 0 || cols < 0 || rows > kMax || cols > kMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", rows, " x ", cols, " matrix is past LAPACK's 32-bit dimensions"));
  }
  return CheckShape("matrix", {rows, cols}, DType::kComplex128);
}

template <typename T>
absl::Status Solve(MatrixRef<const T> a, MatrixRef<const T> b, MatrixRef<T> x) {
  const int64_t n = a.rows, nrhs = b.cols, ld = std::max<int64_t>(n, 1);
  RETURN_IF_ERROR(CheckLapackDims(n, nrhs));
  if (n == 0 || nrhs == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(Work<T> f, ColMajor(a, ld, n));
  ASSIGN_OR_RETURN(Work<T> rhs, ColMajor(b, ld, nrhs));
  ASSIGN_OR_RETURN(Work<Int> piv, Work<Int>::Make(n));
  Int info = 0;
  Gesv(static_cast<Int>(n), static_cast<Int>(nrhs), f.data(), static_cast<Int>(ld), piv.data(),
       rhs.data(), static_cast<Int>(ld), &info);
  if (info > 0) return SingularMatrix();
  if (info < 0) return absl::InternalError(absl::StrCat("?gesv: info ", info));
  FromColMajor(rhs.data(), ld, x);
  return absl::OkStatus();
}

template <typename T>
absl::Status Inverse(MatrixRef<const T> a, MatrixRef<T> out) {
  const int64_t n = a.rows;
  RETURN_IF_ERROR(CheckLapackDims(n, n));
  if (n == 0) return absl::OkStatus();
  // numpy.linalg.inv solves a x = I, as here.
  ASSIGN_OR_RETURN(Work<T> eye, Work<T>::Make(n * n));
  std::fill(eye.data(), eye.data() + n * n, T(0));
  for (int64_t i = 0; i < n; ++i) eye[i * n + i] = T(1);
  return Solve<T>(a, RowMajor<const T>(eye.data(), n, n), out);
}

template <typename T>
absl::StatusOr<std::pair<T, Real<T>>> LogDeterminant(MatrixRef<const T> a) {
  RETURN_IF_ERROR(CheckLapackDims(a.rows, a.rows));
  ASSIGN_OR_RETURN(Lu<T> lu, Factor(a));
  if (lu.singular) return std::pair<T, Real<T>>(T(0), -std::numeric_limits<Real<T>>::infinity());
  T sign(1);
  Real<T> log_abs = 0;
  const int64_t ld = std::max<int64_t>(lu.n, 1);
  for (int64_t i = 0; i < lu.n; ++i) {
    const T d = lu.factors[i + i * ld];
    const Real<T> m = std::abs(d);
    sign *= d / m;
    log_abs += std::log(m);
    if (lu.pivots[i] != i + 1) sign = -sign;
  }
  return std::pair<T, Real<T>>(sign, log_abs);
}

// As numpy.linalg.det: sign * exp(log |det|), so that the rounding (and an integer output's
// truncation) is numpy's.
template <typename T>
absl::StatusOr<T> Determinant(MatrixRef<const T> a) {
  ASSIGN_OR_RETURN(auto sign_log, LogDeterminant<T>(a));
  if (sign_log.first == T(0)) return T(0);
  return sign_log.first * T(std::exp(sign_log.second));
}

template <typename T>
absl::Status EigHermitian(MatrixRef<const T> a, char uplo, Real<T>* w, MatrixRef<T> v) {
  const int64_t n = a.rows, ld = std::max<int64_t>(n, 1);
  RETURN_IF_ERROR(CheckLapackDims(n, n));
  if (n == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(Work<T> buf, ColMajor(a, ld, n));
  RETURN_IF_ERROR(
      Heevd<T>(v.data ? 'V' : 'N', uplo, static_cast<Int>(n), buf.data(), static_cast<Int>(ld), w));
  if (v.data) FromColMajor(buf.data(), ld, v);
  return absl::OkStatus();
}

template <typename T>
absl::Status EigGeneral(MatrixRef<const T> a, std::complex<Real<T>>* w,
                        MatrixRef<std::complex<Real<T>>> v) {
  using R = Real<T>;
  const int64_t n = a.rows, ld = std::max<int64_t>(n, 1);
  RETURN_IF_ERROR(CheckLapackDims(n, n));
  if (n == 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(Work<T> buf, ColMajor(a, ld, n));
  ASSIGN_OR_RETURN(Work<T> vr, Work<T>::Make(ld * n));
  const Int ni = static_cast<Int>(n), ldi = static_cast<Int>(ld), one = 1;
  const char jobvl = 'N', jobvr = 'V';
  Int info = 0, lwork = -1;
  T vl{}, work_size{};
  if constexpr (std::is_same_v<T, R>) {
    ASSIGN_OR_RETURN(Work<R> wr, Work<R>::Make(n));
    ASSIGN_OR_RETURN(Work<R> wi, Work<R>::Make(n));
    auto call = [&](R* work) {
      if constexpr (std::is_same_v<R, float>) {
        lapack::sgeev_(&jobvl, &jobvr, &ni, buf.data(), &ldi, wr.data(), wi.data(), &vl, &one,
                       vr.data(), &ldi, work, &lwork, &info, 1, 1);
      } else {
        lapack::dgeev_(&jobvl, &jobvr, &ni, buf.data(), &ldi, wr.data(), wi.data(), &vl, &one,
                       vr.data(), &ldi, work, &lwork, &info, 1, 1);
      }
    };
    call(&work_size);
    ASSIGN_OR_RETURN(Work<R> work, Work<R>::Make(QueriedSize(work_size)));
    ASSIGN_OR_RETURN(lwork, WorkSize(work_size));
    call(work.data());
    if (info > 0) return NotConverged("Eigenvalues did not converge");
    // A complex pair (wi[j] > 0) keeps its vectors as vr[:, j] +- i vr[:, j + 1].
    for (int64_t j = 0; j < n; ++j) {
      w[j] = {wr[j], wi[j]};
      if (wi[j] != 0 && j + 1 < n) {
        w[j + 1] = {wr[j + 1], wi[j + 1]};
        for (int64_t i = 0; i < n; ++i) {
          const R re = vr[i + j * ld], im = vr[i + (j + 1) * ld];
          v(i, j) = {re, im};
          v(i, j + 1) = {re, -im};
        }
        ++j;
      } else {
        for (int64_t i = 0; i < n; ++i) v(i, j) = {vr[i + j * ld], 0};
      }
    }
  } else {
    ASSIGN_OR_RETURN(Work<R> rwork, Work<R>::Make(2 * n));
    auto call = [&](T* work) {
      if constexpr (std::is_same_v<T, lapack::C>) {
        lapack::cgeev_(&jobvl, &jobvr, &ni, buf.data(), &ldi, w, &vl, &one, vr.data(), &ldi, work,
                       &lwork, rwork.data(), &info, 1, 1);
      } else {
        lapack::zgeev_(&jobvl, &jobvr, &ni, buf.data(), &ldi, w, &vl, &one, vr.data(), &ldi, work,
                       &lwork, rwork.data(), &info, 1, 1);
      }
    };
    call(&work_size);
    ASSIGN_OR_RETURN(Work<T> work, Work<T>::Make(QueriedSize(work_size)));
    ASSIGN_OR_RETURN(lwork, WorkSize(work_size));
    call(work.data());
    if (info > 0) return NotConverged("Eigenvalues did not converge");
    FromColMajor(vr.data(), ld, v);
  }
  if (info < 0) return absl::InternalError(absl::StrCat("?geev: info ", info));
  return absl::OkStatus();
}

template <typename T>
absl::Status Svd(MatrixRef<const T> a, bool full_matrices, Real<T>* s, MatrixRef<T> u,
                 MatrixRef<T> vt) {
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n), ld = std::max<int64_t>(m, 1);
  RETURN_IF_ERROR(CheckLapackDims(m, n));
  const bool vectors = u.data != nullptr;
  if (k == 0) {  // no singular values; the full bases are identities
    for (MatrixRef<T> e : {u, vt}) {
      if (e.data == nullptr) continue;
      for (int64_t i = 0; i < e.rows; ++i) {
        for (int64_t j = 0; j < e.cols; ++j) e(i, j) = T(i == j ? 1 : 0);
      }
    }
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(Work<T> buf, ColMajor(a, ld, n));
  const int64_t u_cols = full_matrices ? m : k, vt_rows = full_matrices ? n : k;
  ASSIGN_OR_RETURN(Work<T> ub, Work<T>::Make(vectors ? m * u_cols : 1));
  ASSIGN_OR_RETURN(Work<T> vtb, Work<T>::Make(vectors ? vt_rows * n : 1));
  const char jobz = !vectors ? 'N' : (full_matrices ? 'A' : 'S');
  RETURN_IF_ERROR(Gesdd<T>(jobz, static_cast<Int>(m), static_cast<Int>(n), buf.data(),
                           static_cast<Int>(ld), s, ub.data(), static_cast<Int>(ld), vtb.data(),
                           static_cast<Int>(vectors ? std::max<int64_t>(vt_rows, 1) : 1)));
  if (vectors) {
    FromColMajor(ub.data(), ld, u);
    FromColMajor(vtb.data(), std::max<int64_t>(vt_rows, 1), vt);
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Qr(MatrixRef<const T> a, QrMode mode, MatrixRef<T> q, MatrixRef<T> r, T* tau) {
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n), ld = std::max<int64_t>(m, 1);
  RETURN_IF_ERROR(CheckLapackDims(m, n));
  const int64_t q_cols = mode == QrMode::kComplete ? m : k;
  // Room for Q's columns beside the reflectors when Q is wider than a.
  ASSIGN_OR_RETURN(Work<T> buf, ColMajor(a, ld, std::max(n, q_cols)));
  ASSIGN_OR_RETURN(Work<T> taus, Work<T>::Make(k));
  if (k > 0) {
    RETURN_IF_ERROR(Geqrf<T>(static_cast<Int>(m), static_cast<Int>(n), buf.data(),
                             static_cast<Int>(ld), taus.data()));
  }
  if (mode == QrMode::kRaw) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) q(j, i) = buf[i + j * ld];
    }
    std::copy(taus.data(), taus.data() + k, tau);
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < r.rows; ++i) {
    for (int64_t j = 0; j < n; ++j) r(i, j) = j >= i ? buf[i + j * ld] : T(0);
  }
  if (mode == QrMode::kR) return absl::OkStatus();
  if (m > 0 && q_cols > 0) {
    RETURN_IF_ERROR(Orgqr<T>(static_cast<Int>(m), static_cast<Int>(q_cols), static_cast<Int>(k),
                             buf.data(), static_cast<Int>(ld), taus.data()));
  }
  FromColMajor(buf.data(), ld, q);
  return absl::OkStatus();
}

template <typename T>
absl::Status PseudoInverse(MatrixRef<const T> a, bool hermitian, MatrixRef<T> out) {
  using R = Real<T>;
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  RETURN_IF_ERROR(CheckLapackDims(m, n));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) out(j, i) = T(0);
  }
  if (k == 0) return absl::OkStatus();
  constexpr R kRcond = static_cast<R>(1e-15);
  ASSIGN_OR_RETURN(Work<R> s, Work<R>::Make(k));
  if (hermitian) {  // a = v diag(w) v^H: pinv = v diag(1 / w) v^H over |w| > cutoff
    ASSIGN_OR_RETURN(Work<T> v, Work<T>::Make(n * n));
    MatrixRef<T> vr = RowMajor(v.data(), n, n);
    RETURN_IF_ERROR(EigHermitian<T>(a, 'L', s.data(), vr));
    R largest = 0;
    for (int64_t l = 0; l < n; ++l) largest = std::max(largest, std::abs(s[l]));
    for (int64_t l = 0; l < n; ++l) {
      if (!(std::abs(s[l]) > kRcond * largest)) continue;
      const R inv = 1 / s[l];
      for (int64_t j = 0; j < n; ++j) {
        const T left = vr(j, l) * inv;
        for (int64_t i = 0; i < n; ++i) out(j, i) += left * Conj(vr(i, l));
      }
    }
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(Work<T> u, Work<T>::Make(m * k));
  ASSIGN_OR_RETURN(Work<T> vt, Work<T>::Make(k * n));
  MatrixRef<T> ur = RowMajor(u.data(), m, k), vtr = RowMajor(vt.data(), k, n);
  RETURN_IF_ERROR(Svd<T>(a, false, s.data(), ur, vtr));
  const R cutoff = kRcond * s[0];
  for (int64_t l = 0; l < k; ++l) {  // pinv = V diag(1 / s) U^H
    if (!(s[l] > cutoff)) continue;
    const R inv = 1 / s[l];
    for (int64_t j = 0; j < n; ++j) {
      const T left = Conj(vtr(l, j)) * inv;
      for (int64_t i = 0; i < m; ++i) out(j, i) += left * Conj(ur(i, l));
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<int64_t> LeastSquares(MatrixRef<const T> a, MatrixRef<const T> b, Real<T> rcond,
                                     MatrixRef<T> x, Real<T>* s, Real<T>* residuals) {
  using R = Real<T>;
  const int64_t m = a.rows, n = a.cols, nrhs = b.cols, k = std::min(m, n);
  const int64_t lda = std::max<int64_t>(m, 1), ldb = std::max<int64_t>({m, n, 1});
  RETURN_IF_ERROR(CheckLapackDims(m, n));
  RETURN_IF_ERROR(CheckLapackDims(ldb, nrhs));
  ASSIGN_OR_RETURN(Work<T> buf, ColMajor(a, lda, n));
  ASSIGN_OR_RETURN(Work<T> rhs, ColMajor(b, ldb, nrhs));
  Int rank = 0;
  if (k > 0 && nrhs > 0) {
    const Int mi = static_cast<Int>(m), ni = static_cast<Int>(n), nr = static_cast<Int>(nrhs);
    const Int ldai = static_cast<Int>(lda), ldbi = static_cast<Int>(ldb);
    Int info = 0, lwork = -1, iwork_size = 0;
    R rwork_size{};
    T work_size{};
    auto call = [&](T* work, R* rwork, Int* iwork) {
      if constexpr (std::is_same_v<T, float>) {
        lapack::sgelsd_(&mi, &ni, &nr, buf.data(), &ldai, rhs.data(), &ldbi, s, &rcond, &rank, work,
                        &lwork, iwork, &info);
      } else if constexpr (std::is_same_v<T, double>) {
        lapack::dgelsd_(&mi, &ni, &nr, buf.data(), &ldai, rhs.data(), &ldbi, s, &rcond, &rank, work,
                        &lwork, iwork, &info);
      } else if constexpr (std::is_same_v<T, lapack::C>) {
        lapack::cgelsd_(&mi, &ni, &nr, buf.data(), &ldai, rhs.data(), &ldbi, s, &rcond, &rank, work,
                        &lwork, rwork, iwork, &info);
      } else {
        lapack::zgelsd_(&mi, &ni, &nr, buf.data(), &ldai, rhs.data(), &ldbi, s, &rcond, &rank, work,
                        &lwork, rwork, iwork, &info);
      }
    };
    call(&work_size, &rwork_size, &iwork_size);
    if (info != 0) return absl::InternalError(absl::StrCat("?gelsd query: info ", info));
    ASSIGN_OR_RETURN(Work<T> work, Work<T>::Make(QueriedSize(work_size)));
    ASSIGN_OR_RETURN(Work<R> rwork, Work<R>::Make(QueriedSize(rwork_size)));
    ASSIGN_OR_RETURN(Work<Int> iwork, Work<Int>::Make(int64_t{iwork_size} + 1));
    ASSIGN_OR_RETURN(lwork, WorkSize(work_size));
    call(work.data(), rwork.data(), iwork.data());
    if (info > 0) return NotConverged("SVD did not converge in Linear Least Squares");
    if (info < 0) return absl::InternalError(absl::StrCat("?gelsd: info ", info));
  } else if (k > 0) {  // no right-hand side: the singular values alone
    ASSIGN_OR_RETURN(Work<T> none, Work<T>::Make(1));
    RETURN_IF_ERROR(Svd<T>(a, false, s, MatrixRef<T>{}, MatrixRef<T>{}));
    R cutoff = (rcond < 0 ? std::numeric_limits<R>::epsilon() : rcond) * s[0];
    for (int64_t l = 0; l < k; ++l) rank += s[l] > cutoff ? 1 : 0;
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < nrhs; ++c) x(i, c) = k == 0 ? T(0) : rhs[i + c * ldb];
  }
  if (rank == n && m > n) {
    for (int64_t c = 0; c < nrhs; ++c) {
      R sum = 0;
      for (int64_t i = n; i < m; ++i) sum += std::norm(rhs[i + c * ldb]);
      residuals[c] = sum;
    }
  }
  return int64_t{rank};
}

template <typename T>
void EighGradient(MatrixRef<const T> v, const T* w, const T* gw, MatrixRef<const T> gv, char uplo,
                  MatrixRef<T> out) {
  const int64_t n = v.rows;
  // c[m][j] = gw[j] on the diagonal, (v^T gv)[m][j] / (w[j] - w[m]) off it; h = v c; g = v h^T.
  std::vector<T> c(n * n), h(n * n);
  for (int64_t a = 0; a < n; ++a) {
    for (int64_t j = 0; j < n; ++j) {
      if (a == j) {
        c[a * n + j] = gw[j];
        continue;
      }
      T dotp = 0;
      for (int64_t r = 0; r < n; ++r) dotp += v(r, a) * gv(r, j);
      c[a * n + j] = dotp / (w[j] - w[a]);
    }
  }
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t a = 0; a < n; ++a) sum += v(r, a) * c[a * n + j];
      h[r * n + j] = sum;
    }
  }
  auto g = [&](int64_t i, int64_t j) {
    T sum = 0;
    for (int64_t l = 0; l < n; ++l) sum += v(i, l) * h[j * n + l];
    return sum;
  };
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const bool keep = uplo == 'L' ? i >= j : i <= j;
      const bool fold = uplo == 'L' ? i > j : i < j;
      out(i, j) = (keep ? g(i, j) : T(0)) + (fold ? g(j, i) : T(0));
    }
  }
}

#define KILN_NLINALG_KERNELS(T)                                                                 \
  template absl::Status Inverse<T>(MatrixRef<const T>, MatrixRef<T>);                           \
  template absl::StatusOr<T> Determinant<T>(MatrixRef<const T>);                                \
  template absl::StatusOr<std::pair<T, Real<T>>> LogDeterminant<T>(MatrixRef<const T>);         \
  template absl::Status PseudoInverse<T>(MatrixRef<const T>, bool, MatrixRef<T>);               \
  template absl::Status EigGeneral<T>(MatrixRef<const T>, std::complex<Real<T>>*,               \
                                      MatrixRef<std::complex<Real<T>>>);                        \
  template absl::Status EigHermitian<T>(MatrixRef<const T>, char, Real<T>*, MatrixRef<T>);      \
  template absl::Status Svd<T>(MatrixRef<const T>, bool, Real<T>*, MatrixRef<T>, MatrixRef<T>); \
  template absl::Status Qr<T>(MatrixRef<const T>, QrMode, MatrixRef<T>, MatrixRef<T>, T*);      \
  template absl::StatusOr<int64_t> LeastSquares<T>(MatrixRef<const T>, MatrixRef<const T>,      \
                                                   Real<T>, MatrixRef<T>, Real<T>*, Real<T>*);  \
  template absl::Status Solve<T>(MatrixRef<const T>, MatrixRef<const T>, MatrixRef<T>);

KILN_NLINALG_KERNELS(float)
KILN_NLINALG_KERNELS(double)
KILN_NLINALG_KERNELS(std::complex<float>)
KILN_NLINALG_KERNELS(std::complex<double>)
#undef KILN_NLINALG_KERNELS

template void EighGradient<float>(MatrixRef<const float>, const float*, const float*,
                                  MatrixRef<const float>, char, MatrixRef<float>);
template void EighGradient<double>(MatrixRef<const double>, const double*, const double*,
                                   MatrixRef<const double>, char, MatrixRef<double>);

}  // namespace kiln::nlinalg
