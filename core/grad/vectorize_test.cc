// Batched graphs and the Jacobians and Hessians built on them: for vectors whose length is known
// only at run time, against central finite differences, one compiled function for two lengths.
#include "core/grad/vectorize.h"

#include <cmath>
#include <functional>

#include "core/builders/op_from_graph.h"
#include "core/kiln.h"
#include "core/scan/scan.h"
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
      {"join",
       [](const Var& x, const Var&) {
         return concatenate({x, exp(x), x * x});
       }},
      {"sort", [](const Var& x, const Var&) { return sort(x * x); }},
      {"take",
       [](const Var& x, const Var&) {
         return take(x, constant(*Tensor::Of<int64_t>(DType::kInt64, {4}, {0, 2, 0, 1}))) *
                subtensor(x, {Index(0)});
       }},
      {"outer rows", [](const Var& x, const Var&) { return sum(outer(x, sin(x)), {0}); }},
      {"reshape", [](const Var& x, const Var&) { return flatten(outer(x, x)); }},
      {"normalize", [](const Var& x, const Var&) { return x / sqrt(sum(x * x)); }},
      {"max", [](const Var& x, const Var& W) { return max(W * x, {1}); }},
      {"mean and prod",
       [](const Var& x, const Var& W) { return mean(W * x, {0}) + prod(W + x, {1}); }},
      {"repeat", [](const Var& x, const Var&) { return repeat(x * x, constant(int64_t{2})); }},
      {"stack of reductions",
       [](const Var& x, const Var&) {
         return stack({sum(x), prod(x), max(x)});
       }},
      {"transpose product",
       [](const Var& x, const Var& W) { return sum(dot(transpose(W), outer(x, x)), {1}); }},
      // Broadcastable dims the backward pass relies on: batched values must keep them.
      {"broadcastable row",
       [](const Var& x, const Var&) {
         return subtensor(subtensor(dimshuffle(exp(x), {kX, 0}), {Slice{}, Slice{1, std::nullopt}}),
                          {Index(0)});
       }},
      {"reshape to a column",
       [](const Var& x, const Var&) {
         return dimshuffle(reshape(x * x, {-1, 1}), {0});
       }},
      // IfElse's gradient is an IfElse of the cotangent and zeros: batched as an IfElse.
      {"ifelse then",
       [](const Var& x, const Var& W) { return ifelse(sum(x) > -100.0, dot(W, x) * x, exp(x)); }},
      {"ifelse else",
       [](const Var& x, const Var& W) {
         return ifelse(sum(x) < -100.0, dot(W, x) * x, exp(x) * sum(x));
       }},
      {"ifelse of two values",
       [](const Var& x, const Var&) {
         const std::vector<Var> o = ifelse(sum(x) > 0.0, {x * x, exp(x)}, {sin(x), x});
         return o[0] * o[1] + ifelse(sum(x) < 0.0, x, cos(x));
       }},
      // Scan's gradient is a loop over the cotangent: batched as one loop.
      {"scan",
       [](const Var& x, const Var&) {
         ScanArgs args;
         args.sequences = {{x}};
         args.outputs_info = {{subtensor(x, {Index(0)})}};
         const ScanFn step = [](const std::vector<Var>& a) {
           return ScanStep{{a[1] * sin(a[0]) + a[0]}};
         };
         return scan(step, args)->outputs[0];
       }},
      {"scan with a matrix",
       [](const Var& x, const Var& W) {
         ScanArgs args;
         args.sequences = {{x * 0.5}};
         args.outputs_info = {{x}};
         args.non_sequences = {W};
         const ScanFn step = [](const std::vector<Var>& a) {
           return ScanStep{{tanh(dot(a[2], a[1]) * a[0])}};
         };
         const Var h = scan(step, args)->outputs[0];
         return subtensor(h, {Index(-1)}) + sum(h, {0});
       }},
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

// The number of Apply nodes computing `outs`.
size_t NodeCount(const std::vector<Var>& outs) {
  std::vector<VariablePtr> ptrs;
  for (const Var& v : outs) ptrs.push_back(v.ptr());
  return ToposortUntil(ptrs, [](const Variable*) { return false; }).size();
}

