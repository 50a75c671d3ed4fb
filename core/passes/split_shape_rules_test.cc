// The rules of split_shape_rules.cc and the rules widened with them (local_useless_reduce on 0-d
// sums, local_useless_dimshuffle on unit dims, local_sum_prod_div_dimshuffle on a scalar
// divisor): each alone on a graph it matches and on near misses it must leave alone, the values
// kept.
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/kiln.h"
#include "core/ops/advanced_indexing.h"
#include "core/passes/passes.h"
#include "gtest/gtest.h"
#include "tests/testing/rewrite_check.h"

namespace kiln {
namespace {

using testing::ExpectSameValues;
using testing::Optimize;
using testing::Optimized;

// Only `rules` (by name), as rules_test runs each rule.
Optimized OnlyRules(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                    std::set<std::string> rules) {
  RewriteOptions options;
  options.mode = OptimizerMode::kNone;
  options.include = std::move(rules);
  return Optimize(inputs, outputs, options);
}

// The names of fg's ops, in toposort order.
std::vector<std::string> OpNames(const FunctionGraph& fg) {
  std::vector<std::string> names;
  for (Apply* node : fg.Toposort()) names.push_back(node->op().Name());
  return names;
}

// The nodes whose op name contains `part`.
int CountOps(const FunctionGraph& fg, const std::string& part) {
  int n = 0;
  for (const std::string& name : OpNames(fg)) n += absl::StrContains(name, part);
  return n;
}

// x[0:3], x[3:5], x[5:7] of a computed x of length 7 -> one Split{3}, the pieces in order.
TEST(SplitShapeRulesTest, SlicesTilingAVectorBecomeOneSplit) {
  Var t = tensor(DType::kFloat64, {7}, "t");
  Var x = exp(t);
  const std::vector<Var> outs = {subtensor(x, {Slice{0, 3, std::nullopt}}) * 2.0,
                                 subtensor(x, {Slice{3, 5, std::nullopt}}) * 3.0,
                                 subtensor(x, {Slice{5, std::nullopt, std::nullopt}}) * 4.0};
  Optimized o = OnlyRules({t}, outs, {"local_subtensor_slices_to_split", "merge"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["local_subtensor_slices_to_split"].count, 3);
  EXPECT_EQ(CountOps(*o.fg, "Split{3}"), 1);
  EXPECT_EQ(CountOps(*o.fg, "Subtensor"), 0);
  ExpectSameValues("slices to split", {t}, outs, *o.fg);
}

// Bounds past the length clip as Python's do, the largest int64 and a negative one included:
// x[-100:3] and x[3:2**63 - 1] tile x of length 7.
TEST(SplitShapeRulesTest, BoundsPastTheLengthClip) {
  Var t = tensor(DType::kFloat64, {7}, "t");
  Var x = exp(t);
  const std::vector<Var> outs = {
      subtensor(x, {Slice{-100, 3, std::nullopt}}) * 2.0,
      subtensor(x, {Slice{3, std::numeric_limits<int64_t>::max(), std::nullopt}}) * 3.0};
  Optimized o = OnlyRules({t}, outs, {"local_subtensor_slices_to_split"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(CountOps(*o.fg, "Split{2}"), 1);
  ExpectSameValues("clipped bounds", {t}, outs, *o.fg);
}

// The lengths come through a Join (84 + 1 as the radon model's zero-sum vectors), an
// increment and an elementwise broadcast.
TEST(SplitShapeRulesTest, TheLengthIsProvenThroughJoinIncrementAndBroadcast) {
  Var theta = tensor(DType::kFloat64, {10}, "theta");
  Var raw = subtensor(theta, {Slice{1, 5, std::nullopt}});  // static length unknown: 4
  Var joined = concatenate({raw, dimshuffle(sum(raw), {kX})}, 0);  // 5
  Var idx = constant(
      *Tensor::FromValues<int64_t>(DType::kInt64, {3}, std::vector<int64_t>{0, 4, 4}));
  Var inc = advanced_inc_subtensor(joined, take(joined, idx), {AdvIndex(idx)});  // 5
  Var bumped = inc * dimshuffle(subtensor(theta, {Index(0)}), {kX});
  const std::vector<Var> outs = {subtensor(bumped, {Slice{0, 4, std::nullopt}}),
                                 subtensor(bumped, {Slice{4, 5, std::nullopt}})};
  Optimized o = OnlyRules({theta}, outs, {"local_subtensor_slices_to_split"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(CountOps(*o.fg, "Split{2}"), 1);
  ExpectSameValues("join pieces", {theta}, outs, *o.fg);
}

// Near misses keep their slices: a gap, an overlap, a slice past a length that is not known,
// and a step.
TEST(SplitShapeRulesTest, SlicesThatDoNotTileStaySlices) {
  Var t = tensor(DType::kFloat64, {7}, "t");
  Var v = dvector("v");  // length unknown
  Var x = exp(t);
  const std::vector<std::vector<Var>> cases = {
      {subtensor(x, {Slice{0, 3, std::nullopt}}), subtensor(x, {Slice{4, 7, std::nullopt}})},
      {subtensor(x, {Slice{0, 4, std::nullopt}}), subtensor(x, {Slice{3, 7, std::nullopt}})},
      {subtensor(exp(v), {Slice{0, 4, std::nullopt}}),
       subtensor(exp(v), {Slice{4, std::nullopt, std::nullopt}})},
      {subtensor(x, {Slice{0, 4, 1}}), subtensor(x, {Slice{4, 7, std::nullopt}})},
  };
  for (const std::vector<Var>& outs : cases) {
    Optimized o = OnlyRules({t, v}, outs, {"local_subtensor_slices_to_split"});
    ASSERT_NE(o.fg, nullptr);
    EXPECT_EQ(o.report.rules["local_subtensor_slices_to_split"].count, 0);
    EXPECT_EQ(CountOps(*o.fg, "Split"), 0);
  }
}

// specify_shape(exp(t[1:4]), (3,)) -> exp(specify_shape(t[1:4], (3,))) -> exp(t[1:4]) with
// the slice typed (3,); a wrong length, or one nothing proves, stays checked.
TEST(SplitShapeRulesTest, ASpecifyShapeTheSlicesProveIsRemoved) {
  Var t = tensor(DType::kFloat64, {7}, "t");
  Var f = exp(subtensor(t, {Slice{1, 4, std::nullopt}}));
  const Var out = specify_shape(f, {3}) * 2.0;
  Optimized o = OnlyRules({t}, {out}, {"local_useless_specify_shape", "local_specify_shape_lift"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["local_specify_shape_lift"].count, 1);
  EXPECT_EQ(o.report.rules["local_useless_specify_shape"].count, 1);
  EXPECT_EQ(CountOps(*o.fg, "SpecifyShape"), 0);
  ExpectSameValues("specify shape", {t}, {out}, *o.fg);
  for (Apply* node : o.fg->Toposort()) {  // the slice, exp and the product
    if (node->op().Is<Subtensor>() || node->op().Is<Elemwise>()) {
      EXPECT_EQ(node->output_ptr(0)->tensor_type()->shape(), StaticShape{StaticDim(3)}) << node->op().Name();
    }
  }

  Var g = exp(subtensor(t, {Slice{1, 5, std::nullopt}}));  // 4 long, specified 3
  Var v = dvector("v");                                    // nothing proves its length
  for (const Var& wrong : {specify_shape(g, {3}), specify_shape(exp(v), {3})}) {
    Optimized kept = OnlyRules({t, v}, {wrong},
                               {"local_useless_specify_shape", "local_specify_shape_lift"});
    ASSERT_NE(kept.fg, nullptr);
    EXPECT_EQ(CountOps(*kept.fg, "SpecifyShape"), 1);
  }
}

// The lift specifies only the input that needs it: specify_shape(t[2:3] + w, (1,)) with w of
// static shape (1,) -> specify_shape(t[2:3], (1,)) + w. A length 1 stays specified (a static 1
// that Subtensor does not infer would not survive the graph's trip through a proto).
TEST(SplitShapeRulesTest, TheLiftSpecifiesOnlyTheInputsThatNeedIt) {
  Var t = tensor(DType::kFloat64, {7}, "t"), w = tensor(DType::kFloat64, {1}, "w");
  const Var out = specify_shape(subtensor(t, {Slice{2, 3, std::nullopt}}) + w, {1});
  Optimized o = OnlyRules({t, w}, {out}, {"local_useless_specify_shape", "local_specify_shape_lift"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["local_specify_shape_lift"].count, 1);
  EXPECT_EQ(o.report.rules["local_useless_specify_shape"].count, 0);
  EXPECT_EQ(CountOps(*o.fg, "SpecifyShape"), 1);
  const Apply* add = o.fg->outputs()[0]->owner();
  ASSERT_NE(add, nullptr);
  ASSERT_NE(add->inputs()[0]->owner(), nullptr);
  EXPECT_TRUE(add->inputs()[0]->owner()->op().Is<SpecifyShape>());
  EXPECT_EQ(add->inputs()[1], o.fg->inputs()[1]);  // w
  EXPECT_EQ(o.fg->outputs()[0]->tensor_type()->shape(), StaticShape{StaticDim(1)});
  ExpectSameValues("lift", {t, w}, {out}, *o.fg);
}

// A piece of length 1 keeps Split's unknown length (the static 1 would decide broadcasting);
// the others are typed with theirs.
TEST(SplitShapeRulesTest, SplitPiecesAreTypedButForLengthOne) {
  Var t = tensor(DType::kFloat64, {7}, "t");
  Var x = exp(t);
  const std::vector<Var> outs = {subtensor(x, {Slice{0, 6, std::nullopt}}) * 2.0,
                                 subtensor(x, {Slice{6, 7, std::nullopt}}) * 3.0};
  Optimized o = OnlyRules({t}, outs, {"local_subtensor_slices_to_split"});
  ASSERT_NE(o.fg, nullptr);
  for (Apply* node : o.fg->Toposort()) {
    if (!node->op().Is<Split>()) continue;
    EXPECT_EQ(node->output_ptr(0)->tensor_type()->shape(), StaticShape{StaticDim(6)});
    EXPECT_EQ(node->output_ptr(1)->tensor_type()->shape(), StaticShape({std::nullopt}));
  }
  ExpectSameValues("typed pieces", {t}, outs, *o.fg);
}

// sum(MakeVector(a, b, c)) -> a + b + c; a Prod is left alone.
TEST(SplitShapeRulesTest, ASumOfAMakeVectorIsASumOfScalars) {
  Var a = dscalar("a"), b = dscalar("b"), c = dscalar("c");
  const Var mv = make_vector({a, b, c}, DType::kFloat64);
  Optimized o = OnlyRules({a, b, c}, {sum(mv)}, {"local_sum_make_vector"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(OpNames(*o.fg), std::vector<std::string>{"Elemwise{add,no_inplace}"});
  ExpectSameValues("sum of make_vector", {a, b, c}, {sum(mv)}, *o.fg);
  Optimized p = OnlyRules({a, b, c}, {prod(mv)}, {"local_sum_make_vector"});
  ASSERT_NE(p.fg, nullptr);
  EXPECT_EQ(CountOps(*p.fg, "MakeVector"), 1);
}

// sum(s) of a 0-d s -> s (the sum of each term of a model's logp); sum(v) of a vector stays.
TEST(SplitShapeRulesTest, ASumOfAScalarIsTheScalar) {
  Var s = dscalar("s"), v = dvector("v");
  Optimized o = OnlyRules({s, v}, {sum(exp(s)) + sum(v)}, {"local_useless_reduce"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["local_useless_reduce"].count, 1);
  EXPECT_EQ(CountOps(*o.fg, "Sum"), 1);
  ExpectSameValues("sum of a scalar", {s, v}, {sum(exp(s)) + sum(v)}, *o.fg);
}

// DimShuffle{x} of a (1,) vector (its dim dropped and a new one put back) -> the vector; of a
// vector of unknown length it stays (it would check the length).
TEST(SplitShapeRulesTest, ADimShuffleThatPutsBackAUnitDimIsRemoved) {
  Var u = tensor(DType::kFloat64, {1}, "u"), v = dvector("v");
  const Var out = dimshuffle(exp(u), {kX}) + v;
  Optimized o = OnlyRules({u, v}, {out}, {"local_useless_dimshuffle"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(CountOps(*o.fg, "DimShuffle"), 0);
  ExpectSameValues("unit dimshuffle", {u, v}, {out}, *o.fg);
  Optimized kept = OnlyRules({v}, {dimshuffle(v, {0, kX})}, {"local_useless_dimshuffle"});
  ASSERT_NE(kept.fg, nullptr);
  EXPECT_EQ(CountOps(*kept.fg, "DimShuffle"), 1);
}

// sum(v / s[None]) -> sum(v) / s for a 0-d s, with no DimShuffle{}(s) left between (the
// radon gradient's identity DimShuffle of a scalar).
TEST(SplitShapeRulesTest, ASumOverABroadcastScalarDivisorLeavesNoDimShuffle) {
  Var v = dvector("v"), s = dscalar("s");
  const Var out = sum(v / dimshuffle(s, {kX}));
  Optimized o = OnlyRules({v, s}, {out}, {"local_sum_prod_div_dimshuffle"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["local_sum_prod_div_dimshuffle"].count, 1);
  EXPECT_EQ(CountOps(*o.fg, "DimShuffle"), 0);
  ExpectSameValues("sum over a scalar divisor", {v, s}, {out}, *o.fg);
}

}  // namespace
}  // namespace kiln
