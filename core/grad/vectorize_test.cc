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
      // Broadcastable dims the backward pass relies on: batched values must keep them.
      {"broadcastable row",
       [](const Var& x, const Var&) {
         return subtensor(subtensor(dimshuffle(exp(x), {kX, 0}), {Slice{}, Slice{1, std::nullopt}}),
                          {Index(0)});
       }},
      {"reshape to a column",
       [](const Var& x, const Var&) { return dimshuffle(reshape(x * x, {-1, 1}), {0}); }},
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
    if (!yu.ok() || !yd.ok()) {
      ADD_FAILURE() << yu.status() << yd.status();
      return {};
    }
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

// An op without a batching rule (a test op: 2x, whose gradient is itself).
class Twice final : public DeclaredOp<Twice, NoAttrs> {
 public:
  static constexpr absl::string_view kTypeName = "VectorizeTestTwice";
  using DeclaredOp::DeclaredOp;
  KILN_OP_METHODS
};
absl::StatusOr<ApplyPtr> Twice::MakeNode(std::vector<VariablePtr> inputs) const {
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}
absl::StatusOr<std::vector<ShapeVars>> Twice::InferShape(const Apply&,
                                                         const std::vector<ShapeVars>& in) const {
  return std::vector<ShapeVars>{in[0]};
}
absl::Status Twice::Perform(const Apply&, std::span<const Tensor> inputs,
                            std::vector<Tensor>& outputs) const {
  Tensor out = Tensor::Empty(DType::kFloat64, inputs[0].shape());
  for (int64_t i = 0; i < out.size(); ++i) out.data<double>()[i] = 2 * inputs[0].ElementAsDouble(i);
  outputs[0] = std::move(out);
  return absl::OkStatus();
}
std::vector<Var> Twice::LOp(const Apply&, const std::vector<Var>& g) const {
  return {ApplyOp(self(), {g[0]})};
}

// A static length falls back to one gradient per element; a run-time length names the op.
TEST(JacobianTest, AnOpWithoutABatchingRule) {
  const Var x = tensor(DType::kFloat64, {3}, "x");
  absl::StatusOr<std::vector<Var>> j = jacobian(ApplyOp(std::make_shared<Twice>(), {x * x}), {x});
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(testing::Eval({x}, *j, {Values({3}, 0)})[0].ToString(),
            testing::Eval({x}, {jacobian(x * x * 2.0, {x})->at(0)}, {Values({3}, 0)})[0]
                .ToString());
  const Var v = dvector("v");
  EXPECT_EQ(jacobian(ApplyOp(std::make_shared<Twice>(), {v * v}), {v}).status().message(),
            "vectorize: VectorizeTestTwice has no batched form for input 0 (no rule for this op)");
}

// The options grad takes: results that are not tensors stay as grad returns them.
TEST(JacobianTest, GradOptions) {
  const Var x = dvector("x"), w = dvector("w");
  GradOptions none;
  none.disconnected_inputs = DisconnectedInputs::kIgnore;
  none.return_disconnected = ReturnDisconnected::kNone;
  absl::StatusOr<std::vector<Var>> j = jacobian(x * 2.0, {x, w}, none);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_TRUE((*j)[0].ok());
  EXPECT_FALSE((*j)[1].ok());  // None for the disconnected w
  GradOptions known;
  known.known_grads = {{x, w}};
  EXPECT_EQ(jacobian(x * 2.0, {x}, known).status().message(),
            "jacobian: known_grads cannot be given (the cotangents are the identity's rows)");
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

// A deep chain is batched without recursion: 20,000 nodes, each row of the Jacobian 10,001 e_i.
TEST(JacobianTest, DeepChain) {
  const Var x = dvector("x");
  Var y = x;
  for (int i = 0; i < 10000; ++i) y = y + x * 1.0;
  absl::StatusOr<std::vector<Var>> j = jacobian(y, {x});
  ASSERT_TRUE(j.ok()) << j.status();
  std::vector<Tensor> got = testing::Eval({x}, *j, {Values({2}, 0)});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].ToString(), "[[10001.     0.]\n [    0. 10001.]]");
}

// Row b of vectorize(out, {{v, V}}) is out computed from V[b]: one expression per rule that the
// Jacobians above do not reach.
TEST(VectorizeTest, EachRowIsTheOutputOfThatRow) {
  const Var v = dvector("v"), V = dmatrix("V");
  const Var idx = constant(*Tensor::Of<int64_t>(DType::kInt64, {2}, {2, 0}));
  const std::vector<std::pair<const char*, Var>> cases = {
      {"split", split(v * 2.0, {1, 2})[1]},
      {"make_vector", make_vector({subtensor(v, {Index(0)}), subtensor(v, {Index(2)}) * 2.0},
                                  DType::kFloat64)},
      {"specify_shape", specify_shape(v + 1.0, {3})},
      {"grad_clip", grad_clip(v, -1.0, 1.0) * v},
      {"inc into batched", inc_subtensor(take(v, idx), constant(10.0))},
      {"argmax", argmax(outer(v, v), {1})},
      {"argsort", argsort(v * v)},
      {"shape", cast(shape(outer(v, v)), DType::kFloat64) + subtensor(v, {Slice{0, 2}})},
  };
  const std::vector<std::vector<double>> rows = {{0.5, -2, 1}, {3, 0.25, -1}};
  const Tensor batch = *Tensor::Of<double>(DType::kFloat64, {2, 3}, {0.5, -2, 1, 3, 0.25, -1});
  for (const auto& [name, out] : cases) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(out.ok()) << out.status();
    absl::StatusOr<std::vector<Var>> batched = vectorize({out}, {{v, V}});
    ASSERT_TRUE(batched.ok()) << batched.status();
    for (int64_t b = 0; b < 2; ++b) {
      std::vector<Tensor> got =
          testing::Eval({V}, {subtensor((*batched)[0], {Index(b)})}, {batch});
      std::vector<Tensor> want = testing::Eval(
          {v}, {out}, {*Tensor::FromValues<double>(DType::kFloat64, {3}, rows[b])});
      ASSERT_EQ(got.size(), 1u);
      ASSERT_EQ(want.size(), 1u);
      EXPECT_EQ(got[0].ToString(), want[0].ToString()) << "row " << b;
    }
  }
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
  // Two batches must have one length.
  const Var w = dvector("w"), W = dmatrix("W");
  absl::StatusOr<std::vector<Var>> two = vectorize({v + w}, {{v, V}, {w, W}});
  ASSERT_TRUE(two.ok()) << two.status();
  auto f = function({V, W}, *two);
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor two_rows = *Tensor::Of<double>(DType::kFloat64, {2, 1}, {1, 2});
  const Tensor three_rows = *Tensor::Of<double>(DType::kFloat64, {3, 1}, {1, 2, 3});
  EXPECT_TRUE((*f)({two_rows, two_rows}).ok());
  EXPECT_NE((*f)({two_rows, three_rows}).status().message().find("SpecifyShape"),
            std::string::npos);
  // A shape that would differ between rows.
  const Var n = lvector("n"), N = lmatrix("N");
  EXPECT_EQ(vectorize({zeros({subtensor(n, {Index(0)})})}, {{n, N}}).status().message(),
            "vectorize: Alloc has no batched form for input 1 (the shape would differ between "
            "rows)");
  EXPECT_EQ(vectorize({v}, {{v, subtensor(V, {Index(0)})}}).status().message(),
            "vectorize: TensorType(float64, (?,)) is not a batch of TensorType(float64, (?,)) "
            "(one more leading dim, the same dtype)");
}

}  // namespace
}  // namespace kiln