// The attack report's request: the Jacobian of an IfElse over a vector of static length 10^5 was
// one gradient per element, about 19 nodes each (1.5 million in the report); batched, it is 26
// nodes whatever the length. A loop's Jacobian is batched alike.
TEST(JacobianTest, AStaticLengthIsNotUnrolled) {
  const Var c = dscalar("c");
  const std::vector<std::pair<const char*, std::function<Var(const Var&)>>> cases = {
      {"ifelse", [&](const Var& x) { return ifelse(c > 0.0, x * x, sin(x) * 3.0); }},
      {"scan",
       [&](const Var& x) {
         ScanArgs args;
         args.sequences = {{x}};
         args.outputs_info = {{c}};
         return scan([](const std::vector<Var>& a) { return ScanStep{{a[1] * sin(a[0])}}; }, args)
             ->outputs[0];
       }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    size_t nodes = 0;
    for (int64_t n : {10, 100000}) {
      const Var x = tensor(DType::kFloat64, {n}, "x");
      absl::StatusOr<std::vector<Var>> j = jacobian(f(x), {x}, {.max_nodes = 100000});
      ASSERT_TRUE(j.ok()) << j.status();
      ASSERT_EQ((*j)[0].ndim(), 2);
      if (nodes == 0) nodes = NodeCount(*j);
      EXPECT_EQ(NodeCount(*j), nodes) << "n=" << n;
      EXPECT_LT(NodeCount(*j), 500u);
    }
  }
}

// d/dx ifelse(c, x*x, 3 sin(x)): diag(2x) where c is nonzero, else diag(3 cos(x)), as NumPy
// computes them; and the same as central differences.
TEST(JacobianTest, IfElseValues) {
  const Var x = tensor(DType::kFloat64, {3}, "x"), c = dscalar("c");
  const Var y = ifelse(c, x * x, sin(x) * 3.0);
  absl::StatusOr<std::vector<Var>> j = jacobian(y, {x});
  ASSERT_TRUE(j.ok()) << j.status();
  const std::vector<double> xs = {0.5, -2, 1};
  const Tensor xv = *Tensor::FromValues<double>(DType::kFloat64, {3}, xs);
  for (double cv : {1.0, 0.0}) {
    const Tensor cond = *Tensor::Of<double>(DType::kFloat64, {}, {cv});
    std::vector<Tensor> got = testing::Eval({x, c}, *j, {xv, cond});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].shape(), (Shape{3, 3}));
    auto fy = function({x, c}, {y});
    ASSERT_TRUE(fy.ok()) << fy.status();
    const double eps = 1e-6;
    for (int r = 0; r < 3; ++r) {
      for (int k = 0; k < 3; ++k) {
        const double want = r != k ? 0 : cv != 0 ? 2 * xs[k] : 3 * std::cos(xs[k]);
        EXPECT_NEAR(got[0].ElementAsDouble(3 * r + k), want, 1e-12) << "c=" << cv;
        std::vector<double> up = xs, down = xs;
        up[k] += eps;
        down[k] -= eps;
        auto yu = (*fy)({*Tensor::FromValues<double>(DType::kFloat64, {3}, up), cond});
        auto yd = (*fy)({*Tensor::FromValues<double>(DType::kFloat64, {3}, down), cond});
        ASSERT_TRUE(yu.ok() && yd.ok());
        const double fd = ((*yu)[0].ElementAsDouble(r) - (*yd)[0].ElementAsDouble(r)) / (2 * eps);
        EXPECT_NEAR(got[0].ElementAsDouble(3 * r + k), fd, 1e-6) << "c=" << cv;
      }
    }
  }
}

// The Hessian of a cost through an IfElse: the gradient's IfElse batched over the identity.
TEST(JacobianTest, HessianThroughIfElse) {
  const Var x = dvector("x");
  for (double threshold : {-100.0, 100.0}) {
    const Var cost = sum(ifelse(sum(x) > threshold, x * x * x, exp(x) * x));
    absl::StatusOr<std::vector<Var>> h = hessian(cost, {x});
    ASSERT_TRUE(h.ok()) << h.status();
    const Tensor xv = Values({4}, 0.3), unused = Values({1, 1}, 0);
    std::vector<Tensor> got = testing::Eval({x}, {(*h)[0]}, {xv});
    ASSERT_EQ(got.size(), 1u);
    auto fg =
        function({x, dmatrix("W")}, {grad(cost, x)}, {.on_unused_input = OnUnusedInput::kIgnore});
    ASSERT_TRUE(fg.ok()) << fg.status();
    const std::vector<double> want = FiniteJacobian(*fg, xv, unused);
    ASSERT_EQ(got[0].size(), static_cast<int64_t>(want.size()));
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_NEAR(got[0].ElementAsDouble(k), want[k], 1e-5 * (1 + std::abs(want[k])))
          << "threshold " << threshold << " element " << k;
    }
  }
}

