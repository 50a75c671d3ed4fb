// The matrix exponential, its gradient and the Lyapunov solvers (see slinalg_kernels.h). They
// compute in double precision (float and complex<float> inputs are widened, the results
// narrowed), on column-major work matrices with BLAS products and LAPACK's Schur form.
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "core/ops/slinalg_kernels.h"
#include "core/ops/slinalg_lapack.h"

namespace kiln::slinalg {

using internal::Int;
using internal::Work;

namespace {

// The double-precision type T is computed in.
template <typename T>
using Wide = std::conditional_t<std::is_same_v<T, Real<T>>, double, std::complex<double>>;

// m widened into a column-major work matrix.
template <typename W, typename T>
Work<W> LoadWide(MatrixRef<const T> m) {
  Work<W> w(m.rows, m.cols);
  for (int64_t j = 0; j < m.cols; ++j) {
    for (int64_t i = 0; i < m.rows; ++i) {
      w.at(i, j) = static_cast<W>(m.data[i * m.row_stride + j * m.col_stride]);
    }
  }
  return w;
}

// w narrowed into out.
template <typename W, typename T>
void StoreNarrow(Work<W>& w, MatrixRef<T> out) {
  for (int64_t j = 0; j < out.cols; ++j) {
    for (int64_t i = 0; i < out.rows; ++i) {
      out.data[i * out.row_stride + j * out.col_stride] = static_cast<T>(w.at(i, j));
    }
  }
}

// c = a b for n x n work matrices.
template <typename W>
Work<W> Mul(Work<W>& a, Work<W>& b) {
  Work<W> c(a.rows, b.cols);
  if (a.rows > 0) {
    internal::Gemm(CblasNoTrans, CblasNoTrans, a.rows, b.cols, a.cols, a.data(), a.ld(), b.data(),
                   b.ld(), c.data(), c.ld());
  }
  return c;
}

// c = op(a) op(b) with the transposes given (CblasConjTrans for a^H).
template <typename W>
Work<W> Mul(CBLAS_TRANSPOSE ta, Work<W>& a, CBLAS_TRANSPOSE tb, Work<W>& b) {
  const Int m = ta == CblasNoTrans ? a.rows : a.cols;
  const Int k = ta == CblasNoTrans ? a.cols : a.rows;
  const Int n = tb == CblasNoTrans ? b.cols : b.rows;
  Work<W> c(m, n);
  if (m > 0 && n > 0) {
    internal::Gemm(ta, tb, m, n, k, a.data(), a.ld(), b.data(), b.ld(), c.data(), c.ld());
  }
  return c;
}

// The maximum column sum of |a|.
template <typename W>
double OneNorm(Work<W>& a) {
  double best = 0;
  for (Int j = 0; j < a.cols; ++j) {
    double s = 0;
    for (Int i = 0; i < a.rows; ++i) s += std::abs(a.at(i, j));
    best = std::max(best, s);
  }
  return best;
}

// x = a^-1 x for a square a (overwritten by its LU factors); LAPACK's info.
template <typename W>
Int SolveInPlace(Work<W>& a, Work<W>& x) {
  if (a.rows == 0) return 0;
  std::vector<Int> ipiv(static_cast<size_t>(a.rows));
  Int info = 0;
  internal::Getrf(a.rows, a.data(), a.ld(), ipiv.data(), &info);
  if (info != 0) return info;
  internal::Getrs('N', a.rows, x.cols, a.data(), a.ld(), ipiv.data(), x.data(), x.ld(), &info);
  return info;
}

// Pade coefficients b_0..b_m of exp for m = 3, 5, 7, 9 and 13.
constexpr double kPade3[] = {120., 60., 12., 1.};
constexpr double kPade5[] = {30240., 15120., 3360., 420., 30., 1.};
constexpr double kPade7[] = {17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.};
constexpr double kPade9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                             2162160.,     110880.,     3960.,       90.,        1.};
constexpr double kPade13[] = {64764752532480000.,
                              32382376266240000.,
                              7771770303897600.,
                              1187353796428800.,
                              129060195264000.,
                              10559470521600.,
                              670442572800.,
                              33522128640.,
                              1323241920.,
                              40840800.,
                              960960.,
                              16380.,
                              182.,
                              1.};
// The largest 1-norms for which the Pade approximant of each degree is accurate to double
// precision (Higham 2005, Table 2.3).
constexpr double kTheta[] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                             2.097847961257068e0, 5.371920351148152e0};

