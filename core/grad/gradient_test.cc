// grad's semantics as Aesara defines them: options, disconnected and undefined gradients, integer
// inputs, the gradient ops, Lop/Rop/jacobian/hessian and every error message.
#include "core/grad/gradient.h"

#include "core/kiln.h"
#include "gtest/gtest.h"
#include "tests/testing/eval.h"

namespace kiln {
namespace {

Tensor Scalar(double v) { return *Tensor::Of<double>(DType::kFloat64, {}, {v}); }
Tensor Vec(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return *Tensor::FromValues<double>(DType::kFloat64, {n}, v);
}
std::string Eval1(const std::vector<Var>& in, const Var& out, std::vector<Tensor> args) {
  std::vector<Tensor> r = testing::Eval(in, {out}, std::move(args));
  return r.empty() ? "<error>" : r[0].ToString();
}

TEST(GradTest, SumsEveryPath) {
  Var x = dscalar("x");
  Var y = x * x + exp(x) * x;  // 2x + e^x (x + 1)
  Var g = grad(y, x);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Eval1({x}, g, {Scalar(0.0)}), "1.0");
  EXPECT_EQ(Eval1({x}, g, {Scalar(2.0)}), Scalar(4.0 + std::exp(2.0) * 3.0).ToString());
}

TEST(GradTest, NamesAndTypes) {
  Var x = dvector("x");
  Var cost = sum(x * 2.0);
  cost->set_name("c");
  Var g = grad(cost, x);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->name(), "(dc/dx)");
  EXPECT_EQ(g->type()->ToString(), "TensorType(float64, (?,))");
  GradOptions no_names;
  no_names.add_names = false;
  EXPECT_EQ(grad(cost, x, no_names)->name(), "");
}

TEST(GradTest, CostMustBeAScalar) {
  Var x = dvector("x");
  EXPECT_EQ(grad(x * 2.0, x).status().message(), "Cost must be a scalar.");
  EXPECT_EQ(grad(Var(), x).status().message(), "cost and known_grads can't both be None.");
  Var bad = grad(undefined_grad(x).ok() ? Var(null_type("it is undefined")) : x, x);
  EXPECT_EQ(bad.status().message(),
            "Can't differentiate a NaN cost. Cost is NaN because it is undefined");
}

TEST(GradTest, DisconnectedInputs) {
  Var x = dscalar("x"), y = dscalar("y");
  Var cost = x * 3.0;
  Var g = grad(cost, y);
  EXPECT_EQ(g.status().message(),
            "DisconnectedInputError: grad method was asked to compute the gradient with respect "
            "to a variable that is not part of the computational graph of the cost, or is used "
            "only by a non-differentiable operator: y");
  GradOptions ignore;
  ignore.disconnected_inputs = DisconnectedInputs::kIgnore;
  EXPECT_EQ(Eval1({y}, grad(cost, y, ignore), {Scalar(5.0)}), "0.0");
  ignore.return_disconnected = ReturnDisconnected::kNone;
  EXPECT_FALSE(grad(cost, y, ignore).ok());
  ignore.return_disconnected = ReturnDisconnected::kDisconnected;
  EXPECT_TRUE(IsDisconnected(*grad(cost, y, ignore)));
  std::vector<std::string> warnings;
  GradOptions warn;
  warn.disconnected_inputs = DisconnectedInputs::kWarn;
  warn.warnings = &warnings;
  EXPECT_TRUE(grad(cost, y, warn).ok());
  // As in Aesara: once for the variable, once more for its DisconnectedType gradient.
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("not part of the computational graph of the cost, or is used only "
                             "by a non-differentiable operator: y"),
            std::string::npos);
}

TEST(GradTest, ShapeOpsAreDisconnected) {
  Var x = dvector("x");
  GradOptions ignore;
  ignore.disconnected_inputs = DisconnectedInputs::kIgnore;
  ignore.return_disconnected = ReturnDisconnected::kDisconnected;
  // The cost depends on x only through its shape.
  Var cost = cast(shape_i(x, 0), DType::kFloat64) * 2.0;
  EXPECT_TRUE(IsDisconnected(*grad(cost, x, ignore)));
  EXPECT_FALSE(grad(cost, x).ok());
  // Comparisons and floor are connected with zero gradients (Aesara's rule).
  Var step = sum(cast(x > 0.0, DType::kFloat64) + floor(x));
  EXPECT_EQ(Eval1({x}, grad(step, x), {Vec({0.5, -2.0})}), "[0. 0.]");
  // argmax too.
  Var am = cast(argmax(x), DType::kFloat64);
  EXPECT_EQ(Eval1({x}, grad(am, x), {Vec({0.5, -2.0})}), "[0. 0.]");
}

