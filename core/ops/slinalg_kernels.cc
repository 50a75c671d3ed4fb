// Cholesky, the linear solves and the Hermitian eigenvalues on LAPACK (see slinalg_kernels.h).
#include "core/ops/slinalg_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <complex>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/ops/slinalg_lapack.h"

namespace kiln::slinalg {

using internal::Int;
using internal::Load;
using internal::Store;
using internal::Work;

namespace {

// The triangle a routine reads of m^T when the caller's is `lower` of m.
char Uplo(bool lower, bool transposed) { return lower != transposed ? 'L' : 'U'; }

// m column-major, or m^T column-major when `transposed` (a C-order m is then one copy per row).
template <typename T>
Work<T> LoadAs(MatrixRef<const T> m, bool transposed) {
  return Load(transposed ? internal::Transposed(m) : m);
}

}  // namespace

// A C-order a is factored as a^T (for a Hermitian a, conj(a)) with the other triangle: its
// factor U^T is a's L. When out, seen as LAPACK sees a, is column-major and contiguous (a C-order
// out for a C-order a, the usual case), a is copied straight into it and factored there: one copy
// in all, against two through a work matrix (slinalg_vs_scipy's cholesky_256 went from 0.88-1.05x
// SciPy to 1.39-1.62x, cholesky_1024 from 1.29-1.43x to 1.95-2.01x).
template <typename T>
int Cholesky(MatrixRef<const T> a, bool lower, MatrixRef<T> out) {
  const bool t = internal::RowMajor(a);
  const char uplo = Uplo(lower, t);
  const MatrixRef<const T> src = t ? internal::Transposed(a) : a;
  const MatrixRef<T> dst = t ? internal::Transposed(out) : out;
  const Int n = Int(src.rows);
  const bool in_place = dst.row_stride == 1 && dst.col_stride == std::max<Int>(1, n);
  std::optional<Work<T>> w;  // only when out's layout is not LAPACK's
  if (!in_place) w.emplace(n, n);
  T* f = in_place ? dst.data : w->data();
  internal::CopyMatrix(src.data, src.row_stride, src.col_stride, f, 1, n, n, n);
  Int info = 0;
  if (n > 0) internal::Potrf(uplo, n, f, std::max<Int>(1, n), &info);
  if (info != 0) return info;
  for (Int j = 0; j < n; ++j) {  // the other triangle of column j
    T* column = f + int64_t{j} * n;
    if (uplo == 'L') {
      std::fill(column, column + j, T(0));
    } else {
      std::fill(column + j + 1, column + n, T(0));
    }
  }
  if (!in_place) Store(*w, dst);
  return 0;
}

// With a C-order a, LAPACK gets a^T: a general solve becomes getrs with 'T'; a symmetric one
// reads the other triangle; a Hermitian one (conj(a) stored) solves for conj(x) from conj(b).
template <typename T>
int Solve(MatrixRef<const T> a, MatrixRef<const T> b, Structure structure, bool lower,
          MatrixRef<T> x) {
  const bool t = internal::RowMajor(a);
  Work<T> w = LoadAs(a, t);
  Work<T> rhs = Load(b);
  const Int n = w.rows, k = rhs.cols;
  const char uplo = Uplo(lower, t);
  const bool conj_rhs =
      t && (structure == Structure::kPositive || structure == Structure::kHermitian);
  if (conj_rhs) internal::ConjugateAll(rhs);
  Int info = 0;
  if (n > 0) {
    switch (structure) {
      case Structure::kGeneral: {
        std::vector<Int> ipiv(static_cast<size_t>(n));
        internal::Getrf(n, w.data(), w.ld(), ipiv.data(), &info);
        if (info == 0 && k > 0) {
          internal::Getrs(t ? 'T' : 'N', n, k, w.data(), w.ld(), ipiv.data(), rhs.data(), rhs.ld(),
                          &info);
        }
        break;
      }
      case Structure::kPositive:
        internal::Posv(uplo, n, k, w.data(), w.ld(), rhs.data(), rhs.ld(), &info);
        break;
      case Structure::kSymmetric:
      case Structure::kHermitian: {
        const bool hermitian = structure == Structure::kHermitian;
        std::vector<Int> ipiv(static_cast<size_t>(n));
        T query{};
        internal::Sysv(hermitian, uplo, n, k, w.data(), w.ld(), ipiv.data(), rhs.data(), rhs.ld(),
                       &query, -1, &info);
        std::vector<T> work(static_cast<size_t>(internal::WorkSize(query)));
        internal::Sysv(hermitian, uplo, n, k, w.data(), w.ld(), ipiv.data(), rhs.data(), rhs.ld(),
                       work.data(), static_cast<Int>(work.size()), &info);
        break;
      }
    }
  }
  if (info != 0) return info;
  if (conj_rhs) internal::ConjugateAll(rhs);
  Store(rhs, x);
  return 0;
}

template <typename T>
int LuFactor(MatrixRef<const T> a, MatrixRef<T> lu, int32_t* pivots) {
  Work<T> w = Load(a);
  const Int n = w.rows;
  Int info = 0;
  if (n > 0) {
    std::vector<Int> ipiv(static_cast<size_t>(n));
    internal::Getrf(n, w.data(), w.ld(), ipiv.data(), &info);
    for (Int i = 0; i < n; ++i) pivots[i] = ipiv[static_cast<size_t>(i)] - 1;
  }
  Store(w, lu);
  return info;
}

namespace {

// SolveTriangular for a real a with one unit stride and a C-order x (the usual case): b copied
// into x, solved there by BLAS's trsm reading a where it is (row-major CBLAS, a's transposed
// view as a^T with the other triangle), without LAPACK's column-major copies of a, b and x (a
// matrix b, such as Cholesky's gradient's, made two transposing copies and one back). False
// (nothing done) for other layouts. A zero on a's diagonal is singular, as ?trtrs says.
template <typename T>
bool SolveTriangularInPlace(MatrixRef<const T> a, MatrixRef<const T> b, bool lower, int trans,
                            bool unit_diagonal, MatrixRef<T> x, int* info) {
  const int64_t n = a.rows, k = b.cols;
  const bool row_major = a.col_stride == 1 && a.row_stride >= std::max<int64_t>(1, n);
  const bool col_major = a.row_stride == 1 && a.col_stride >= std::max<int64_t>(1, n);
  const int64_t lda = row_major ? a.row_stride : a.col_stride;
  constexpr int64_t kMostBlas = std::numeric_limits<blasint>::max();  // BLAS's int
  if (!(row_major || col_major) || x.col_stride != 1 || x.row_stride != std::max<int64_t>(1, k) ||
      n > kMostBlas || k > kMostBlas || lda > kMostBlas || x.row_stride > kMostBlas) {
    return false;
  }
  *info = 0;
  for (int64_t i = 0; i < n && !unit_diagonal; ++i) {
    if (a(i, i) == T(0)) {
      *info = static_cast<int>(i + 1);
      return true;
    }
  }
  internal::CopyMatrix(b.data, b.row_stride, b.col_stride, x.data, x.row_stride, 1, n, k);
  if (n == 0 || k == 0) return true;
  // A column-major a is, read row-major, a^T: the other triangle, the other operation.
  const bool upper = lower == col_major;
  const bool transposed = (trans != 0) != col_major;
  const CBLAS_UPLO uplo = upper ? CblasUpper : CblasLower;
  const CBLAS_TRANSPOSE op = transposed ? CblasTrans : CblasNoTrans;
  const CBLAS_DIAG diag = unit_diagonal ? CblasUnit : CblasNonUnit;
  auto blas = [](int64_t v) { return static_cast<blasint>(v); };  // (each checked above)
  if constexpr (std::is_same_v<T, double>) {
    cblas_dtrsm(CblasRowMajor, CblasLeft, uplo, op, diag, blas(n), blas(k), 1.0, a.data,
                blas(lda), x.data, blas(x.row_stride));
  } else {
    cblas_strsm(CblasRowMajor, CblasLeft, uplo, op, diag, blas(n), blas(k), 1.0f, a.data,
                blas(lda), x.data, blas(x.row_stride));
  }
  return true;
}

}  // namespace

// With a C-order a, LAPACK gets m = a^T (the other triangle): a x = b is m^T x = b, a^T x = b is
// m x = b, and a^H x = b is conj(m) x = b, solved as m conj(x) = conj(b).
template <typename T>
int SolveTriangular(MatrixRef<const T> a, MatrixRef<const T> b, bool lower, int trans,
                    bool unit_diagonal, MatrixRef<T> x) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    int info = 0;
    if (SolveTriangularInPlace(a, b, lower, trans, unit_diagonal, x, &info)) return info;
  }
  const bool t = internal::RowMajor(a);
  Work<T> w = LoadAs(a, t);
  Work<T> rhs = Load(b);
  const bool conj_rhs = t && trans == 2;
  char op = trans == 0 ? 'N' : trans == 1 ? 'T' : 'C';
  if (t) op = trans == 0 ? 'T' : 'N';
  if (conj_rhs) internal::ConjugateAll(rhs);
  Int info = 0;
  if (w.rows > 0 && rhs.cols > 0) {
    internal::Trtrs(Uplo(lower, t), op, unit_diagonal ? 'U' : 'N', w.rows, rhs.cols, w.data(),
                    w.ld(), rhs.data(), rhs.ld(), &info);
  }
  if (info != 0) return info;
  if (conj_rhs) internal::ConjugateAll(rhs);
  Store(rhs, x);
  return 0;
}

