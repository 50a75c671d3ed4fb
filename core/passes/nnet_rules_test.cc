// The nnet specializations in FAST_RUN: the classifier graphs become Aesara's dedicated ops, and
// the rules decline where the rewrite would change a value.
#include "core/passes/nnet_rules.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/kiln.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/nnet_xent.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/golden.h"
#include "tests/testing/rewrite_check.h"

namespace kiln {
namespace {

// The printed names of the optimized graph's nodes.
std::vector<std::string> OpNames(const FunctionGraph& fg) {
  std::vector<std::string> names;
  for (const Apply* node : fg.Toposort()) names.push_back(node->op().Name());
  return names;
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// nll of softmax(x + b) by labels: SoftmaxWithBias, then the fused cross-entropy op, as in
// Aesara's FAST_RUN graph of the same expression.
TEST(NnetRulesTest, CrossentropyOfSoftmaxBecomesTheFusedOp) {
  const Var x = dmatrix("px"), b = dvector("pb");
  const Var y = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {2, 0, 1}));
  for (const Var& probs : {softmax(x + b), softmax(x), softmax_with_bias(x, b)}) {
    const Var nll = crossentropy_categorical_1hot(probs, y);
    testing::Optimized o = testing::Optimize({x, b}, {nll});
    ASSERT_NE(o.fg, nullptr);
    const std::vector<std::string> names = OpNames(*o.fg);
    EXPECT_TRUE(Has(names, "CrossentropySoftmaxArgmax1HotWithBias")) << names.size();
    EXPECT_FALSE(Has(names, "CrossentropyCategorical1Hot"));
    EXPECT_FALSE(Has(names, "Softmax{axis=1}"));
    testing::ExpectSameValues("crossentropy", {x, b}, {nll}, *o.fg);
  }
  EXPECT_GT(
      testing::Optimize({x, b}, {softmax(x + b)}).report.rules["local_softmax_with_bias"].count, 0);
}

// With its gradient, the cost's softmax is the fused op's second output: one softmax computed.
TEST(NnetRulesTest, TheGradientSharesTheFusedSoftmax) {
  const Var x = dmatrix("px"), b = dvector("pb");
  const Var y = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {2, 0, 1}));
  const Var cost = mean(crossentropy_categorical_1hot(softmax(x + b), y));
  const std::vector<Var> outs = {cost, grad(cost, x), grad(cost, b)};
  testing::Optimized o = testing::Optimize({x, b}, outs);
  ASSERT_NE(o.fg, nullptr);
  const std::vector<std::string> names = OpNames(*o.fg);
  EXPECT_EQ(std::count(names.begin(), names.end(), "CrossentropySoftmaxArgmax1HotWithBias"), 1);
  EXPECT_FALSE(Has(names, "SoftmaxWithBias"));
  EXPECT_FALSE(Has(names, "Softmax{axis=1}"));
  EXPECT_GT(o.report.rules["graph_merge_softmax_with_crossentropy_softmax"].count, 0);
  testing::ExpectSameValues("gradient", {x, b}, outs, *o.fg);
}

// argmax looks through exp and through a softmax along the reduced axis only; a MaxAndArgmax
// whose maximum is used stays.
TEST(NnetRulesTest, ArgmaxPushdownKeepsTheValues) {
  const Var x = dmatrix("x");
  const std::vector<Var> both = max_and_argmax(sigmoid(x), Axes(1));
  struct Case {
    Var out;
    bool fires;
  };
  for (const Case& c : std::vector<Case>{
           {argmax(exp(x), 0), true},
           {argmax(softmax(x, 1), 1), true},
           {argmax(softmax(x, 0), 1), false},
           {argmax(tanh(x), Axes{0, 1}), true},
           {max_and_argmax(sigmoid(x), Axes(1))[1], true},
           {both[0] + cast(both[1], DType::kFloat64), false},
       }) {
    ASSERT_TRUE(c.out.ok()) << c.out.status();
    RewriteOptions only;
    only.mode = OptimizerMode::kNone;
    only.include = {"local_argmax_pushdown"};
    testing::Optimized o = testing::Optimize({x}, {c.out}, only);
    ASSERT_NE(o.fg, nullptr);
    EXPECT_EQ(o.report.rules["local_argmax_pushdown"].count > 0, c.fires) << c.out.ToString();
    testing::ExpectSameValues("argmax", {x}, {c.out}, *o.fg);
  }
}

