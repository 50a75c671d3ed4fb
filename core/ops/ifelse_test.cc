// IfElse: the chosen values, laziness (a branch not chosen never runs, nested too), the
// gradient against finite differences, the shape it infers, its rewrites and its refusals.
#include "core/ops/ifelse.h"

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/runtime/lazy_schedule.h"
#include "gtest/gtest.h"
#include "tests/testing/eval.h"

namespace kiln {
namespace {

Tensor Vec(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return *Tensor::FromValues<double>(DType::kFloat64, {n}, v);
}

Tensor Scalar(double v) {
  return *Tensor::FromValues<double>(DType::kFloat64, {}, std::vector<double>{v});
}

// The messages of the Print ops that ran during one call of f.
std::string Ran(const Function& f, std::vector<Tensor> args, std::string* value = nullptr) {
  PrintCapture capture;
  absl::StatusOr<std::vector<Tensor>> out = f(std::move(args));
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok() && value != nullptr) *value = (*out)[0].ToString();
  std::string ran;
  for (const PrintedValue& p : capture.values()) ran += p.message;
  return ran;
}

TEST(IfElseTest, ComputesOnlyTheChosenBranch) {
  const Var c = dscalar("c"), x = dvector("x");
  const Var y = ifelse(c, print(exp(x), "then"), print(sin(x) * 2.0, "else"));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->owner()->op().Name(), "if{}");
  absl::StatusOr<Function> f = function({c, x}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  std::string value;
  EXPECT_EQ(Ran(*f, {Scalar(1), Vec({0, 1})}, &value), "then");
  EXPECT_EQ(value, "[1.         2.71828183]");
  EXPECT_EQ(Ran(*f, {Scalar(0), Vec({0, 1})}, &value), "else");
  EXPECT_EQ(value, "[0.         1.68294197]");
  // A branch that would fail is never run.
  const Var bad = ifelse(c, x, reshape(x, std::vector<int64_t>{7}));
  absl::StatusOr<Function> g = function({c, x}, {bad});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE((*g)({Scalar(2), Vec({1, 2, 3})}).ok());
  EXPECT_FALSE((*g)({Scalar(0), Vec({1, 2, 3})}).ok());
}

TEST(IfElseTest, NestedBranchesAndSeveralValuesAreLazy) {
  const Var a = dscalar("a"), b = dscalar("b"), x = dvector("x");
  const Var inner = ifelse(b, print(x + 1.0, "in-then"), print(x - 1.0, "in-else"));
  std::vector<Var> outer =
      ifelse(a, {inner, print(sum(x), "s")},
             {print(x * 3.0, "out-else"), scalar_constant(0.0, DType::kFloat64)});
  ASSERT_EQ(outer.size(), 2u) << outer[0].status();
  absl::StatusOr<Function> f = function({a, b, x}, outer);
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor v = Vec({1, 2});
  EXPECT_EQ(Ran(*f, {Scalar(1), Scalar(1), v}), "in-thens");
  EXPECT_EQ(Ran(*f, {Scalar(1), Scalar(0), v}), "in-elses");
  EXPECT_EQ(Ran(*f, {Scalar(0), Scalar(1), v}), "out-else");
  absl::StatusOr<std::vector<Tensor>> out = (*f)({Scalar(1), Scalar(0), v});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "[0. 1.]");
  EXPECT_EQ((*out)[1].ToString(), "3.0");
}

TEST(IfElseTest, GradientMatchesFiniteDifferences) {
  for (double c : {1.0, 0.0}) {
    absl::Status s = verify_grad(
        [c](const std::vector<Var>& in) {
          return sum(ifelse(constant(c) + sum(in[0]) * 0.0, sin(in[0]) * in[1], exp(in[0])));
        },
        {Vec({0.3, -0.2}), Vec({1.5, 0.5})});
    EXPECT_TRUE(s.ok()) << s;
  }
}

TEST(IfElseTest, ItsShapeNeedsOnlyTheChosenBranch) {
  const Var c = dscalar("c"), x = dvector("x");
  const Var y = ifelse(c, print(repeat(x, constant(int64_t{2})), "then"), print(x, "else"));
  absl::StatusOr<Function> f = function({c, x}, {shape(y)});
  ASSERT_TRUE(f.ok()) << f.status();
  std::string value;
  EXPECT_EQ(Ran(*f, {Scalar(0), Vec({1, 2, 3})}, &value), "");
  EXPECT_EQ(value, "[3]");
  EXPECT_EQ(Ran(*f, {Scalar(1), Vec({1, 2, 3})}, &value), "");
  EXPECT_EQ(value, "[6]");
}

