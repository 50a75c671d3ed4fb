#include "core/ops/slinalg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "core/ops/slinalg_matfun.h"
#include "tests/testing/numpy_cases.h"
#include "tests/testing/op_cases.h"

namespace kiln {
namespace {

// Every op the golden file can name, built through the ops' attributes.
std::vector<OpPtr> Candidates() {
  std::vector<OpPtr> ops;
  for (bool lower : {true, false}) {
    for (const char* on_error : {"raise", "nan"}) {
      ops.push_back(
          std::make_shared<Cholesky>(CholeskyAttrs{.lower = lower, .on_error = on_error}));
    }
    ops.push_back(std::make_shared<CholeskySolve>(CholeskySolveAttrs{.lower = lower}));
    for (const char* assume : {"gen", "sym", "her", "pos"}) {
      ops.push_back(std::make_shared<Solve>(SolveAttrs{.assume_a = assume, .lower = lower}));
    }
    for (int trans : {0, 1, 2}) {
      for (bool unit : {false, true}) {
        ops.push_back(std::make_shared<SolveTriangular>(
            SolveTriangularAttrs{.lower = lower, .trans = trans, .unit_diagonal = unit}));
      }
    }
    ops.push_back(std::make_shared<Eigvalsh>(EigvalshAttrs{.lower = lower}));
    ops.push_back(std::make_shared<EigvalshGrad>(EigvalshAttrs{.lower = lower}));
  }
  ops.push_back(std::make_shared<Expm>());
  ops.push_back(std::make_shared<ExpmGrad>());
  ops.push_back(std::make_shared<SolveContinuousLyapunov>());
  ops.push_back(std::make_shared<BilinearSolveDiscreteLyapunov>());
  return ops;
}

// |got - want| within the dtype's tolerance, relative to the largest |want|.
void ExpectClose(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<double> g = testing::Elements(got), w = testing::Elements(want);
  const bool single = want.dtype() == DType::kFloat32 || want.dtype() == DType::kComplex64;
  double scale = 0;
  for (double v : w) scale = std::isfinite(v) ? std::max(scale, std::abs(v)) : scale;
  const double tol = (single ? 2e-5 : 1e-11) * std::max(1.0, scale);
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << "element " << i;
    } else {
      EXPECT_NEAR(g[i], w[i], tol) << "element " << i;
    }
  }
}

// Each line of tests/golden/aesara_slinalg.txt: the op named as Aesara prints it, its output
// types, its values (from contiguous and from strided inputs) and its inferred shapes.
TEST(SlinalgTest, MatchesAesaraAndScipy) {
  const int checked = testing::CheckOpCases(
      "tests/golden/aesara_slinalg.txt", Candidates(),
      [](const testing::OpCase& c, size_t i, const Tensor& got) { ExpectClose(got, c.want[i]); });
  EXPECT_GE(checked, 70);
}

