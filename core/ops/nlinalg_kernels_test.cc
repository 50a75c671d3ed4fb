// The nlinalg kernels on strided views, as a batched op will call them: a stack of matrices in
// one buffer (each found by an offset), column-major and interleaved layouts, every scalar type;
// and the dimension checks.
#include "core/ops/nlinalg_kernels.h"

#include <gtest/gtest.h>

#include <complex>
#include <vector>

namespace kiln::nlinalg {
namespace {

// Two 3 x 3 matrices interleaved element by element (batch stride 1, row stride 6, col stride 2).
template <typename T>
std::vector<T> Interleaved() {
  const double a[9] = {4, 1, 0, 1, 3, 1, 0, 1, 2};
  const double b[9] = {2, -1, 0.5, 0, 5, 1, 1, 0, 3};
  std::vector<T> buf(18);
  for (int i = 0; i < 9; ++i) {
    buf[2 * i] = T(a[i]);
    buf[2 * i + 1] = T(b[i]);
  }
  return buf;
}

template <typename T>
void CheckInverseOfEachMatrix(double tol) {
  const std::vector<T> buf = Interleaved<T>();
  std::vector<T> out(18, T(0));
  for (int batch = 0; batch < 2; ++batch) {
    const MatrixRef<const T> a{buf.data() + batch, 3, 3, 6, 2};
    const MatrixRef<T> inv{out.data() + 9 * batch, 3, 3, 1, 3};  // column-major output
    ASSERT_TRUE(Inverse<T>(a, inv).ok());
    for (int i = 0; i < 3; ++i) {  // a inv = I
      for (int j = 0; j < 3; ++j) {
        T sum(0);
        for (int k = 0; k < 3; ++k) sum += a(i, k) * inv(k, j);
        EXPECT_NEAR(std::abs(sum - T(i == j ? 1 : 0)), 0, tol) << batch << " " << i << j;
      }
    }
  }
  // det(a) = 4 (6 - 1) - 1 (2 - 0) = 18; det(b) = 2 * 15 + 1 * (0 - 1) + 0.5 * (0 - 5) = 26.5.
  EXPECT_NEAR(std::abs(*Determinant<T>(MatrixRef<const T>{buf.data(), 3, 3, 6, 2}) - T(18)), 0,
              tol * 18);
  EXPECT_NEAR(std::abs(*Determinant<T>(MatrixRef<const T>{buf.data() + 1, 3, 3, 6, 2}) - T(26.5)),
              0, tol * 26.5);
}

TEST(NlinalgKernelsTest, StridedStacksOfEveryType) {
  CheckInverseOfEachMatrix<double>(1e-13);
  CheckInverseOfEachMatrix<float>(1e-5);
  CheckInverseOfEachMatrix<std::complex<double>>(1e-13);
  CheckInverseOfEachMatrix<std::complex<float>>(1e-5);
}

TEST(NlinalgKernelsTest, DecompositionsReconstructStridedInputs) {
  const std::vector<double> buf = Interleaved<double>();
  const MatrixRef<const double> b{buf.data() + 1, 3, 3, 6, 2};
  double s[3];
  std::vector<double> u(9), vt(9);
  ASSERT_TRUE(Svd<double>(b, false, s, RowMajor(u.data(), 3, 3), RowMajor(vt.data(), 3, 3)).ok());
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      double sum = 0;
      for (int k = 0; k < 3; ++k) sum += u[i * 3 + k] * s[k] * vt[k * 3 + j];
      EXPECT_NEAR(sum, b(i, j), 1e-12);
    }
  }
  std::vector<double> q(9), r(9);
  ASSERT_TRUE(
      Qr<double>(b, QrMode::kReduced, RowMajor(q.data(), 3, 3), RowMajor(r.data(), 3, 3), nullptr)
          .ok());
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      double sum = 0;
      for (int k = 0; k < 3; ++k) sum += q[i * 3 + k] * r[k * 3 + j];
      EXPECT_NEAR(sum, b(i, j), 1e-12);
      if (i > j) {
        EXPECT_EQ(r[i * 3 + j], 0.0);
      }
    }
  }
  // A least-squares fit of a (strided) 3 x 2 system with a residual: x of [[1, 0], [0, 1],
  // [1, 1]] for b = (1, 2, 4) is (4/3, 7/3); the residual is 1/3.
  const double a_cols[6] = {1, 0, 1, 0, 1, 1};  // column-major
  const double rhs[3] = {1, 2, 4};
  double x[2], sv[2], residual = -1;
  absl::StatusOr<int64_t> rank = LeastSquares<double>(
      MatrixRef<const double>{a_cols, 3, 2, 1, 3}, MatrixRef<const double>{rhs, 3, 1, 1, 1}, -1.0,
      MatrixRef<double>{x, 2, 1, 1, 1}, sv, &residual);
  ASSERT_TRUE(rank.ok()) << rank.status();
  EXPECT_EQ(*rank, 2);
  EXPECT_NEAR(x[0], 4.0 / 3, 1e-12);
  EXPECT_NEAR(x[1], 7.0 / 3, 1e-12);
  EXPECT_NEAR(residual, 1.0 / 3, 1e-12);
}

TEST(NlinalgKernelsTest, DimensionsPastLapacksIntegersAreRefused) {
  EXPECT_TRUE(CheckLapackDims(3, 4).ok());
  EXPECT_EQ(CheckLapackDims(int64_t{1} << 31, 0).message(),
            "a 2147483648 x 0 matrix is past LAPACK's 32-bit dimensions");
  EXPECT_FALSE(CheckLapackDims(int64_t{1} << 30, int64_t{1} << 30).ok());  // 2^60 elements
  double w[1];
  const absl::Status big = EigHermitian<double>(
      MatrixRef<const double>{nullptr, int64_t{1} << 31, int64_t{1} << 31, 0, 0}, 'L', w,
      MatrixRef<double>{});
  EXPECT_FALSE(big.ok());
  const std::vector<double> singular = {1, 2, 2, 4};
  std::vector<double> out(4);
  EXPECT_EQ(Inverse<double>(RowMajor(singular.data(), 2, 2), RowMajor(out.data(), 2, 2)).message(),
            "Singular matrix");
}

}  // namespace
}  // namespace kiln::nlinalg