// With a C-order c, LAPACK gets m = c^T, whose product m^H m (or m m^H) is conj(a): x comes from
// conj(b) and is conjugated back (nothing to do for real types).
template <typename T>
void CholeskySolve(MatrixRef<const T> c, bool lower, MatrixRef<const T> b, MatrixRef<T> x) {
  const bool t = internal::RowMajor(c);
  Work<T> w = LoadAs(c, t);
  Work<T> rhs = Load(b);
  if (t) internal::ConjugateAll(rhs);
  Int info = 0;
  if (w.rows > 0 && rhs.cols > 0) {
    internal::Potrs(Uplo(lower, t), w.rows, rhs.cols, w.data(), w.ld(), rhs.data(), rhs.ld(),
                    &info);
  }
  if (t) internal::ConjugateAll(rhs);
  Store(rhs, x);
}

namespace {

// ?syevd / ?heevd and ?sygvd / ?hegvd with their workspace queries.
int EighLapack(char jobz, char uplo, Int n, float* a, Int lda, float* b, Int ldb, float* w) {
  Int info = 0, itype = 1, iq = 0, lwork = -1, liwork = -1;
  float q = 0;
  if (b == nullptr) {
    lapack::ssyevd_(&jobz, &uplo, &n, a, &lda, w, &q, &lwork, &iq, &liwork, &info, 1, 1);
  } else {
    lapack::ssygvd_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, &q, &lwork, &iq, &liwork, &info,
                    1, 1);
  }
  lwork = internal::WorkSize(q);
  liwork = std::max<Int>(1, iq);
  std::vector<float> work(static_cast<size_t>(lwork));
  std::vector<Int> iwork(static_cast<size_t>(liwork));
  if (b == nullptr) {
    lapack::ssyevd_(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, iwork.data(), &liwork, &info,
                    1, 1);
  } else {
    lapack::ssygvd_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, work.data(), &lwork,
                    iwork.data(), &liwork, &info, 1, 1);
  }
  return info;
}

