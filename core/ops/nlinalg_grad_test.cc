// The gradients of the nlinalg ops against finite differences (verify_grad), in float64 and
// float32, for square, tall and wide matrices; and the ones that are not implemented say so.
#include <gtest/gtest.h>

#include <cmath>

#include "core/kiln.h"
#include "core/ops/diagonal.h"
#include "core/ops/nlinalg.h"
#include "core/ops/nlinalg_decomp.h"

namespace kiln {
namespace {

// A well-conditioned m x n matrix of distinct entries (diagonally dominated when square).
Tensor Matrix(int64_t m, int64_t n, double shift = 0.0, DType dtype = DType::kFloat64) {
  std::vector<double> v(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      v[i * n + j] = std::sin(1.3 * (i * n + j) + 0.4) + (i == j ? 3.0 + shift * i : 0.0);
    }
  }
  return Tensor::FromValues<double>(dtype, {m, n}, v)->AsType(dtype);
}

// A symmetric n x n matrix with well-separated eigenvalues.
Tensor Symmetric(int64_t n) {
  std::vector<double> v(n * n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      v[i * n + j] = 0.3 * std::cos(0.7 * (i + j) + 0.1 * i * j) + (i == j ? 1.5 * i : 0.0);
    }
  }
  return *Tensor::FromValues<double>(DType::kFloat64, {n, n}, v);
}

void ExpectGrad(const std::function<Var(const std::vector<Var>&)>& fn,
                const std::vector<Tensor>& point) {
  const absl::Status s = verify_grad(fn, point);
  EXPECT_TRUE(s.ok()) << s;
}

TEST(NlinalgGradTest, InverseDeterminantsAndPseudoInverse) {
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    SCOPED_TRACE(DTypeName(dtype));
    ExpectGrad([](const std::vector<Var>& in) { return matrix_inverse(in[0]); },
               {Matrix(3, 3, 0.5, dtype)});
    ExpectGrad([](const std::vector<Var>& in) { return det(in[0]); }, {Matrix(3, 3, 0, dtype)});
    ExpectGrad([](const std::vector<Var>& in) { return slogdet(in[0])[1]; },
               {Matrix(4, 4, 0, dtype)});
  }
  // A negative determinant: log |det| still has the gradient x^-T.
  Tensor neg = Matrix(3, 3);
  neg.data<double>()[0] = -4.0;
  ExpectGrad([](const std::vector<Var>& in) { return slogdet(in[0])[1]; }, {neg});
  for (const auto& [m, n] : {std::pair{3, 5}, std::pair{5, 3}, std::pair{3, 3}}) {
    SCOPED_TRACE(absl::StrCat(m, "x", n));
    ExpectGrad([](const std::vector<Var>& in) { return pinv(in[0]); }, {Matrix(m, n)});
  }
  // The Hermitian pinv reads the lower triangle: its gradient is checked through the symmetric
  // matrix that triangle stands for.
  ExpectGrad(
      [](const std::vector<Var>& in) {
        const Var n = constant(int64_t{3});
        const Var lower = in[0] * tri(n, n, constant(int64_t{0}));
        const Var strict = in[0] * tri(n, n, constant(int64_t{-1}));
        return pinv(lower + transpose(strict), true);
      },
      {Symmetric(3)});
}

TEST(NlinalgGradTest, Eigh) {
  for (const std::string uplo : {"L", "U"}) {
    SCOPED_TRACE(uplo);
    ExpectGrad([&](const std::vector<Var>& in) { return eigh(in[0], uplo)[0]; }, {Symmetric(4)});
    ExpectGrad([&](const std::vector<Var>& in) { return eigh(in[0], uplo)[1]; }, {Symmetric(3)});
    // Both outputs in one cost.
    ExpectGrad(
        [&](const std::vector<Var>& in) {
          const std::vector<Var> wv = eigh(in[0], uplo);
          return sum(wv[1] * wv[1] * wv[1]) + sum(wv[0] * wv[0]);
        },
        {Symmetric(4)});
  }
}

