#include "core/ops/slinalg_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <random>
#include <vector>

namespace kiln::slinalg {
namespace {

// A matrix in its own buffer laid out row-major (0), column-major (1) or with padded strides
// (2), the layouts a batched op hands the kernels.
template <typename T>
struct Buf {
  std::vector<T> v;
  MatrixRef<T> m;
  Buf(int64_t r, int64_t c, int layout) {
    const int64_t rs = layout == 0 ? c : layout == 1 ? 1 : 2 * c + 3;
    const int64_t cs = layout == 0 ? 1 : layout == 1 ? r : 2;
    v.assign(static_cast<size_t>((r + 1) * (rs + 1) * (c + 1) * (cs + 1)), T(0));
    m = {v.data(), r, c, rs, cs};
  }
  T& at(int64_t i, int64_t j) { return m.data[i * m.row_stride + j * m.col_stride]; }
  MatrixRef<const T> c() const { return {m.data, m.rows, m.cols, m.row_stride, m.col_stride}; }
};

template <typename T>
T Conj(T x) {
  if constexpr (std::is_same_v<T, Real<T>>) {
    return x;
  } else {
    return std::conj(x);
  }
}

template <typename T>
class SlinalgKernelsTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(SlinalgKernelsTest, Types);

// Every kernel on sizes 0 to 5, every layout of every operand: Cholesky's factor reproduces a,
// the solves' residuals are small, the Lyapunov solutions satisfy their equations (and the
// sanitizer builds see every LAPACK call's buffers).
TYPED_TEST(SlinalgKernelsTest, ResidualsOverSizesAndLayouts) {
  using T = TypeParam;
  const double tol = std::is_same_v<Real<T>, float> ? 1e-3 : 1e-10;
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  auto rand = [&] {
    if constexpr (std::is_same_v<T, Real<T>>) {
      return T(normal(rng));
    } else {
      return T(normal(rng), normal(rng));
    }
  };
  for (int n = 0; n <= 5; ++n) {
    for (int k : {0, 1, 3}) {
      for (int la = 0; la < 3; ++la) {
        for (int lb = 0; lb < 3; ++lb) {
          SCOPED_TRACE(testing::Message()
                       << "n=" << n << " k=" << k << " la=" << la << " lb=" << lb);
          Buf<T> a(n, n, la), h(n, n, la), b(n, k, lb), x(n, k, lb), out(n, n, lb);
          for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) a.at(i, j) = rand() + (i == j ? T(4) : T(0));
          }
          for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
              T s(0);
              for (int l = 0; l < n; ++l) s += a.at(i, l) * Conj(a.at(j, l));
              h.at(i, j) = s + (i == j ? T(n) : T(0));  // Hermitian positive definite
            }
          }
          for (int i = 0; i < n; ++i) {
            for (int j = 0; j < k; ++j) b.at(i, j) = rand();
          }
          // Residual of m x = b (m given by its element function).
          auto residual = [&](auto m) {
            double worst = 0;
            for (int i = 0; i < n; ++i) {
              for (int j = 0; j < k; ++j) {
                T s(0);
                for (int l = 0; l < n; ++l) s += m(i, l) * x.at(l, j);
                worst = std::max(worst, double(std::abs(s - b.at(i, j))));
              }
            }
            return worst;
          };
          for (bool lower : {true, false}) {
            ASSERT_EQ(Cholesky<T>(h.c(), lower, out.m), 0);
            for (int i = 0; i < n; ++i) {
              for (int j = 0; j < n; ++j) {
                T s(0);
                for (int l = 0; l < n; ++l) {
                  s +=
                      lower ? out.at(i, l) * Conj(out.at(j, l)) : Conj(out.at(l, i)) * out.at(l, j);
                }
                EXPECT_NEAR(std::abs(s - h.at(i, j)), 0, tol * (1 + n * n));
              }
            }
            for (Structure st :
                 {Structure::kGeneral, Structure::kHermitian, Structure::kPositive}) {
              Buf<T>& m = st == Structure::kGeneral ? a : h;
              ASSERT_EQ(Solve<T>(m.c(), b.c(), st, lower, x.m), 0);
              EXPECT_LT(residual([&](int i, int j) { return m.at(i, j); }), tol * (1 + n * n));
            }
            for (int trans : {0, 1, 2}) {
              for (bool unit : {false, true}) {
                ASSERT_EQ(SolveTriangular<T>(a.c(), b.c(), lower, trans, unit, x.m), 0);
                EXPECT_LT(residual([&](int i, int j) {
                            const int r = trans == 0 ? i : j, c = trans == 0 ? j : i;
                            T e = (lower ? r > c : r < c) ? a.at(r, c) : T(0);
                            if (r == c) e = unit ? T(1) : a.at(r, c);
                            return trans == 2 ? Conj(e) : e;
                          }),
                          tol * (1 + n * n));
              }
            }
            std::vector<Real<T>> w(n + 1);
            // h v = w h v: every eigenvalue is 1.
            ASSERT_EQ(Eigh<T>(h.c(), h.c(), lower, w.data(), 1, {nullptr, 0, 0, 0, 0}), 0);
            for (int i = 0; i < n; ++i) EXPECT_NEAR(w[i], 1.0, tol * 10);
          }
          std::vector<int32_t> pivots(n + 1);
          EXPECT_EQ(LuFactor<T>(a.c(), out.m, pivots.data()), 0);
          ASSERT_EQ(SolveContinuousLyapunov<T>(a.c(), h.c(), out.m), 0);
          for (int i = 0; i < n; ++i) {  // a x + x a^H = h
            for (int j = 0; j < n; ++j) {
              T s(0);
              for (int l = 0; l < n; ++l)
                s += a.at(i, l) * out.at(l, j) + out.at(i, l) * Conj(a.at(j, l));
              EXPECT_NEAR(std::abs(s - h.at(i, j)), 0, tol * 10 * (1 + n * n));
            }
          }
          EXPECT_EQ(Expm<T>(a.c(), out.m), 0);
          EXPECT_EQ(ExpmGrad<T>(a.c(), h.c(), out.m), 0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::slinalg