int EighLapack(char jobz, char uplo, Int n, double* a, Int lda, double* b, Int ldb, double* w) {
  Int info = 0, itype = 1, iq = 0, lwork = -1, liwork = -1;
  double q = 0;
  if (b == nullptr) {
    lapack::dsyevd_(&jobz, &uplo, &n, a, &lda, w, &q, &lwork, &iq, &liwork, &info, 1, 1);
  } else {
    lapack::dsygvd_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, &q, &lwork, &iq, &liwork, &info,
                    1, 1);
  }
  lwork = internal::WorkSize(q);
  liwork = std::max<Int>(1, iq);
  std::vector<double> work(static_cast<size_t>(lwork));
  std::vector<Int> iwork(static_cast<size_t>(liwork));
  if (b == nullptr) {
    lapack::dsyevd_(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, iwork.data(), &liwork, &info,
                    1, 1);
  } else {
    lapack::dsygvd_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, work.data(), &lwork,
                    iwork.data(), &liwork, &info, 1, 1);
  }
  return info;
}

int EighLapack(char jobz, char uplo, Int n, lapack::C* a, Int lda, lapack::C* b, Int ldb,
               float* w) {
  Int info = 0, itype = 1, iq = 0, lwork = -1, liwork = -1, lrwork = -1;
  lapack::C q = 0;
  float rq = 0;
  if (b == nullptr) {
    lapack::cheevd_(&jobz, &uplo, &n, a, &lda, w, &q, &lwork, &rq, &lrwork, &iq, &liwork, &info, 1,
                    1);
  } else {
    lapack::chegvd_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, &q, &lwork, &rq, &lrwork, &iq,
                    &liwork, &info, 1, 1);
  }
  lwork = internal::WorkSize(q);
  lrwork = internal::WorkSize(rq);
  liwork = std::max<Int>(1, iq);
  std::vector<lapack::C> work(static_cast<size_t>(lwork));
  std::vector<float> rwork(static_cast<size_t>(lrwork));
  std::vector<Int> iwork(static_cast<size_t>(liwork));
  if (b == nullptr) {
    lapack::cheevd_(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, rwork.data(), &lrwork,
                    iwork.data(), &liwork, &info, 1, 1);
  } else {
    lapack::chegvd_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, work.data(), &lwork,
                    rwork.data(), &lrwork, iwork.data(), &liwork, &info, 1, 1);
  }
  return info;
}