// An op without a batching rule (a test op: 2x, whose gradient is itself).
class Twice final : public DeclaredOp<Twice, NoAttrs> {
 public:
  KILN_DECLARED_OP("VectorizeTestTwice")
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
  EXPECT_EQ(
      testing::Eval({x}, *j, {Values({3}, 0)})[0].ToString(),
      testing::Eval({x}, {jacobian(x * x * 2.0, {x})->at(0)}, {Values({3}, 0)})[0].ToString());
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
            "DisconnectedInputError: grad method was asked to compute the gradient with respect to "
            "a variable that is not "
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

// A float64 scalar constant (a C++ double literal is a float32 constant, as in Aesara).
Var F64(double v) { return cast(constant(v), DType::kFloat64); }

// Row b of vectorize(out, {{v, V}}) is out computed from V[b]: one expression per rule that the
// Jacobians above do not reach.
TEST(VectorizeTest, EachRowIsTheOutputOfThatRow) {
  PrintCapture quiet;  // the Print case's values
  const Var v = dvector("v"), V = dmatrix("V");
  const Var idx = constant(*Tensor::Of<int64_t>(DType::kInt64, {2}, {2, 0}));
  const Var c3 = constant(*Tensor::Of<double>(DType::kFloat64, {3}, {1, -1, 4}));
  const Var a = dvector("a");
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
      // A condition that differs between rows picks each row's branch (the rows' sums are
      // -0.5 and 2.25).
      {"ifelse batched condition", ifelse(sum(v) > 0.0, v * 2.0, v * v)},
      {"ifelse batched condition, unbatched values",
       [&] {
         const std::vector<Var> o = ifelse(sum(v) > 0.0, {v * 2.0, c3}, {c3 * 2.0, v});
         return o[0] + o[1];
       }()},
      // A condition the same for every row (from the shape) picks one list, whichever is batched.
      {"ifelse shared condition", ifelse(shape_i(v, 0) > 2, c3, v * 2.0)},
      {"ifelse shared condition, else", ifelse(shape_i(v, 0) < 2, c3, v * 2.0)},
      {"dot22", dot22(outer(v, v), outer(v, exp(v)))},
      {"gemm", gemm(outer(v, v), sum(v), outer(v, c3), outer(c3, v), F64(0.5))},
      {"gemm with b = 0", gemm(log(outer(v, v) - 10.0), sum(v), outer(v, c3), outer(c3, v),
                               F64(0.0))},
      {"gemm, unbatched product", gemm(outer(v, v), F64(2.0), outer(c3, c3),
                                       outer(c3, c3), sum(v))},
      {"gemv", gemv(v * 2.0, sum(v), outer(v, v), v + 1.0, F64(0.5))},
      {"op_from_graph", ApplyOp(OpPtr(*op_from_graph({a}, {a * a + sum(a)})), {v * 3.0})},
      {"nested op_from_graph",
       ApplyOp(OpPtr(*op_from_graph({a}, {ApplyOp(OpPtr(*op_from_graph({a}, {exp(a)})), {a})})),
               {v})},
      {"print", print(v * 2.0, "batched")},
      {"scan over a batched sequence",
       [&] {
         ScanArgs args;
         args.sequences = {{v, {-1, 0}}};
         args.outputs_info = {{cast(constant(1.0), DType::kFloat64)}, {}};
         args.non_sequences = {c3};
         const ScanResult r = *scan(
             [](const std::vector<Var>& a) {
               return ScanStep{{a[2] * a[1] + a[0], sum(a[3]) * a[1]}};
             },
             args);
         return r.outputs[0] * 2.0 + r.outputs[1];
       }()},
      {"scan with a batched state and non-sequence",
       [&] {
         ScanArgs args;
         args.outputs_info = {{v}};
         args.non_sequences = {sum(v)};
         args.n_steps = constant(int64_t{2});
         const ScanResult r = *scan(
             [](const std::vector<Var>& a) { return ScanStep{{sin(a[0]) * a[1]}}; }, args);
         return r.outputs[0];
       }()},
      {"foldl from a shared start",
       foldl([](const std::vector<Var>& a) { return ScanStep{{a[1] * a[0] + 1.0}}; },
             {c3 * 1.0}, {sum(v)})
           ->outputs[0]},
  };
  const std::vector<std::vector<double>> rows = {{0.5, -2, 1}, {3, 0.25, -1}};
  const Tensor batch = *Tensor::Of<double>(DType::kFloat64, {2, 3}, {0.5, -2, 1, 3, 0.25, -1});
  for (const auto& [name, out] : cases) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(out.ok()) << out.status();
    absl::StatusOr<std::vector<Var>> batched = vectorize({out}, {{v, V}});
    ASSERT_TRUE(batched.ok()) << batched.status();
    for (int64_t b = 0; b < 2; ++b) {
      std::vector<Tensor> got = testing::Eval({V}, {subtensor((*batched)[0], {Index(b)})}, {batch});
      std::vector<Tensor> want =
          testing::Eval({v}, {out}, {*Tensor::FromValues<double>(DType::kFloat64, {3}, rows[b])});
      ASSERT_EQ(got.size(), 1u);
      ASSERT_EQ(want.size(), 1u);
      EXPECT_EQ(got[0].ToString(), want[0].ToString()) << "row " << b;
    }
  }
}