// sum_i coef[i] * p[i] plus c0 I, for matrices p of the same size.
template <typename W>
Work<W> Combine(Int n, std::initializer_list<std::pair<double, Work<W>*>> terms, double c0) {
  Work<W> r(n, n);
  for (const auto& [c, m] : terms) {
    for (size_t e = 0; e < r.v.size(); ++e) r.v[e] += c * m->v[e];
  }
  for (Int i = 0; i < n; ++i) r.at(i, i) += c0;
  return r;
}

// exp(a) of a column-major n x n matrix; false when the Pade system is singular (non-finite a).
template <typename W>
bool ExpmWork(Work<W>& a, Work<W>& out) {
  const Int n = a.rows;
  if (n == 0) return true;
  for (const W& x : a.v) {
    if (!std::isfinite(std::abs(x))) return false;
  }
  const double norm = OneNorm(a);
  int s = 0;
  Work<W> u(n, n), v(n, n);
  Work<W> a2 = Mul(a, a);
  const double* orders[] = {kPade3, kPade5, kPade7, kPade9};
  int degree = -1;
  for (int d = 0; d < 4; ++d) {
    if (norm <= kTheta[d]) {
      degree = d;
      break;
    }
  }
  if (degree >= 0) {
    const double* b = orders[degree];
    const int m = 3 + 2 * degree;
    // U = a (b_1 I + b_3 a^2 + ...), V = b_0 I + b_2 a^2 + ...
    Work<W> odd = Combine<W>(n, {}, b[1]);
    Work<W> even = Combine<W>(n, {}, b[0]);
    Work<W> power = a2;
    for (int k = 2; k <= m - 1; k += 2) {
      for (size_t e = 0; e < power.v.size(); ++e) {
        odd.v[e] += b[k + 1] * power.v[e];
        even.v[e] += b[k] * power.v[e];
      }
      if (k + 2 <= m - 1) power = Mul(power, a2);
    }
    u = Mul(a, odd);
    v = std::move(even);
  } else {
    s = std::max(0, static_cast<int>(std::ceil(std::log2(norm / kTheta[4]))));
    const double scale = std::ldexp(1.0, -s);
    for (W& x : a.v) x *= scale;
    a2 = Mul(a, a);
    Work<W> a4 = Mul(a2, a2);
    Work<W> a6 = Mul(a4, a2);
    const double* b = kPade13;
    Work<W> inner = Combine<W>(n, {{b[13], &a6}, {b[11], &a4}, {b[9], &a2}}, 0.0);
    Work<W> t = Mul(a6, inner);
    Work<W> odd = Combine<W>(n, {{1.0, &t}, {b[7], &a6}, {b[5], &a4}, {b[3], &a2}}, b[1]);
    u = Mul(a, odd);
    Work<W> inner2 = Combine<W>(n, {{b[12], &a6}, {b[10], &a4}, {b[8], &a2}}, 0.0);
    Work<W> t2 = Mul(a6, inner2);
    v = Combine<W>(n, {{1.0, &t2}, {b[6], &a6}, {b[4], &a4}, {b[2], &a2}}, b[0]);
  }
  // r = (v - u)^-1 (v + u), then squared s times.
  Work<W> p(n, n), q(n, n);
  for (size_t e = 0; e < p.v.size(); ++e) {
    p.v[e] = v.v[e] + u.v[e];
    q.v[e] = v.v[e] - u.v[e];
  }
  if (SolveInPlace(q, p) != 0) return false;
  for (int i = 0; i < s; ++i) p = Mul(p, p);
  out = std::move(p);
  return true;
}

// A NaN-filled out.
template <typename T>
void FillNaN(MatrixRef<T> out) {
  for (int64_t i = 0; i < out.rows; ++i) {
    for (int64_t j = 0; j < out.cols; ++j) {
      out.data[i * out.row_stride + j * out.col_stride] =
          T(std::numeric_limits<Real<T>>::quiet_NaN());
    }
  }
}