TEST(IfElseTest, ConstantConditionsAndIdenticalBranchesAreRemoved) {
  const Var x = dvector("x"), c = dscalar("c");
  for (const Var& y : {ifelse(constant(1.0), exp(x), sin(x)), ifelse(c, exp(x), exp(x))}) {
    std::vector<Var> inputs = {x};
    if (y->owner()->inputs()[0] == c.ptr()) inputs.push_back(c);
    absl::StatusOr<Function> f = function(inputs, {y});
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(DebugPrint({f->fgraph().outputs()[0]}),
              "Elemwise{exp,no_inplace} [id A]\n |x [id B]\n");
  }
}

TEST(IfElseTest, RefusesMismatchedBranches) {
  const Var c = dscalar("c");
  EXPECT_EQ(ifelse(c, dvector("a"), fvector("b")).status().message(),
            "if{}: the then value 0 has type TensorType(float64, (?,)) but the else value has "
            "type TensorType(float32, (?,)): both branches need one dtype and rank");
  EXPECT_EQ(ifelse(dvector("v"), dvector("a"), dvector("b")).status().message(),
            "if{}: input 0 has type TensorType(float64, (?,)) but a scalar condition is needed");
  EXPECT_EQ(ifelse(c, std::vector<Var>{dvector("a")}, {}).at(0).status().message(),
            "ifelse: the branches give 1 and 0 values; they need the same number, at least one");
  const Var y = ifelse(c, dvector("a"), dvector("b"));
  absl::StatusOr<OpPtr> again = MakeOp("IfElse", y->owner()->op().Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == y->owner()->op());
  EXPECT_FALSE(MakeOp("IfElse", {{"n_outs", 0}}).ok());
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// The IfElses its shape and gradient make share the branches' guards: asking for the shape of a
// branch value that cannot be lifted still leaves the branch lazy.
TEST(IfElseTest, ShapesAndGradientsOnTheSameConditionStayLazy) {
  const Var c = dscalar("c"), x = dvector("x");
  const Var y = ifelse(c, subtensor(print(x, "then"), {Slice{1}}), x);
  absl::StatusOr<Function> f = function({c, x}, {y, shape(y)});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(Ran(*f, {Scalar(0), Vec({1, 2, 3})}), "");
  EXPECT_EQ(Ran(*f, {Scalar(1), Vec({1, 2, 3})}), "then");
}

// One output unused by the cost, and an integer output whose gradient is a float.
TEST(IfElseTest, GradientsOfSeveralAndIntegerOutputs) {
  const Var c = dscalar("c"), x = dvector("x"), y = dvector("y");
  std::vector<Var> both = ifelse(c, {x * 2.0, cast(x, DType::kInt64)}, {y, cast(y, DType::kInt64)});
  const Var g = grad(sum(both[0]), x);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(testing::Eval({c, x, y}, {g}, {Scalar(1), Vec({1, 2}), Vec({3, 4})})[0].ToString(),
            "[2. 2.]");
  const Var gi = grad(sum(cast(both[1], DType::kFloat64) * x), x);
  ASSERT_TRUE(gi.ok()) << gi.status();
  EXPECT_EQ(testing::Eval({c, x, y}, {gi}, {Scalar(1), Vec({1, 2}), Vec({3, 4})})[0].ToString(),
            "[1. 2.]");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// An attacker's shapes: IfElses nested past kMaxLazyDepth (the deeper ones run eagerly, still
// right), and a branch of a 20,000-node chain that is skipped without being walked recursively.
TEST(IfElseTest, DeepNestingAndLongBranches) {
  const Var c = dscalar("c"), x = dvector("x");
  Var nested = x;
  for (int i = 0; i < 2 * kMaxLazyDepth; ++i) nested = ifelse(c, nested + 1.0, nested);
  Var chain = x;
  for (int i = 0; i < 20000; ++i) chain = sin(chain);
  const Var y = ifelse(c, nested, print(chain, "chain"));
  absl::StatusOr<Function> f = function({c, x}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  std::string value;
  EXPECT_EQ(Ran(*f, {Scalar(1), Vec({0, 1})}, &value), "");
  EXPECT_EQ(value, absl::StrCat("[", 2 * kMaxLazyDepth, ". ", 2 * kMaxLazyDepth + 1, ".]"));
  EXPECT_EQ(Ran(*f, {Scalar(0), Vec({0, 1})}), "chain");
}

}  // namespace
}  // namespace kiln
