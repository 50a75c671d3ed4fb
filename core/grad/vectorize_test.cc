// Batched graphs and the Jacobians and Hessians built on them: for vectors whose length is known
// only at run time, against central finite differences, one compiled function for two lengths.
#include "core/grad/vectorize.h"

#include <cmath>
#include <functional>

#include "core/kiln.h"
#include "gtest/gtest.h"
#include "tests/testing/eval.h"

namespace kiln {
namespace {

Tensor Values(Shape shape, double phase) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(1.3 * i + phase) + 0.1 * i;
  return *Tensor::FromValues<double>(DType::kFloat64, std::move(shape), v);
}

// An expression y(x, W) of a run-time-length vector x and an n x n matrix W.
struct Case {
  const char* name;
  std::function<Var(const Var& x, const Var& W)> y;
};

std::vector<Case> Cases() {
  return {
      {"tanh(W x)", [](const Var& x, const Var& W) { return tanh(dot(W, x)); }},
      {"x W", [](const Var& x, const Var& W) { return dot(x, W) * x; }},
      {"matmul", [](const Var& x, const Var& W) { return matmul(W, exp(x)); }},
      {"softmax", [](const Var& x, const Var&) { return softmax(x * 2.0); }},
      {"log_softmax", [](const Var& x, const Var&) { return log_softmax(x); }},
      {"cumsum", [](const Var& x, const Var&) { return cumsum(x * x); }},
      {"cumprod", [](const Var& x, const Var&) { return cumprod(x); }},
      {"slices",
       [](const Var& x, const Var&) {
         return subtensor(x, {Slice{1, std::nullopt}}) * subtensor(x, {Slice{std::nullopt, -1}});
       }},
      {"set_subtensor",
       [](const Var& x, const Var&) {
         return set_subtensor(subtensor(x, {Index(0)}), constant(5.0)) * x;
       }},
      {"join", [](const Var& x, const Var&) { return concatenate({x, exp(x), x * x}); }},
      {"sort", [](const Var& x, const Var&) { return sort(x * x); }},
      {"take",
       [](const Var& x, const Var&) {
         return take(x, constant(*Tensor::Of<int64_t>(DType::kInt64, {4}, {0, 2, 0, 1}))) * subtensor(x, {Index(0)});
       }},
      {"outer rows", [](const Var& x, const Var&) { return sum(outer(x, sin(x)), {0}); }},
      {"reshape", [](const Var& x, const Var&) { return flatten(outer(x, x)); }},
      {"normalize", [](const Var& x, const Var&) { return x / sqrt(sum(x * x)); }},
      {"max", [](const Var& x, const Var& W) { return max(W * x, {1}); }},
      {"mean and prod",
       [](const Var& x, const Var& W) { return mean(W * x, {0}) + prod(W + x, {1}); }},
      {"repeat", [](const Var& x, const Var&) { return repeat(x * x, constant(int64_t{2})); }},
      {"stack of reductions",
       [](const Var& x, const Var&) { return stack({sum(x), prod(x), max(x)}); }},
      {"transpose product",
       [](const Var& x, const Var& W) { return sum(dot(transpose(W), outer(x, x)), {1}); }},
  };
}

// The Jacobian of y at (x, W) by central differences, row-major (len(y), len(x)).
std::vector<double> FiniteJacobian(const Function& f, const Tensor& x, const Tensor& W) {
  const double eps = 1e-6;
  const int64_t n = x.size();
  std::vector<std::vector<double>> cols;
  int64_t m = 0;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<double> up(n), down(n);
    for (int64_t i = 0; i < n; ++i) up[i] = down[i] = x.ElementAsDouble(i);
    up[j] += eps;
    down[j] -= eps;
    auto yu = f({*Tensor::FromValues<double>(DType::kFloat64, {n}, up), W});
    auto yd = f({*Tensor::FromValues<double>(DType::kFloat64, {n}, down), W});
    EXPECT_TRUE(yu.ok() && yd.ok());
    m = (*yu)[0].size();
    std::vector<double> col(m);
    for (int64_t i = 0; i < m; ++i) {
      col[i] = ((*yu)[0].ElementAsDouble(i) - (*yd)[0].ElementAsDouble(i)) / (2 * eps);
    }
    cols.push_back(col);
  }
  std::vector<double> j(m * n);
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t r = 0; r < m; ++r) j[r * n + c] = cols[c][r];
  }
  return j;
}