// ?gees with vectors, no ordering: a becomes its Schur form, z the Schur vectors; LAPACK's info.
Int Schur(Work<double>& a, Work<double>& z) {
  const Int n = a.rows;
  Int sdim = 0, info = 0, lwork = -1;
  std::vector<double> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n));
  double q = 0;
  const char jobvs = 'V', sort = 'N';
  lapack::dgees_(&jobvs, &sort, nullptr, &n, a.data(), &a.rows, &sdim, wr.data(), wi.data(),
                 z.data(), &z.rows, &q, &lwork, nullptr, &info, 1, 1);
  lwork = internal::WorkSize(q);
  std::vector<double> work(static_cast<size_t>(lwork));
  lapack::dgees_(&jobvs, &sort, nullptr, &n, a.data(), &a.rows, &sdim, wr.data(), wi.data(),
                 z.data(), &z.rows, work.data(), &lwork, nullptr, &info, 1, 1);
  return info;
}

Int Schur(Work<std::complex<double>>& a, Work<std::complex<double>>& z) {
  const Int n = a.rows;
  Int sdim = 0, info = 0, lwork = -1;
  std::vector<std::complex<double>> w(static_cast<size_t>(n));
  std::vector<double> rwork(static_cast<size_t>(n));
  std::complex<double> q = 0;
  const char jobvs = 'V', sort = 'N';
  lapack::zgees_(&jobvs, &sort, nullptr, &n, a.data(), &a.rows, &sdim, w.data(), z.data(), &z.rows,
                 &q, &lwork, rwork.data(), nullptr, &info, 1, 1);
  lwork = internal::WorkSize(q);
  std::vector<std::complex<double>> work(static_cast<size_t>(lwork));
  lapack::zgees_(&jobvs, &sort, nullptr, &n, a.data(), &a.rows, &sdim, w.data(), z.data(), &z.rows,
                 work.data(), &lwork, rwork.data(), nullptr, &info, 1, 1);
  return info;
}

// ?trsyl: t y + y t^H = scale c for the Schur form t, c overwritten by y; the scale.
double Sylvester(Work<double>& t, Work<double>& c) {
  const Int n = t.rows, isgn = 1;
  Int info = 0;
  double scale = 1;
  const char ta = 'N', tb = 'T';
  lapack::dtrsyl_(&ta, &tb, &isgn, &n, &n, t.data(), &t.rows, t.data(), &t.rows, c.data(), &c.rows,
                  &scale, &info, 1, 1);
  return scale;
}

double Sylvester(Work<std::complex<double>>& t, Work<std::complex<double>>& c) {
  const Int n = t.rows, isgn = 1;
  Int info = 0;
  double scale = 1;
  const char ta = 'N', tb = 'C';
  lapack::ztrsyl_(&ta, &tb, &isgn, &n, &n, t.data(), &t.rows, t.data(), &t.rows, c.data(), &c.rows,
                  &scale, &info, 1, 1);
  return scale;
}

// x solving a x + x a^H = q (a and q overwritten); false when the Schur form does not converge.
template <typename W>
bool LyapunovWork(Work<W>& a, Work<W>& q, Work<W>& x) {
  const Int n = a.rows;
  if (n == 0) return true;
  Work<W> z(n, n);
  if (Schur(a, z) != 0) return false;
  // f = z^H q z; t y + y t^H = f; x = z y z^H.
  Work<W> qz = Mul(CblasNoTrans, q, CblasNoTrans, z);
  Work<W> f = Mul(CblasConjTrans, z, CblasNoTrans, qz);
  const double scale = Sylvester(a, f);
  Work<W> zy = Mul(CblasNoTrans, z, CblasNoTrans, f);
  x = Mul(CblasNoTrans, zy, CblasConjTrans, z);
  if (scale != 1.0) {
    for (W& e : x.v) e /= scale;
  }
  return true;
}

}  // namespace