// The static-length fallback of an op without a batching rule counts against max_nodes as it
// goes: 10^5 rows are refused after about a thousand nodes, not built first.
TEST(JacobianTest, MaxNodesBoundsTheFallback) {
  const Var x = tensor(DType::kFloat64, {100000}, "x");
  absl::StatusOr<std::vector<Var>> j =
      jacobian(ApplyOp(std::make_shared<Twice>(), {x * x}), {x}, {.max_nodes = 1000});
  EXPECT_EQ(j.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(j.status().message(),
            "grad: the gradient graph grew past 1000 new nodes (in kiln-server, 5 x --max_nodes)");
  // Within the limit, the fallback still gives the Jacobian.
  const Var small = tensor(DType::kFloat64, {3}, "small");
  j = jacobian(ApplyOp(std::make_shared<Twice>(), {small * small}), {small}, {.max_nodes = 1000});
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_LE(NodeCount(*j), 1000u + 2);
}

TEST(VectorizeTest, MaxNodes) {
  const Var v = dvector("v"), V = dmatrix("V");
  Var y = v;
  for (int i = 0; i < 300; ++i) y = sin(y) * v;
  absl::StatusOr<std::vector<Var>> out = vectorize({y}, {{v, V}}, {.max_nodes = 50});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(
      out.status().message(),
      "vectorize: the batched graph grew past 50 new nodes (in kiln-server, 5 x --max_nodes)");
  out = vectorize({y}, {{v, V}}, {.max_nodes = 10000});
  ASSERT_TRUE(out.ok()) << out.status();
  int polls = 0;
  out = vectorize({y}, {{v, V}}, {.interrupt = [&] {
                    return ++polls < 0 ? absl::OkStatus() : absl::DeadlineExceededError("late");
                  }});
  EXPECT_EQ(out.status().message(), "late");
}

TEST(VectorizeTest, BatchesRowsAndRefusesWhatCannotBe) {
  const Var v = dvector("v"), V = dmatrix("V"), s = lscalar("s");
  // Each row of V through the same graph; the unbatched output is repeated.
  absl::StatusOr<std::vector<Var>> out = vectorize({exp(v) * sum(v), s * 1.0}, {{v, V}});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<Tensor> got =
      testing::Eval({V, s}, *out,
                    {*Tensor::Of<double>(DType::kFloat64, {2, 2}, {0, 0, 1, 0}),
                     *Tensor::Of<int64_t>(DType::kInt64, {}, {7})});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].ToString(),
            Tensor::Of<double>(DType::kFloat64, {2, 2}, {0, 0, std::exp(1.0), 1})->ToString());
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
  // A loop whose rows would stop after different steps.
  ScanArgs args;
  args.sequences = {{v}};
  args.n_steps = constant(int64_t{3});
  const ScanFn until = [](const std::vector<Var>& a) {
    return ScanStep{{a[0] * 2.0}, {}, a[0] > 1.0};
  };
  EXPECT_EQ(vectorize({scan(until, args)->outputs[0]}, {{v, V}}).status().message(),
            "vectorize: while{cpu,scan_fn} has no batched form for input 1 (the until condition "
            "would differ between rows)");
  EXPECT_EQ(vectorize({v}, {{v, subtensor(V, {Index(0)})}}).status().message(),
            "vectorize: TensorType(float64, (?,)) is not a batch of TensorType(float64, (?,)) "
            "(one more leading dim, the same dtype)");
}

}  // namespace
}  // namespace kiln