TEST(JacobianTest, AnyLengthMatchesFiniteDifferences) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const Var x = dvector("x"), W = dmatrix("W");
    const Var y = c.y(x, W);
    ASSERT_TRUE(y.ok()) << y.status();
    absl::StatusOr<std::vector<Var>> j =
        jacobian(y, {x}, {.disconnected_inputs = DisconnectedInputs::kIgnore});
    ASSERT_TRUE(j.ok()) << j.status();
    auto fy = function({x, W}, {y}, {.on_unused_input = OnUnusedInput::kIgnore});
    auto fj = function({x, W}, {(*j)[0]}, {.on_unused_input = OnUnusedInput::kIgnore});
    ASSERT_TRUE(fy.ok() && fj.ok()) << fy.status() << fj.status();
    for (int64_t n : {3, 5}) {
      const Tensor xv = Values({n}, 0.5), wv = Values({n, n}, 1.0);
      auto got = (*fj)({xv, wv});
      ASSERT_TRUE(got.ok()) << got.status();
      const std::vector<double> want = FiniteJacobian(*fy, xv, wv);
      const Tensor& jv = (*got)[0];
      ASSERT_EQ(jv.ndim(), 2);
      ASSERT_EQ(jv.shape()[1], n);
      ASSERT_EQ(jv.size(), static_cast<int64_t>(want.size()));
      for (size_t k = 0; k < want.size(); ++k) {
        EXPECT_NEAR(jv.ElementAsDouble(k), want[k], 1e-5 * (1 + std::abs(want[k])))
            << "n=" << n << " element " << k;
      }
    }
  }
}

TEST(JacobianTest, HessianOfAnyLength) {
  const Var x = dvector("x"), W = dmatrix("W");
  const Var cost = sum(x * x * x) + dot(x, dot(W, x)) + logsumexp(x);
  absl::StatusOr<std::vector<Var>> h = hessian(cost, {x});
  ASSERT_TRUE(h.ok()) << h.status();
  const Var g = grad(cost, x);
  auto fg = function({x, W}, {g});
  ASSERT_TRUE(fg.ok()) << fg.status();
  for (int64_t n : {2, 4}) {
    const Tensor xv = Values({n}, 0.2), wv = Values({n, n}, 2.0);
    std::vector<Tensor> got = testing::Eval({x, W}, {(*h)[0]}, {xv, wv});
    ASSERT_EQ(got.size(), 1u);
    const std::vector<double> want = FiniteJacobian(*fg, xv, wv);
    ASSERT_EQ(got[0].size(), n * n);
    for (int64_t k = 0; k < n * n; ++k) {
      EXPECT_NEAR(got[0].ElementAsDouble(k), want[k], 1e-5 * (1 + std::abs(want[k])));
    }
  }
}

TEST(JacobianTest, DisconnectedAndEmpty) {
  const Var x = dvector("x"), w = dmatrix("w");
  absl::StatusOr<std::vector<Var>> j =
      jacobian(x * 2.0, {x, w}, {.disconnected_inputs = DisconnectedInputs::kIgnore});
  ASSERT_TRUE(j.ok()) << j.status();
  std::vector<Tensor> got = testing::Eval({x, w}, *j, {Values({3}, 0), Values({2, 4}, 0)});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].ToString(), "[[2. 0. 0.]\n [0. 2. 0.]\n [0. 0. 2.]]");
  EXPECT_EQ(got[1].shape(), (Shape{3, 2, 4}));
  got = testing::Eval({x, w}, *j, {Values({0}, 0), Values({2, 4}, 0)});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].shape(), (Shape{0, 0}));
  EXPECT_EQ(got[1].shape(), (Shape{0, 2, 4}));
  EXPECT_EQ(jacobian(x * 2.0, {w}).status().message(),
            "DisconnectedInputError: grad method was asked to compute the gradient with respect to a variable that is not "
            "part of the computational graph of the cost, or is used only by a non-differentiable "
            "operator: w");
}

TEST(VectorizeTest, BatchesRowsAndRefusesWhatCannotBe) {
  const Var v = dvector("v"), V = dmatrix("V"), s = lscalar("s");
  // Each row of V through the same graph; the unbatched output is repeated.
  absl::StatusOr<std::vector<Var>> out = vectorize({exp(v) * sum(v), s * 1.0}, {{v, V}});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<Tensor> got = testing::Eval(
      {V, s}, *out,
      {*Tensor::Of<double>(DType::kFloat64, {2, 2}, {0, 0, 1, 0}),
       *Tensor::Of<int64_t>(DType::kInt64, {}, {7})});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].ToString(), Tensor::Of<double>(DType::kFloat64, {2, 2},
                                                  {0, 0, std::exp(1.0), 1})->ToString());
  EXPECT_EQ(got[1].ToString(), "[7. 7.]");
  // A shape that would differ between rows.
  const Var n = lvector("n"), N = lmatrix("N");
  EXPECT_EQ(vectorize({zeros({subtensor(n, {Index(0)})})}, {{n, N}}).status().message(),
            "vectorize: Alloc has no batched form for input 1 (the shape would differ between "
            "rows)");
  EXPECT_EQ(vectorize({v}, {{v, subtensor(V, {Index(0)})}}).status().message(),
            "vectorize: TensorType(float64, (?,)) is not a batch of TensorType(float64, (?,)) "
            "(one more leading dim)");
}

}  // namespace
}  // namespace kiln