TEST(GradTest, ConsiderConstantAndGradientOps) {
  Var x = dscalar("x"), y = dscalar("y");
  Var z = x * y;
  GradOptions constant_z;
  constant_z.consider_constant = {z};
  constant_z.disconnected_inputs = DisconnectedInputs::kIgnore;
  // d/dx (z + x) with z held constant is 1.
  EXPECT_EQ(Eval1({x, y}, grad(z + x, x, constant_z), {Scalar(2), Scalar(3)}), "1.0");
  EXPECT_EQ(Eval1({x}, grad(consider_constant(x) * x, x), {Scalar(3)}), "3.0");
  EXPECT_EQ(Eval1({x}, grad(zero_grad(x) * x, x), {Scalar(3)}), "3.0");
  EXPECT_EQ(Eval1({x}, grad(grad_scale(x, 2.0) * x, x), {Scalar(3)}), "9.0");
  EXPECT_EQ(Eval1({x}, grad(grad_clip(x * 10.0, -1, 1), x), {Scalar(3)}), "10.0");
  EXPECT_EQ(Eval1({x}, grad(grad_clip(sqr(x), -1, 1), x), {Scalar(3)}), "6.0");
  EXPECT_EQ(grad_clip(x, 1, -1).status().message(),
            "`clip_upper_bound` should be >= `clip_lower_bound`");
  EXPECT_EQ(grad_scale(x, 2.0)->owner()->op().Name(), "GradScale{multiplier=2.0}");
  // disconnected_grad cuts the path; the other path remains.
  EXPECT_EQ(Eval1({x}, grad(disconnected_grad(x) * x, x), {Scalar(3)}), "3.0");
  EXPECT_FALSE(grad(disconnected_grad(x) * 2.0, x).ok());
}

TEST(GradTest, NullGradients) {
  Var x = dscalar("x");
  Var cost = undefined_grad(x) * 2.0;
  EXPECT_EQ(grad(cost, x).status().message(),
            "`grad` encountered a NaN. This variable is Null because the grad method for input 0 "
            "(x) of the UndefinedGrad op is mathematically undefined. ");
  GradOptions keep;
  keep.null_gradients = NullGradients::kReturn;
  EXPECT_TRUE(IsNullType(*grad(cost, x, keep)));
  // gammau's derivative is not implemented (Aesara 2.9.4 has none; psi's is tri_gamma now).
  EXPECT_NE(grad(gammau(x, x), x).status().message().find("is not implemented"),
            std::string::npos);
  // Eye's inputs have undefined gradients.
  Var n = lscalar("n");
  Var e = sum(eye(n, n, constant(int64_t{0})));
  GradOptions ignore;
  ignore.disconnected_inputs = DisconnectedInputs::kIgnore;
  EXPECT_NE(grad(e, n).status().message().find(
                "of the Eye{dtype='float64'} op is mathematically undefined"),
            std::string::npos);
}

// A NullType gradient keeps its reason through nodes all of whose output gradients are NullType.
TEST(GradTest, NullGradientsKeepTheirReasonDownTheGraph) {
  const Var z = zvector("z");
  EXPECT_EQ(grad(sum(real(z * constant(2.0))), z).status().message(),
            "`grad` encountered a NaN. This variable is Null because the grad method for input 0 "
            "(Elemwise{mul,no_inplace}.0) of the Elemwise{real,no_inplace} op is not implemented. "
            "Gradients of complex values are not implemented.");
}

TEST(GradTest, IntegerInputsGetFloatZeros) {
  Var i = ivector("i");
  Var x = dvector("x");
  Var g = grad(sum(i * x), i);  // the mul's integer input: zeros of floatX
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g.dtype(), DType::kFloat64);
  Var k = grad(sum(cast(i, DType::kFloat64) * x), i);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(Eval1({i, x}, k, {*Tensor::Of<int32_t>(DType::kInt32, {2}, {1, 2}), Vec({3, 4})}),
            "[0. 0.]");
  // Integer division of integers has zero gradients too.
  EXPECT_EQ(grad(cast(sum(int_div(i, i)), DType::kFloat64), i).dtype(), DType::kFloat64);
}

TEST(GradTest, KnownGradsAndLop) {
  Var x = dvector("x");
  Var y = x * 3.0;
  GradOptions known;
  known.known_grads = {{y, constant(*Tensor::Of<double>(DType::kFloat64, {2}, {1.0, 2.0}))}};
  absl::StatusOr<std::vector<Var>> g = grad(Var(), std::vector<Var>{x}, known);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Eval1({x}, (*g)[0], {Vec({0, 0})}), "[3. 6.]");
  known.known_grads = {{y, constant(*Tensor::Of<int64_t>(DType::kInt64, {2}, {1, 2}))}};
  EXPECT_EQ(grad(Var(), std::vector<Var>{x}, known).status().message(),
            "Gradients must always be NullType, DisconnectedType, or continuous, but grad was "
            "given a known_grad of type TensorType(int64, (2,))");
  Var v = dvector("v");
  absl::StatusOr<std::vector<Var>> l = Lop({sin(x)}, {x}, {v});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Eval1({x, v}, (*l)[0], {Vec({0, 0}), Vec({2, 5})}), "[2. 5.]");
}

