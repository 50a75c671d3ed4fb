#include "core/ops/slinalg_matfun.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

Tensor Mat(Shape shape, std::vector<double> v) {
  return *Tensor::FromValues<double>(DType::kFloat64, std::move(shape), v);
}

// A fixed n x m matrix of values in [-1, 1].
Tensor Filled(Shape shape, double start, double scale = 1.0) {
  return testing::Filled(DType::kFloat64, std::move(shape),
                         [&](int64_t i) { return scale * std::sin(start + 1.7 * i); });
}

// A symmetric positive definite n x n matrix.
Tensor Spd(int64_t n) {
  std::vector<double> v(n * n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) v[i * n + j] = 1.0 / (1.0 + std::abs(i - j)) + (i == j ? n : 0);
  }
  return Mat({n, n}, v);
}

absl::StatusOr<std::vector<Tensor>> RunGraph(const std::vector<Var>& in,
                                             const std::vector<Var>& out,
                                             const std::vector<Tensor>& values) {
  auto f = function(in, out);
  if (!f.ok()) return f.status();
  return (*f)(values);
}

TEST(SlinalgMatfunTest, NamesAndTypes) {
  const Var a = dmatrix("a"), b = dmatrix("b");
  EXPECT_EQ(eigvalsh(a)->owner()->op().Name(), "Eigvalsh{lower=True}");
  EXPECT_EQ(eigvalsh(a, b, false)->owner()->op().Name(), "Eigvalsh{lower=False}");
  EXPECT_EQ(eigvalsh(a)->type()->ToString(), "TensorType(float64, (?,))");
  // Aesara's dtypes: upcast of the inputs (a complex a gives a complex vector).
  EXPECT_EQ(eigvalsh(fmatrix())->type()->ToString(), "TensorType(float32, (?,))");
  EXPECT_EQ(eigvalsh(fmatrix(), dmatrix())->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(eigvalsh(zmatrix())->type()->ToString(), "TensorType(complex128, (?,))");
  EXPECT_EQ(expm(a)->owner()->op().Name(), "Expm");
  EXPECT_EQ(expm(tensor(DType::kFloat32, {3, 3}))->type()->ToString(),
            "TensorType(float32, (?, ?))");
  EXPECT_EQ(solve_continuous_lyapunov(a, b)->owner()->op().Name(), "SolveContinuousLyapunov");
  EXPECT_EQ(solve_continuous_lyapunov(fmatrix(), b)->type()->ToString(),
            "TensorType(float64, (?, ?))");
  EXPECT_EQ(solve_discrete_lyapunov(a, b, "bilinear")->owner()->op().Name(),
            "BilinearSolveDiscreteLyapunov");
  for (const char* name : {"Eigvalsh", "EigvalshGrad", "Expm", "ExpmGrad",
                           "SolveContinuousLyapunov", "BilinearSolveDiscreteLyapunov"}) {
    absl::StatusOr<OpPtr> op = MakeOp(name, {});
    ASSERT_TRUE(op.ok()) << op.status();
    absl::StatusOr<OpPtr> again = MakeOp(name, (*op)->Attrs());
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(**again == **op);
  }
  // Eigvalsh's gradient is EigvalshGrad's node; Expm's is ExpmGrad's.
  const Var ga = grad(sum(eigvalsh(a, b)), a);
  ASSERT_TRUE(ga.ok()) << ga.status();
  EXPECT_EQ(ga->owner()->op().Name(), "EigvalshGrad{lower=True}");
  const Var ge = grad(sum(expm(a)), a);
  ASSERT_TRUE(ge.ok()) << ge.status();
  EXPECT_EQ(ge->owner()->op().Name(), "ExpmGrad");
}

TEST(SlinalgMatfunTest, Errors) {
  const Var a = dmatrix("a"), b = dmatrix("b");
  EXPECT_EQ(eigvalsh(dvector("v")).status().message(),
            "Eigvalsh{lower=True}: input 0 (a) has type TensorType(float64, (?,)): `a` must be a "
            "matrix");
  EXPECT_EQ(expm(dtensor3("t")).status().message(),
            "Expm: input 0 (A) has type TensorType(float64, (?, ?, ?)): `A` must be a matrix");
  EXPECT_EQ(eigvalsh(tensor(DType::kFloat64, {2, 3})).status().message(),
            "Eigvalsh{lower=True}: input 0 (a) has type TensorType(float64, (2, 3)): expected a "
            "square matrix");
  EXPECT_EQ(solve_continuous_lyapunov(a, tensor(DType::kFloat64, {1, 4})).status().message(),
            "SolveContinuousLyapunov: input 1 (B) has type TensorType(float64, (1, 4)): expected "
            "a square matrix");
  EXPECT_EQ(solve_discrete_lyapunov(a, b, "schur").status().message(),
            "solve_discrete_lyapunov: Parameter \"method\" must be one of \"direct\" or "
            "\"bilinear\", found schur");
  auto r = RunGraph({a, b}, {eigvalsh(a, b)}, {Spd(2), Mat({2, 2}, {1, 2, 2, 1})});
  EXPECT_EQ(r.status().message(),
            "Eigvalsh{lower=True}: input 1 (b) is not positive definite: the leading minor of "
            "order 2 of 'b' is not positive definite. The factorization of 'b' could not be "
            "completed and no eigenvalues or eigenvectors were computed.");
  r = RunGraph({a, b}, {eigvalsh(a, b)}, {Spd(2), Spd(3)});
  EXPECT_EQ(r.status().message(),
            "Eigvalsh{lower=True}: input 1 (b) has shape (3, 3) but input 0 (a) has shape "
            "(2, 2): the shapes must be equal");
  r = RunGraph({a}, {expm(a)}, {Mat({1, 2}, {1, 2})});
  EXPECT_EQ(r.status().message(), "Expm: input 0 (A) has shape (1, 2): expected a square matrix");
  r = RunGraph({a, b}, {solve_continuous_lyapunov(a, b)}, {Spd(2), Mat({2, 2}, {1, NAN, 0, 1})});
  EXPECT_EQ(r.status().message(),
            "SolveContinuousLyapunov: input 1 (B) must not contain infs or NaNs "
            "(check_finite=True)");
  r = RunGraph({a, b}, {solve_discrete_lyapunov(a, b, "bilinear")},
               {Mat({2, 2}, {-1, 0, 0, 2}), Spd(2)});
  EXPECT_EQ(r.status().message(),
            "BilinearSolveDiscreteLyapunov: input 0 (A): A + I is singular: Matrix is singular.");
  // A non-finite matrix has a NaN exponential.
  r = RunGraph({a}, {expm(a)}, {Mat({1, 1}, {INFINITY})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(std::isnan(testing::Elements((*r)[0])[0]));
}

// The solutions satisfy their equations; the direct and bilinear discrete solvers agree.
TEST(SlinalgMatfunTest, LyapunovResidualsAndMethodsAgree) {
  const Var a = dmatrix("a"), q = dmatrix("q");
  const Tensor av = Filled({5, 5}, 0.3, 0.3), qv = Filled({5, 5}, 2.0);
  auto r = RunGraph({a, q},
                    {solve_continuous_lyapunov(a, q), solve_discrete_lyapunov(a, q, "direct"),
                     solve_discrete_lyapunov(a, q, "bilinear")},
                    {av, qv});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> A = testing::Elements(av), Q = testing::Elements(qv);
  const std::vector<double> X = testing::Elements((*r)[0]);
  const std::vector<double> D = testing::Elements((*r)[1]);
  const std::vector<double> B = testing::Elements((*r)[2]);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) {
      double cont = 0, disc = 0;
      for (int k = 0; k < 5; ++k) {
        cont += A[i * 5 + k] * X[k * 5 + j] + X[i * 5 + k] * A[j * 5 + k];
        for (int l = 0; l < 5; ++l) disc += A[i * 5 + k] * D[k * 5 + l] * A[j * 5 + l];
      }
      EXPECT_NEAR(cont, Q[i * 5 + j], 1e-12);
      EXPECT_NEAR(disc - D[i * 5 + j] + Q[i * 5 + j], 0.0, 1e-12);
      EXPECT_NEAR(D[i * 5 + j], B[i * 5 + j], 1e-12);
    }
  }
}

TEST(SlinalgMatfunTest, GradientsMatchFiniteDifferences) {
  for (bool lower : {true, false}) {
    absl::Status s = verify_grad(
        [&](const std::vector<Var>& in) {
          return eigvalsh((in[0] + transpose(in[0])) / 2.0, Var(), lower);
        },
        {Filled({4, 4}, 0.1)});
    EXPECT_TRUE(s.ok()) << s;
    s = verify_grad(
        [&](const std::vector<Var>& in) {
          return eigvalsh((in[0] + transpose(in[0])) / 2.0, (in[1] + transpose(in[1])) / 2.0,
                          lower);
        },
        {Filled({3, 3}, 0.1), Spd(3)});
    EXPECT_TRUE(s.ok()) << s;
  }
  for (double scale : {0.01, 0.5, 3.0}) {
    const absl::Status s = verify_grad([](const std::vector<Var>& in) { return expm(in[0]); },
                                       {Filled({4, 4}, 0.7, scale)});
    EXPECT_TRUE(s.ok()) << scale << ": " << s;
  }
  // A stable a (eigenvalues about -2): a x + x a^T is far from singular.
  Tensor stable = Filled({3, 3}, 0.2, 0.5);
  for (int i = 0; i < 3; ++i) stable.data<double>()[i * 4] -= 2.0;
  absl::Status s = verify_grad(
      [](const std::vector<Var>& in) { return solve_continuous_lyapunov(in[0], in[1]); },
      {stable, Filled({3, 3}, 1.2)});
  EXPECT_TRUE(s.ok()) << s;
  s = verify_grad(
      [](const std::vector<Var>& in) { return solve_discrete_lyapunov(in[0], in[1], "bilinear"); },
      {Filled({3, 3}, 0.2, 0.4), Filled({3, 3}, 1.2)});
  EXPECT_TRUE(s.ok()) << s;
  s = verify_grad(
      [](const std::vector<Var>& in) { return solve_discrete_lyapunov(in[0], in[1], "direct"); },
      {Filled({3, 3}, 0.2, 0.4), Filled({3, 3}, 1.2)});
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace kiln