TEST(SlinalgTest, NamesTypesAndWireAttributes) {
  const Var x = dmatrix("x"), b = dvector("b");
  const Var l = cholesky(x);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->owner()->op().Name(), "Cholesky{lower=True, destructive=False, on_error='raise'}");
  EXPECT_EQ(cholesky(x, false, "nan")->owner()->op().Name(),
            "Cholesky{lower=False, destructive=False, on_error='nan'}");
  EXPECT_EQ(solve(x, b)->owner()->op().Name(),
            "Solve{assume_a='gen', lower=False, check_finite=True}");
  EXPECT_EQ(solve_triangular(x, b, 1, true)->owner()->op().Name(),
            "SolveTriangular{lower=True, trans=1, unit_diagonal=False, check_finite=True}");
  EXPECT_EQ(cho_solve(x, true, b)->owner()->op().Name(),
            "CholeskySolve{lower=True, check_finite=True}");
  // Types: Cholesky keeps x's (static dims too); the solves take b's shape and scipy's dtype.
  EXPECT_EQ(cholesky(tensor(DType::kFloat32, {3, 3}))->type()->ToString(),
            "TensorType(float32, (3, 3))");
  EXPECT_EQ(solve(x, b)->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(solve(fmatrix(), tensor(DType::kFloat32, {3, 2}))->type()->ToString(),
            "TensorType(float32, (3, 2))");
  EXPECT_EQ(solve(fmatrix(), dmatrix())->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(solve(lmatrix(), ivector())->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(solve(bmatrix(), bvector())->type()->ToString(), "TensorType(float32, (?,))");
  EXPECT_EQ(solve(cmatrix(), dvector())->type()->ToString(), "TensorType(complex128, (?,))");
  EXPECT_EQ(solve(cmatrix(), fvector())->type()->ToString(), "TensorType(complex64, (?,))");
  // One identity per op: made again from its wire attributes, it is equal.
  for (const Var& v : {l, cholesky(x, false, "nan"), solve(x, b, "pos", true),
                       solve_triangular(x, b, 2, true, true, false), cho_solve(x, false, b)}) {
    const Op& op = v->owner()->op();
    absl::StatusOr<OpPtr> again = MakeOp(op.type_name(), op.Attrs());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(**again == op);
    EXPECT_EQ((*again)->Name(), op.Name());
  }
}

TEST(SlinalgTest, TypeErrors) {
  const Var x = dmatrix("x"), b = dvector("b");
  EXPECT_EQ(cholesky(dvector("v")).status().message(),
            "Cholesky{lower=True, destructive=False, on_error='raise'}: input 0 (x) has type "
            "TensorType(float64, (?,)): `x` must be a matrix");
  EXPECT_EQ(cholesky(x, true, "ignore").status().message(),
            "Cholesky: attribute 'on_error' must be 'raise' or 'nan', not 'ignore'");
  EXPECT_EQ(solve(dtensor3("t"), b).status().message(),
            "Solve{assume_a='gen', lower=False, check_finite=True}: input 0 (a) has type "
            "TensorType(float64, (?, ?, ?)): `a` must be a matrix");
  EXPECT_EQ(solve(x, dtensor3("t")).status().message(),
            "Solve{assume_a='gen', lower=False, check_finite=True}: input 1 (b) has type "
            "TensorType(float64, (?, ?, ?)): `b` must be a matrix or a vector");
  EXPECT_EQ(solve(tensor(DType::kFloat64, {2, 3}), b).status().message(),
            "Solve{assume_a='gen', lower=False, check_finite=True}: input 0 (a) has type "
            "TensorType(float64, (2, 3)): expected a square matrix");
  EXPECT_EQ(
      solve_triangular(tensor(DType::kFloat64, {std::nullopt, 3}), tensor(DType::kFloat64, {4, 2}))
          .status()
          .message(),
      "SolveTriangular{lower=False, trans=0, unit_diagonal=False, check_finite=True}: "
      "input 1 (b) has type TensorType(float64, (4, 2)) but input 0 (a) has "
      "TensorType(float64, (?, 3)): b must have as many rows as a");
  EXPECT_EQ(solve(x, b, "tri").status().message(),
            "Solve: tri is not a recognized matrix structure (attribute 'assume_a' must be "
            "'gen', 'sym', 'her' or 'pos')");
  EXPECT_EQ(solve_triangular(x, b, 3).status().message(),
            "SolveTriangular: attribute 'trans' must be 0, 1 or 2 ('N', 'T' or 'C'), not 3");
  EXPECT_EQ(MakeOp("Cholesky", {{"destructive", true}}).status().message(),
            "Cholesky: attribute 'destructive' must be False (as in Aesara)");
  EXPECT_EQ(MakeOp("Solve", {{"assume_a", std::string("banded")}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ApplyOp(MakeOp("Solve", {}), {x}).status().message(),
            "Solve{assume_a='gen', lower=False, check_finite=True}: expects 2 inputs (a, b)");
}

// Runs f on the inputs and returns its first output or its error.
absl::StatusOr<Tensor> RunGraph(const std::vector<Var>& in, const Var& out,
                                const std::vector<Tensor>& values) {
  auto f = function(in, {out});
  if (!f.ok()) return f.status();
  auto r = (*f)(values);
  if (!r.ok()) return r.status();
  return (*r)[0];
}

Tensor Mat(Shape shape, std::vector<double> v) {
  return *Tensor::FromValues<double>(DType::kFloat64, std::move(shape), v);
}

TEST(SlinalgTest, ValueErrorsAndOnError) {
  const Var x = dmatrix("x"), b = dvector("b");
  const Tensor indefinite = Mat({2, 2}, {1, 2, 2, 1});
  auto r = RunGraph({x}, cholesky(x), {indefinite});
  EXPECT_EQ(r.status().message(),
            "Cholesky{lower=True, destructive=False, on_error='raise'}: input 0 (x) is not "
            "positive definite: its leading minor of order 2 is not positive definite");
  r = RunGraph({x}, cholesky(x, true, "nan"), {indefinite});
  ASSERT_TRUE(r.ok()) << r.status();
  for (double v : testing::Elements(*r)) EXPECT_TRUE(std::isnan(v));
  r = RunGraph({x}, cholesky(x), {Mat({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(r.status().message(),
            "Cholesky{lower=True, destructive=False, on_error='raise'}: input 0 (x) has shape "
            "(2, 3): expected a square matrix");
  r = RunGraph({x}, cholesky(x, true, "nan"), {Mat({1, 1}, {NAN})});
  EXPECT_EQ(r.status().message(),
            "Cholesky{lower=True, destructive=False, on_error='nan'}: input 0 (x) must not "
            "contain infs or NaNs (check_finite=True)");
  // Solves: singular, not positive definite, mismatched rows, non-finite.
  r = RunGraph({x, b}, solve(x, b), {Mat({2, 2}, {1, 2, 2, 4}), Mat({2}, {1, 1})});
  EXPECT_EQ(r.status().message(),
            "Solve{assume_a='gen', lower=False, check_finite=True}: input 0 (a) is singular (its "
            "factor's diagonal entry 1 is zero): Matrix is singular.");
  r = RunGraph({x, b}, solve(x, b, "pos"), {indefinite, Mat({2}, {1, 1})});
  EXPECT_EQ(r.status().message(),
            "Solve{assume_a='pos', lower=False, check_finite=True}: input 0 (a) is not positive "
            "definite (its leading minor of order 2 is not): Matrix is singular.");
  r = RunGraph({x, b}, solve(x, b), {indefinite, Mat({3}, {1, 1, 1})});
  EXPECT_EQ(r.status().message(),
            "Solve{assume_a='gen', lower=False, check_finite=True}: input 1 (b) has shape (3,) "
            "but input 0 (a) has shape (2, 2): b must have as many rows as a");
  r = RunGraph({x, b}, solve(x, b), {indefinite, Mat({2}, {1, INFINITY})});
  EXPECT_EQ(r.status().message(),
            "Solve{assume_a='gen', lower=False, check_finite=True}: input 1 (b) must not contain "
            "infs or NaNs (check_finite=True)");
  // check_finite=False lets them through (LAPACK propagates them).
  r = RunGraph({x, b}, solve(x, b, "gen", false, false),
               {Mat({2, 2}, {2, 0, 0, 2}), Mat({2}, {1, INFINITY})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(std::isinf(testing::Elements(*r)[1]));
  r = RunGraph({x, b}, solve_triangular(x, b, 0, true),
               {Mat({2, 2}, {1, 0, 2, 0}), Mat({2}, {1, 1})});
  EXPECT_EQ(r.status().message(),
            "SolveTriangular{lower=True, trans=0, unit_diagonal=False, check_finite=True}: input "
            "0 (a) is singular: singular matrix: resolution failed at diagonal 1");
  // Empty systems give empty answers.
  r = RunGraph({x, b}, solve(x, b),
               {Tensor::Zeros(DType::kFloat64, {0, 0}), Tensor::Zeros(DType::kFloat64, {0})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape(), Shape{0});
  // A right-hand side with more columns than LAPACK counts is refused (it has no elements).
  const Var bm = dmatrix("bm");
  r = RunGraph({x, bm}, solve(x, bm),
               {Tensor::Zeros(DType::kFloat64, {0, 0}),
                Tensor::Zeros(DType::kFloat64, {0, int64_t{1} << 40})});
  EXPECT_EQ(r.status().message(),
            "Solve{assume_a='gen', lower=False, check_finite=True}: input 1 (b) has shape "
            "(0, 1099511627776): LAPACK takes dims up to 2147483647");
}

// A symmetric positive definite n x n matrix (a fixed well-conditioned one).
Tensor Spd(int64_t n) {
  std::vector<double> v(n * n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      v[i * n + j] = 1.0 / (1.0 + std::abs(i - j)) + (i == j ? n : 0) + 0.1 * (i + j);
    }
  }
  return Mat({n, n}, v);
}

Tensor Filled(Shape shape, double start) {
  return testing::Filled(DType::kFloat64, std::move(shape),
                         [&](int64_t i) { return std::sin(start + 1.7 * i); });
}

TEST(SlinalgTest, GradientsMatchFiniteDifferences) {
  for (bool lower : {true, false}) {
    SCOPED_TRACE(lower);
    // Cholesky of the symmetrized input (the op reads one triangle).
    EXPECT_TRUE(verify_grad(
                    [&](const std::vector<Var>& in) {
                      return cholesky((in[0] + transpose(in[0])) / 2.0, lower);
                    },
                    {Spd(4)})
                    .ok());
    const absl::Status chol_nan = verify_grad(
        [&](const std::vector<Var>& in) {
          return cholesky((in[0] + transpose(in[0])) / 2.0, lower, "nan");
        },
        {Spd(3)});
    EXPECT_TRUE(chol_nan.ok()) << chol_nan;
    for (const char* assume : {"gen", "sym", "pos"}) {
      SCOPED_TRACE(assume);
      for (const Tensor& b : {Filled({4}, 0.5), Filled({4, 2}, 1.5)}) {
        const absl::Status s = verify_grad(
            [&](const std::vector<Var>& in) {
              const Var a = std::string(assume) == "gen" ? in[0] : (in[0] + transpose(in[0])) / 2.0;
              return solve(a, in[1], assume, lower);
            },
            {Spd(4), b});
        EXPECT_TRUE(s.ok()) << s;
      }
    }
    for (int trans : {0, 1, 2}) {
      for (bool unit : {false, true}) {
        SCOPED_TRACE(absl::StrCat("trans=", trans, " unit_diagonal=", unit));
        for (const Tensor& b : {Filled({3}, 0.5), Filled({3, 2}, 1.5)}) {
          const absl::Status s = verify_grad(
              [&](const std::vector<Var>& in) {
                return solve_triangular(in[0], in[1], trans, lower, unit);
              },
              {Spd(3), b});
          EXPECT_TRUE(s.ok()) << s;
        }
      }
    }
  }
  // cho_solve has no gradient, as in Aesara.
  const Var c = dmatrix("c"), b = dvector("b");
  const Var g = grad(sum(cho_solve(c, true, b)), c);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("Aesara's CholeskySolve defines no gradient."),
            std::string::npos)
      << g.status();
}

}  // namespace
}  // namespace kiln