TEST(GradTest, RopIsJacobianTimesVector) {
  Var W = dmatrix("W"), x = dvector("x"), v = dvector("v");
  Var y = tanh(dot(W, x));
  absl::StatusOr<std::vector<Var>> r = Rop({y}, {x}, {v});
  ASSERT_TRUE(r.ok()) << r.status();
  // J v = (1 - tanh^2(Wx)) * (W v); at x = 0 that is W v.
  const Tensor w = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(Eval1({W, x, v}, (*r)[0], {w, Vec({0, 0}), Vec({1, -1})}), "[-1. -1.]");
  EXPECT_EQ(Rop({y}, {x, W}, {v}).status().message(),
            "`wrt` must be the same length as `eval_points`.");
  EXPECT_EQ(Rop({y}, {x}, {W}).status().message(),
            "Elements 0 of `wrt` and `eval_point` have mismatched dimensionalities: 1 and 2");
}

TEST(GradTest, JacobianAndHessian) {
  Var x = tensor(DType::kFloat64, {3}, "x");
  absl::StatusOr<std::vector<Var>> j = jacobian(sqr(x), {x});
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(Eval1({x}, (*j)[0], {Vec({1, 2, 3})}), "[[2. 0. 0.]\n [0. 4. 0.]\n [0. 0. 6.]]");
  absl::StatusOr<std::vector<Var>> h = hessian(sum(x * x * x), {x});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(Eval1({x}, (*h)[0], {Vec({1, 2, 3})}),
            "[[ 6.  0.  0.]\n [ 0. 12.  0.]\n [ 0.  0. 18.]]");
  EXPECT_EQ(jacobian(dmatrix("m"), {x}).status().message(),
            "jacobian expects a 1 dimensional variable as `expression`. If not use flatten to "
            "make it a vector");
  EXPECT_EQ(hessian(x, {x}).status().message(),
            "hessian expects a 0 dimensional variable as `cost`");
  EXPECT_EQ(hessian(sum(x), {dmatrix("m")}).status().message(),
            "hessian expects a (list of) 1 dimensional variable as `wrt`");
  // An empty expression: a (0, 3) Jacobian.
  Var none = tensor(DType::kFloat64, {0}, "none");
  absl::StatusOr<std::vector<Var>> empty =
      jacobian(none, {x}, {.disconnected_inputs = DisconnectedInputs::kIgnore});
  ASSERT_TRUE(empty.ok()) << empty.status();
  auto shape =
      testing::Eval({x}, {shape_i((*empty)[0], 0), shape_i((*empty)[0], 1)}, {Vec({1, 2, 3})});
  ASSERT_EQ(shape.size(), 2u);
  EXPECT_EQ(shape[0].ElementAsDouble(0), 0);
  EXPECT_EQ(shape[1].ElementAsDouble(0), 3);
}

// max_nodes bounds the nodes grad adds, counted as they are made; the graph it differentiates
// does not count. jacobian and hessian count all their passes against one limit.
TEST(GradTest, MaxNodes) {
  const Var x = dvector("x"), w = dvector("w");
  Var y = x;
  for (int i = 0; i < 200; ++i) y = sin(y) * x;
  const Var cost = sum(y);
  absl::StatusOr<std::vector<Var>> g = grad(cost, std::vector<Var>{x}, {.max_nodes = 100});
  EXPECT_EQ(g.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(g.status().message(),
            "grad: the gradient graph grew past 100 new nodes (in kiln-server, 5 x --max_nodes)");
  g = grad(cost, std::vector<Var>{x}, {.max_nodes = 5000});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Eval1({x}, (*g)[0], {Vec({0.5, -1})}), Eval1({x}, grad(cost, x), {Vec({0.5, -1})}));
  // 2,000 nodes above w, a gradient of a few nodes.
  Var z = w;
  for (int i = 0; i < 1000; ++i) z = exp(z) * w;
  g = grad(sum(x * z), std::vector<Var>{x}, {.max_nodes = 20});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(hessian(cost, {x}, {.max_nodes = 100}).status().message(),
            "grad: the gradient graph grew past 100 new nodes (in kiln-server, 5 x --max_nodes)");
  EXPECT_EQ(jacobian(y, {x}, {.max_nodes = 100}).status().message(),
            "grad: the gradient graph grew past 100 new nodes (in kiln-server, 5 x --max_nodes)");
  absl::StatusOr<std::vector<Var>> h = hessian(cost, {x}, {.max_nodes = 100000});
  ASSERT_TRUE(h.ok()) << h.status();
}

TEST(GradTest, VerifyGradCatchesAWrongGradient) {
  const absl::Status s = verify_grad(
      [](const std::vector<Var>& in) { return grad_scale(in[0], 2.0) * 1.0; }, {Vec({1, 2})});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("GradientError: numeric gradient and analytic gradient exceed "
                             "tolerance:\n        At position "),
            std::string::npos)
      << s;
  EXPECT_EQ(verify_grad([](const std::vector<Var>& in) { return in[0]; },
                        {*Tensor::Of<int32_t>(DType::kInt32, {1}, {1})})
                .message(),
            "verify_grad can work only with floating point inputs, but input 0 has dtype "
            "\"int32\".");
  EXPECT_TRUE(verify_grad(Elemwise::Make(ScalarOpKind::kTanh), {Vec({0.5, -1})}).ok());
}

}  // namespace
}  // namespace kiln