// -log(p)[arange(len(y)), y] with p = softmax(x + b), in the forms Aesara's
// local_advanced_indexing_crossentropy_onehot(_grad) take (log of the softmax or of its picked
// entries; softmax(x), softmax(x + b) or SoftmaxWithBias), as a mean or a sum.
std::vector<std::pair<std::string, Var>> TutorialCosts(const Var& x, const Var& b, const Var& y) {
  const Var rows = arange(subtensor(shape(y), {0}));
  auto picked = [&](const Var& m) { return advanced_subtensor(m, {rows, y}); };
  return {
      {"-mean(log(softmax(x + b))[arange, y])", -mean(picked(log(softmax(x + b))))},
      {"-mean(log(softmax(x + b)[arange, y]))", -mean(log(picked(softmax(x + b))))},
      {"-sum(log(softmax(x))[arange, y])", -sum(picked(log(softmax(x))))},
      {"-mean(log(softmax_with_bias(x, b))[arange, y])",
       -mean(picked(log(softmax_with_bias(x, b))))},
      {"-mean(log_softmax(x + b)[arange, y])", -mean(picked(log_softmax(x + b, 1)))},
      {"-sum(log(softmax(x + b)[arange, y]) * w)",
       -sum(log(picked(softmax(x + b))) * cast(y + 1, DType::kFloat64))},
  };
}

// Compiled without rewrites and with FAST_RUN, the outputs agree on fixed inputs.
void ExpectSameAsUnoptimized(const std::string& name, const std::vector<Var>& inputs,
                             const std::vector<Var>& outputs, const std::vector<Tensor>& args) {
  auto plain = function(inputs, outputs,
                        {.mode = OptimizerMode::kNone, .on_unused_input = OnUnusedInput::kIgnore});
  auto fast = function(inputs, outputs, {.on_unused_input = OnUnusedInput::kIgnore});
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(fast.ok()) << fast.status();
  auto want = (*plain)(args);
  auto got = (*fast)(args);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << name << ": " << got.status();
  ASSERT_EQ(want->size(), got->size());
  for (size_t o = 0; o < want->size(); ++o) {
    ASSERT_EQ((*want)[o].shape(), (*got)[o].shape()) << name;
    for (int64_t i = 0; i < (*want)[o].size(); ++i) {
      const double a = (*want)[o].ElementAsDouble(i), c = (*got)[o].ElementAsDouble(i);
      EXPECT_NEAR(a, c, 1e-12 * (1 + std::fabs(a))) << name << " output " << o << " element " << i;
    }
  }
}

// The tutorial's cost and its gradients become the fused op and Dx: no advanced indexing is
// left, one softmax is computed, and the values are the unoptimized graph's.
TEST(NnetRulesTest, AdvancedIndexingCrossentropyBecomesTheFusedOps) {
  const Var x = dmatrix("x"), b = dvector("b"), y = lvector("y");
  const std::vector<Tensor> args = {
      *Tensor::Of<double>(DType::kFloat64, {4, 3},
                          {0.5, -1, 2, 3, 0.25, -0.5, 1, 1, 1, -2, 40, 0.125}),
      *Tensor::Of<double>(DType::kFloat64, {3}, {0.1, -0.2, 0.3}),
      *Tensor::Of<int64_t>(DType::kInt64, {4}, {2, 0, 1, 1})};
  for (const auto& [name, cost] : TutorialCosts(x, b, y)) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(cost.ok()) << cost.status();
    const bool biased = name.find("b") != std::string::npos;
    const std::vector<Var> outs =
        biased ? std::vector<Var>{cost, grad(cost, x), grad(cost, b)}
               : std::vector<Var>{cost, grad(cost, x)};
    testing::Optimized o = testing::Optimize({x, b, y}, outs);
    ASSERT_NE(o.fg, nullptr);
    const std::vector<std::string> names = OpNames(*o.fg);
    EXPECT_EQ(std::count(names.begin(), names.end(), "CrossentropySoftmaxArgmax1HotWithBias"), 1);
    EXPECT_EQ(std::count(names.begin(), names.end(), "CrossentropySoftmax1HotWithBiasDx"), 1);
    EXPECT_FALSE(Has(names, "AdvancedSubtensor"));
    EXPECT_FALSE(Has(names, "AdvancedIncSubtensor{inplace=False,  set_instead_of_inc=False}"));
    EXPECT_FALSE(Has(names, "LogSoftmax{axis=1}"));
    EXPECT_GT(o.report.rules["local_advanced_indexing_crossentropy_onehot"].count, 0);
    EXPECT_GT(o.report.rules["local_advanced_indexing_crossentropy_onehot_grad"].count, 0);
    ExpectSameAsUnoptimized(name, {x, b, y}, outs, args);
  }
}