int EighLapack(char jobz, char uplo, Int n, lapack::Z* a, Int lda, lapack::Z* b, Int ldb,
               double* w) {
  Int info = 0, itype = 1, iq = 0, lwork = -1, liwork = -1, lrwork = -1;
  lapack::Z q = 0;
  double rq = 0;
  if (b == nullptr) {
    lapack::zheevd_(&jobz, &uplo, &n, a, &lda, w, &q, &lwork, &rq, &lrwork, &iq, &liwork, &info, 1,
                    1);
  } else {
    lapack::zhegvd_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, &q, &lwork, &rq, &lrwork, &iq,
                    &liwork, &info, 1, 1);
  }
  lwork = internal::WorkSize(q);
  lrwork = internal::WorkSize(rq);
  liwork = std::max<Int>(1, iq);
  std::vector<lapack::Z> work(static_cast<size_t>(lwork));
  std::vector<double> rwork(static_cast<size_t>(lrwork));
  std::vector<Int> iwork(static_cast<size_t>(liwork));
  if (b == nullptr) {
    lapack::zheevd_(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, rwork.data(), &lrwork,
                    iwork.data(), &liwork, &info, 1, 1);
  } else {
    lapack::zhegvd_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, work.data(), &lwork,
                    rwork.data(), &lrwork, iwork.data(), &liwork, &info, 1, 1);
  }
  return info;
}

}  // namespace

