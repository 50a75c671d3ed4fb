// The nnet specializations in FAST_RUN: the classifier graphs become Aesara's dedicated ops, and
// the rules decline where the rewrite would change a value.
#include "core/passes/nnet_rules.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/kiln.h"
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
  const std::vector<Case> cases = {
      {"softmax(x + b)", {softmax(x + b)}},
      {"crossentropy_categorical_1hot(softmax(x + b), y)",
       {crossentropy_categorical_1hot(softmax(x + b), y)}},
      {"crossentropy_categorical_1hot(softmax(x), y)",
       {crossentropy_categorical_1hot(softmax(x), y)}},
      {"mean of it with its gradients", {cost, grad(cost, x), grad(cost, b)}},
      {"argmax(softmax(x + b), 1)", {argmax(softmax(x + b), 1)}},
  };
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