// Labels of static length: arange(3) is folded into the constant [0, 1, 2], which the rules
// accept as arange(len(y)).
TEST(NnetRulesTest, AdvancedIndexingCrossentropyWithConstantRows) {
  const Var x = dmatrix("x"), b = dvector("b");
  const Var y = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {2, 0, 1}));
  const Var cost = -mean(advanced_subtensor(log(softmax(x + b)), {arange(shape_i(y, 0)), y}));
  const std::vector<Var> outs = {cost, grad(cost, x)};
  testing::Optimized o = testing::Optimize({x, b}, outs);
  ASSERT_NE(o.fg, nullptr);
  const std::vector<std::string> names = OpNames(*o.fg);
  EXPECT_TRUE(Has(names, "CrossentropySoftmaxArgmax1HotWithBias"));
  EXPECT_TRUE(Has(names, "CrossentropySoftmax1HotWithBiasDx"));
  ExpectSameAsUnoptimized("constant rows", {x, b}, outs,
                          {*Tensor::Of<double>(DType::kFloat64, {3, 3},
                                               {1, 2, 3, -1, 0, 1, 7, -7, 0.5}),
                           *Tensor::Of<double>(DType::kFloat64, {3}, {0, 1, -1})});
}

// The rules decline where the picked entries are not one per row in order (rows from x's
// length, rows from 1, a column index first) or where the labels are a matrix; the values stay.
TEST(NnetRulesTest, AdvancedIndexingCrossentropyDeclines) {
  const Var x = dmatrix("x"), b = dvector("b"), y = lvector("y");
  const Var n = shape_i(y, 0);
  const Var logp = log(softmax(x + b));
  const std::vector<std::pair<std::string, Var>> cases = {
      {"rows arange(len(x))", advanced_subtensor(logp, {arange(shape_i(x, 0)), y})},
      {"rows arange(1, n)",
       advanced_subtensor(logp, {arange(constant(int64_t{1}), n, constant(int64_t{1})),
                                 subtensor(y, {Slice{1, std::nullopt, std::nullopt}})})},
      {"columns first", advanced_subtensor(logp, {y, arange(n)})},
      {"step 2", advanced_subtensor(logp, {arange(constant(int64_t{0}), n, constant(int64_t{2})),
                                           subtensor(y, {Slice{std::nullopt, std::nullopt,
                                                               constant(int64_t{2})}})})},
  };
  const std::vector<Tensor> args = {
      *Tensor::Of<double>(DType::kFloat64, {3, 3}, {1, 2, 3, -1, 0, 1, 7, -7, 0.5}),
      *Tensor::Of<double>(DType::kFloat64, {3}, {0, 1, -1}),
      *Tensor::Of<int64_t>(DType::kInt64, {3}, {1, 2, 1})};
  for (const auto& [name, picked] : cases) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(picked.ok()) << picked.status();
    const Var cost = -mean(picked);
    const std::vector<Var> outs = {cost, grad(cost, x)};
    testing::Optimized o = testing::Optimize({x, b, y}, outs);
    ASSERT_NE(o.fg, nullptr);
    EXPECT_EQ(o.report.rules["local_advanced_indexing_crossentropy_onehot"].count, 0);
    EXPECT_EQ(o.report.rules["local_advanced_indexing_crossentropy_onehot_grad"].count, 0);
    ExpectSameAsUnoptimized(name, {x, b, y}, outs, args);
  }
}

// The FAST_RUN graphs of the classifier expressions (tests/golden/nnet_rewrites.txt), each
// numerically equal to its input graph. Aesara 2.9.4's FAST_RUN graphs of the same expressions
// have the same ops (tests/golden/gen_aesara_nnet.py writes them beside, for comparison).
TEST(NnetRulesTest, GoldenGraphs) {
  const Var x = dmatrix("x"), b = dvector("b"), y = lvector("y");
  const Var cost = mean(crossentropy_categorical_1hot(softmax(x + b), y));
  struct Case {
    std::string name;
    std::vector<Var> outputs;
  };
  std::vector<Case> cases = {
      {"softmax(x + b)", {softmax(x + b)}},
      {"crossentropy_categorical_1hot(softmax(x + b), y)",
       {crossentropy_categorical_1hot(softmax(x + b), y)}},
      {"crossentropy_categorical_1hot(softmax(x), y)",
       {crossentropy_categorical_1hot(softmax(x), y)}},
      {"mean of it with its gradients", {cost, grad(cost, x), grad(cost, b)}},
      {"argmax(softmax(x + b), 1)", {argmax(softmax(x + b), 1)}},
  };
  // The tutorial's costs with their gradients (Aesara's gen_aesara_nnet.py has the same list).
  for (const auto& [name, c] : TutorialCosts(x, b, y)) {
    const bool biased = name.find("b") != std::string::npos;
    cases.push_back({name + " with its gradients",
                     biased ? std::vector<Var>{c, grad(c, x), grad(c, b)}
                            : std::vector<Var>{c, grad(c, x)}});
  }
  std::string transcript;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    testing::Optimized o = testing::Optimize({x, b, y}, c.outputs);
    ASSERT_NE(o.fg, nullptr);
    absl::StrAppend(&transcript, "== ", c.name, "\n",
                    DebugPrint(std::vector<Var>(o.fg->outputs().begin(), o.fg->outputs().end())));
  }
  testing::ExpectGolden(transcript, "tests/golden/nnet_rewrites.txt");
}

}  // namespace
}  // namespace kiln