template <typename T>
int Eigh(MatrixRef<const T> a, MatrixRef<const T> b, bool lower, Real<T>* w, int64_t w_stride,
         MatrixRef<T> v) {
  // Eigenvalues alone: a C-order a is read as a^T (conj(a) for a Hermitian one, whose
  // eigenvalues are a's) from the other triangle, and b likewise.
  const bool t = v.data == nullptr && internal::RowMajor(a);
  Work<T> wa = LoadAs(a, t);
  const Int n = wa.rows;
  if (n == 0) return 0;
  std::vector<Real<T>> values(static_cast<size_t>(n));
  Int info = 0;
  const char jobz = v.data != nullptr ? 'V' : 'N';
  const char uplo = Uplo(lower, t);
  if (b.data != nullptr) {
    Work<T> wb = LoadAs(b, t);
    info = EighLapack(jobz, uplo, n, wa.data(), wa.ld(), wb.data(), wb.ld(), values.data());
  } else {
    info = EighLapack(jobz, uplo, n, wa.data(), wa.ld(), nullptr, 1, values.data());
  }
  if (info != 0) return info;
  for (Int i = 0; i < n; ++i) w[i * w_stride] = values[static_cast<size_t>(i)];
  if (v.data != nullptr) Store(wa, v);
  return 0;
}

template <typename T>
int EighGrad(MatrixRef<const T> a, MatrixRef<const T> b, MatrixRef<const T> gw, bool lower,
             MatrixRef<T> ga, MatrixRef<T> gb) {
  const int64_t n = a.rows;
  std::vector<Real<T>> w(static_cast<size_t>(n));
  Work<T> v(n, n);
  const int info = Eigh<T>(a, b, lower, w.data(), 1, {v.data(), n, n, 1, n});
  if (info != 0) return info;
  // g = v diag(d) v^H, folded onto the lower (upper) triangle.
  auto fold = [&](auto weight, MatrixRef<T> out) {
    Work<T> g(n, n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T s(0);
        for (int64_t k = 0; k < n; ++k) s += v.at(i, k) * weight(k) * internal::Conj(v.at(j, k));
        g.at(i, j) = s;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T value(0);
        if (i == j) {
          value = g.at(i, i);
        } else if (lower ? i > j : i < j) {
          value = g.at(i, j) + g.at(j, i);
        }
        out.data[i * out.row_stride + j * out.col_stride] = value;
      }
    }
  };
  auto gw_at = [&](int64_t k) { return gw.data[k * gw.row_stride]; };
  fold(gw_at, ga);
  if (b.data != nullptr) fold([&](int64_t k) { return -gw_at(k) * T(w[k]); }, gb);
  return 0;
}

#define KILN_SLINALG_INSTANTIATE(T)                                                             \
  template int Cholesky<T>(MatrixRef<const T>, bool, MatrixRef<T>);                             \
  template int Solve<T>(MatrixRef<const T>, MatrixRef<const T>, Structure, bool, MatrixRef<T>); \
  template int LuFactor<T>(MatrixRef<const T>, MatrixRef<T>, int32_t*);                         \
  template int SolveTriangular<T>(MatrixRef<const T>, MatrixRef<const T>, bool, int, bool,      \
                                  MatrixRef<T>);                                                \
  template void CholeskySolve<T>(MatrixRef<const T>, bool, MatrixRef<const T>, MatrixRef<T>);   \
  template int Eigh<T>(MatrixRef<const T>, MatrixRef<const T>, bool, Real<T>*, int64_t,         \
                       MatrixRef<T>);                                                           \
  template int EighGrad<T>(MatrixRef<const T>, MatrixRef<const T>, MatrixRef<const T>, bool,    \
                           MatrixRef<T>, MatrixRef<T>);
KILN_SLINALG_INSTANTIATE(float)
KILN_SLINALG_INSTANTIATE(double)
KILN_SLINALG_INSTANTIATE(std::complex<float>)
KILN_SLINALG_INSTANTIATE(std::complex<double>)
#undef KILN_SLINALG_INSTANTIATE

}  // namespace kiln::slinalg