template <typename T>
int Expm(MatrixRef<const T> a, MatrixRef<T> out) {
  using W = Wide<T>;
  Work<W> w = LoadWide<W>(a);
  Work<W> r(w.rows, w.cols);
  if (!ExpmWork(w, r)) {
    FillNaN(out);
    return 0;
  }
  StoreNarrow(r, out);
  return 0;
}

template <typename T>
int ExpmGrad(MatrixRef<const T> a, MatrixRef<const T> g, MatrixRef<T> out) {
  using W = Wide<T>;
  const int64_t n = a.rows;
  Work<W> wa = LoadWide<W>(a);
  Work<W> wg = LoadWide<W>(g);
  // m = [[a^H, g], [0, a^H]]: exp(m)'s top-right block is the derivative.
  Work<W> m(2 * n, 2 * n);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < n; ++i) {
      const W aji = internal::Conj(wa.at(j, i));
      m.at(i, j) = aji;
      m.at(n + i, n + j) = aji;
      m.at(i, n + j) = wg.at(i, j);
    }
  }
  Work<W> e(2 * n, 2 * n);
  if (!ExpmWork(m, e)) {
    FillNaN(out);
    return 0;
  }
  Work<W> block(n, n);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < n; ++i) block.at(i, j) = e.at(i, n + j);
  }
  StoreNarrow(block, out);
  return 0;
}

template <typename T>
int SolveContinuousLyapunov(MatrixRef<const T> a, MatrixRef<const T> q, MatrixRef<T> x) {
  using W = Wide<T>;
  Work<W> wa = LoadWide<W>(a);
  Work<W> wq = LoadWide<W>(q);
  Work<W> r(wa.rows, wa.rows);
  if (!LyapunovWork(wa, wq, r)) return 1;
  StoreNarrow(r, x);
  return 0;
}

template <typename T>
int SolveDiscreteLyapunovBilinear(MatrixRef<const T> a, MatrixRef<const T> q, MatrixRef<T> x) {
  using W = Wide<T>;
  Work<W> wa = LoadWide<W>(a);
  Work<W> wq = LoadWide<W>(q);
  const Int n = wa.rows;
  if (n == 0) return 0;
  // inv = (a + I)^-1; the continuous equation b x + x b^H = c with b = inv (a - I) and
  // c = -2 inv q inv^H (scipy's bilinear transformation, written with one factorization).
  Work<W> lu = wa;
  Work<W> inv(n, n);
  for (Int i = 0; i < n; ++i) {
    lu.at(i, i) += 1.0;
    inv.at(i, i) = 1.0;
  }
  if (const Int info = SolveInPlace(lu, inv); info != 0) return info;
  Work<W> am = wa;
  for (Int i = 0; i < n; ++i) am.at(i, i) -= 1.0;
  Work<W> b = Mul(CblasNoTrans, inv, CblasNoTrans, am);
  Work<W> iq = Mul(CblasNoTrans, inv, CblasNoTrans, wq);
  Work<W> c = Mul(CblasNoTrans, iq, CblasConjTrans, inv);
  for (W& e : c.v) e *= -2.0;
  Work<W> r(n, n);
  if (!LyapunovWork(b, c, r)) return -1;
  StoreNarrow(r, x);
  return 0;
}

#define KILN_MATFUN_INSTANTIATE(T)                                                               \
  template int Expm<T>(MatrixRef<const T>, MatrixRef<T>);                                        \
  template int ExpmGrad<T>(MatrixRef<const T>, MatrixRef<const T>, MatrixRef<T>);                \
  template int SolveContinuousLyapunov<T>(MatrixRef<const T>, MatrixRef<const T>, MatrixRef<T>); \
  template int SolveDiscreteLyapunovBilinear<T>(MatrixRef<const T>, MatrixRef<const T>,          \
                                                MatrixRef<T>);
KILN_MATFUN_INSTANTIATE(float)
KILN_MATFUN_INSTANTIATE(double)
KILN_MATFUN_INSTANTIATE(std::complex<float>)
KILN_MATFUN_INSTANTIATE(std::complex<double>)
#undef KILN_MATFUN_INSTANTIATE

}  // namespace kiln::slinalg