TEST(NlinalgGradTest, Svd) {
  for (const auto& [m, n] : {std::pair{4, 3}, std::pair{3, 4}, std::pair{3, 3}}) {
    SCOPED_TRACE(absl::StrCat(m, "x", n));
    const Tensor a = Matrix(m, n, 1.0);
    ExpectGrad([](const std::vector<Var>& in) { return svd(in[0], false, false)[0]; }, {a});
    // Singular values only, from the full decomposition.
    ExpectGrad([](const std::vector<Var>& in) { return svd(in[0], true, true)[1]; }, {a});
    // u and vt enter as u diag(s) vt (sign-free), and u alone through u * u.
    ExpectGrad(
        [](const std::vector<Var>& in) {
          const std::vector<Var> usv = svd(in[0], false, true);
          return matrix_dot({usv[0] * dimshuffle(usv[1], {kX, 0}), usv[2]});
        },
        {a});
    ExpectGrad(
        [](const std::vector<Var>& in) {
          const std::vector<Var> usv = svd(in[0], false, true);
          return usv[0] * usv[0] + sum(usv[2] * usv[2] * usv[2]);
        },
        {a});
  }
  const absl::Status full = verify_grad(
      [](const std::vector<Var>& in) { return svd(in[0], true, true)[0]; }, {Matrix(3, 2)});
  EXPECT_NE(full.message().find("Gradient of svd not implemented for full_matrices=True"),
            std::string::npos)
      << full;
}

TEST(NlinalgGradTest, Qr) {
  for (const auto& [m, n] : {std::pair{5, 3}, std::pair{3, 5}, std::pair{4, 4}}) {
    SCOPED_TRACE(absl::StrCat(m, "x", n));
    const Tensor a = Matrix(m, n, 0.5);
    for (const std::string mode : {"reduced", "r"}) {
      SCOPED_TRACE(mode);
      ExpectGrad([&](const std::vector<Var>& in) { return qr(in[0], mode).back(); }, {a});
    }
    ExpectGrad([](const std::vector<Var>& in) { return qr(in[0])[0]; }, {a});
    // Static shapes pick one branch; unknown ones build both behind an ifelse.
    const StaticShape known = {m, n};
    ExpectGrad(
        [&](const std::vector<Var>& in) {
          const std::vector<Var> qr_ = qr(specify_shape(in[0], known));
          return sum(qr_[0] * 2.0) + dot(qr_[0], qr_[1]);
        },
        {a});
  }
  ExpectGrad([](const std::vector<Var>& in) { return qr(in[0], "complete")[1]; }, {Matrix(3, 5)});
  const absl::Status raw =
      verify_grad([](const std::vector<Var>& in) { return qr(in[0], "raw")[0]; }, {Matrix(3, 3)});
  EXPECT_NE(raw.message().find("Gradient of qr not implemented for mode=raw"), std::string::npos)
      << raw;
}

TEST(NlinalgGradTest, Lstsq) {
  const Tensor a = Matrix(5, 3);
  const Tensor b =
      *Tensor::FromValues<double>(DType::kFloat64, {5}, std::vector<double>{0.5, -1, 2, 0.25, 1.5});
  ExpectGrad([](const std::vector<Var>& in) { return lstsq(in[0], in[1], constant(-1.0))[0]; },
             {a, b});
  ExpectGrad([](const std::vector<Var>& in) { return lstsq(in[0], in[1], constant(-1.0))[0]; },
             {a, Matrix(5, 2)});
  const absl::Status residuals = verify_grad(
      [](const std::vector<Var>& in) { return lstsq(in[0], in[1], constant(-1.0))[1]; }, {a, b});
  EXPECT_NE(residuals.message().find("residuals and singular values are not implemented"),
            std::string::npos)
      << residuals;
}

}  // namespace
}  // namespace kiln
