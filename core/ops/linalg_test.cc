#include "core/ops/linalg.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_join.h"
#include "core/kiln.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

Var Build(const std::string& fn, const Var& a, const Var& b) {
  if (fn == "dot") return dot(a, b);
  if (fn == "matmul") return matmul(a, b);
  if (fn == "outer") return outer(a, b);
  return tensordot(a, b, fn == "tensordot2" ? 2 : 1);
}

// Every case of tests/golden/numpy_linalg.txt against NumPy.
TEST(LinalgTest, MatchesNumPy) {
  for (const auto& c : testing::ReadCases("tests/golden/numpy_linalg.txt")) {
    ASSERT_EQ(c.size(), 12u);
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    std::vector<Var> inputs;
    std::vector<Tensor> args;
    for (int k = 0; k < 2; ++k) {
      Tensor t = testing::MakeTensor(c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]);
      args.push_back(c[4 * k + 4] == "T" ? testing::NonContiguous(t) : t);
      inputs.push_back(tensor(t.dtype(), StaticShape(t.ndim())));
    }
    Var out = Build(c[0], inputs[0], inputs[1]);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(DTypeName(out.dtype()), c[9]);
    auto f = function(inputs, {out});
    ASSERT_TRUE(f.ok()) << f.status();
    auto result = (*f)(args);
    ASSERT_TRUE(result.ok()) << result.status();
    const Tensor& r = (*result)[0];
    EXPECT_EQ(DTypeName(r.dtype()), c[9]);
    EXPECT_EQ(r.shape(), testing::ParseShape(c[10]));
    const std::vector<double> got = testing::Elements(r);
    const std::vector<double> expected = testing::Elements(testing::MakeTensor(c[9], c[10], c[11]));
    ASSERT_EQ(got.size(), expected.size());
    const double rtol = r.dtype() == DType::kFloat32 ? 1e-5 : 1e-13;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(got[i], expected[i], rtol * std::fabs(expected[i]) + 1e-12) << "element " << i;
    }
  }
}

// As the library loads, Kiln tells OpenBLAS's idle workers to sleep after 2^18 cycles rather
// than 2^28 (blas_threads.cc); the products above ran with the workers restarted.
TEST(LinalgTest, OpenBlasWorkersSleepSoon) {
  if (dlsym(RTLD_DEFAULT, "openblas_read_env") == nullptr) GTEST_SKIP() << "BLAS is not OpenBLAS";
  const char* timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  ASSERT_NE(timeout, nullptr);
  EXPECT_STREQ(timeout, "18");
}

TEST(LinalgTest, NamesAndTypes) {
  Var m = dmatrix("m"), v = dvector("v");
  EXPECT_EQ(dot(m, v)->owner()->op().Name(), "dot");
  EXPECT_EQ(dot(m, v)->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(dot(v, v)->type()->ToString(), "TensorType(float64, ())");
  EXPECT_EQ(dot(tensor(DType::kFloat32, {2, 3}), tensor(DType::kInt16, {3, 5}))->type()->ToString(),
            "TensorType(float32, (2, 5))");
  EXPECT_EQ(matmul(tensor(DType::kFloat64, {4, 1, 2, 3}), tensor(DType::kFloat64, {5, 3, 7}))
                ->type()
                ->ToString(),
            "TensorType(float64, (4, 5, 2, 7))");
  EXPECT_EQ(dot22(m, m)->owner()->op().Name(), "Dot22");
  Var s = dscalar("s");
  EXPECT_EQ(gemm(m, s, m, m, s)->owner()->op().Name(), "Gemm{no_inplace}");
  EXPECT_EQ(gemv(v, s, m, v, s)->owner()->op().Name(), "Gemv{no_inplace}");
  EXPECT_EQ(outer(v, v)->type()->ToString(), "TensorType(float64, (?, ?))");
}

TEST(LinalgTest, ShapeErrors) {
  EXPECT_EQ(
      dot(tensor(DType::kFloat64, {2, 3}), tensor(DType::kFloat64, {4, 5})).status().message(),
      "dot: input 1 has type TensorType(float64, (4, 5)) but input 0 has "
      "TensorType(float64, (2, 3)): inner dims 3 and 4 differ");
  EXPECT_EQ(dot22(dvector(), dmatrix()).status().message(),
            "Dot22: input 0 has type TensorType(float64, (?,)) but a matrix is needed");
  EXPECT_EQ(gemm(dmatrix(), fscalar(), dmatrix(), dmatrix(), dscalar()).status().message(),
            "Gemm{no_inplace}: input 1 has type TensorType(float32, ()) but every input must have "
            "input 0's dtype, one of float32, float64, complex64, complex128");
  Var a = dmatrix("a"), b = dmatrix("b");
  auto f = function({a, b}, {dot(a, b)}, {.mode = OptimizerMode::kNone});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)({Tensor::Zeros(DType::kFloat64, {2, 3}), Tensor::Zeros(DType::kFloat64, {4, 5})})
                .status()
                .message(),
            "dot: shapes (2, 3) and (4, 5) not aligned: 3 (dim 1) != 4 (dim 0)");
}

TEST(LinalgTest, GemmAndGemv) {
  Var z = dmatrix("z"), x = dmatrix("x"), y = dmatrix("y"), a = dscalar("a"), b = dscalar("b");
  Var v = dvector("v"), w = dvector("w");
  auto f = function({z, a, x, y, b, v, w}, {gemm(z, a, x, y, b), gemv(v, a, x, w, b)});
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({*Tensor::Of<double>(DType::kFloat64, {2, 2}, {1, 1, 1, 1}),
                   *Tensor::Of<double>(DType::kFloat64, {}, {2}),
                   *Tensor::Of<double>(DType::kFloat64, {2, 3}, {1, 2, 3, 4, 5, 6}),
                   *Tensor::Of<double>(DType::kFloat64, {3, 2}, {1, 0, 0, 1, 1, 1}),
                   *Tensor::Of<double>(DType::kFloat64, {}, {10}),
                   *Tensor::Of<double>(DType::kFloat64, {2}, {1, -1}),
                   *Tensor::Of<double>(DType::kFloat64, {3}, {1, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  // 10 * 1 + 2 * [[4, 5], [10, 11]]; 10 * [1, -1] + 2 * [6, 15]
  EXPECT_EQ((*out)[0].ToString(), "[[18. 20.]\n [30. 32.]]");
  EXPECT_EQ((*out)[1].ToString(), "[22. 20.]");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A stack of matrices times one matrix is one GEMM of all their rows when the stack's rows
// step evenly (contiguous, or every other row); otherwise one GEMM per matrix. Both against a
// plain loop.
TEST(LinalgTest, StacksTimesAMatrixFoldOrNot) {
  const Tensor base = [] {
    Tensor t = Tensor::Empty(DType::kFloat64, {2, 4, 4});
    for (int64_t i = 0; i < t.size(); ++i) t.data<double>()[i] = std::sin(0.3 * i);
    return t;
  }();
  Tensor w = Tensor::Empty(DType::kFloat64, {4, 5});
  for (int64_t i = 0; i < w.size(); ++i) w.data<double>()[i] = std::cos(0.7 * i);
  const Var a = dtensor3(), b = dmatrix();
  absl::StatusOr<Function> f = function({a, b}, {matmul(a, b)});
  ASSERT_TRUE(f.ok()) << f.status();
  const std::vector<Tensor> stacks = {
      base,                                      // contiguous: folds
      base.View({2, 2, 4}, {16, 8, 1}),          // every other row: folds, row stride 8
      base.View({4, 2, 4}, {4, 16, 1}),          // the leading pair transposed: does not fold
  };
  for (const Tensor& x : stacks) {
    absl::StatusOr<std::vector<Tensor>> out = (*f)({x, w});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor c = x.Contiguous();
    const int64_t batches = x.shape()[0], m = x.shape()[1];
    ASSERT_EQ((*out)[0].shape(), (Shape{batches, m, 5}));
    for (int64_t s = 0; s < batches; ++s) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < 5; ++j) {
          double want = 0;
          for (int64_t k = 0; k < 4; ++k) {
            want += c.data<double>()[(s * m + i) * 4 + k] * w.data<double>()[k * 5 + j];
          }
          EXPECT_NEAR((*out)[0].data<double>()[(s * m + i) * 5 + j], want, 1e-12);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln
