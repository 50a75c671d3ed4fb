#include "core/ops/composite.h"

#include <gtest/gtest.h>

#include "core/kiln.h"

namespace kiln {
namespace {

TEST(CompositeTest, FromGraphPrintsAndRuns) {
  Var x = dscalar("x"), y = dscalar("y");
  auto program = ScalarProgram::FromGraph({x, y}, {exp(x) * y + 2.0, -x});
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->ToString(), "((exp(i0) * i1) + 2.0), (-i0)");
  Var a = dvector("a"), b = dmatrix("b");
  std::vector<Var> outs = apply_composite(*program, {a, b});
  ASSERT_EQ(outs.size(), 2u);
  ASSERT_TRUE(outs[0].ok()) << outs[0].status();
  EXPECT_EQ(outs[0]->owner()->op().Name(), "Elemwise{Composite{((exp(i0) * i1) + 2.0), (-i0)}}");
  EXPECT_EQ(outs[0]->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(outs[1]->type()->ToString(), "TensorType(float64, (?, ?))");
  auto f = function({a, b}, outs);
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({*Tensor::Of<double>(DType::kFloat64, {2}, {0, 1}),
                   *Tensor::Of<double>(DType::kFloat64, {1, 2}, {3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  // Checked against the same expression built from separate Elemwise nodes.
  auto g = function({a, b}, {exp(a) * b + 2.0, -a + b * 0.0});
  ASSERT_TRUE(g.ok());
  auto ref = (*g)({*Tensor::Of<double>(DType::kFloat64, {2}, {0, 1}),
                   *Tensor::Of<double>(DType::kFloat64, {1, 2}, {3, 4})});
  ASSERT_TRUE(ref.ok());
  EXPECT_TRUE((*out)[0].BitwiseEquals((*ref)[0]));
  EXPECT_EQ((*out)[1].ToString(), "[[-0. -1.]]");
}

// A long subexpression read twice is named once (t<register>) instead of being written out at
// each use: y = log1p(y) + y repeated 40 times would otherwise print 2^40 characters.
TEST(CompositeTest, SharedLongSubexpressionsAreNamedOnce) {
  Var x = dscalar("x");
  Var y = x;
  for (int i = 0; i < 40; ++i) y = log1p(y) + y;
  auto program = ScalarProgram::FromGraph({x}, {y});
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string text = (*program)->ToString();
  EXPECT_LT(text.size(), 8000u);
  EXPECT_EQ(text.substr(0, 40), "t6=(log1p((log1p((log1p(i0) + i0)) + (lo");
  // Short shared subexpressions stay inline, as Aesara prints them.
  auto small = ScalarProgram::FromGraph({x}, {exp(x) * exp(x)});
  ASSERT_TRUE(small.ok());
  EXPECT_EQ((*small)->ToString(), "(exp(i0) * exp(i0))");
}

TEST(CompositeTest, NestedCompositesInlineAndEqualProgramsAreEqualOps) {
  Var x = dscalar("x");
  auto inner = *ScalarProgram::FromGraph({x}, {sqr(x) + 1.5});
  Var v = dscalar("v");
  Var wrapped = apply_composite(inner, {v})[0];
  auto outer = ScalarProgram::FromGraph({v}, {log(wrapped)});
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_EQ((*outer)->ToString(), "log((sqr(i0) + 1.5))");
  auto again = *ScalarProgram::FromGraph({x}, {sqr(x) + 1.5});
  EXPECT_EQ(*apply_composite(inner, {dvector()})[0]->owner()->op_ptr(),
            *apply_composite(again, {dvector()})[0]->owner()->op_ptr());
}

TEST(CompositeTest, Errors) {
  Var x = dscalar("x"), y = dscalar("y");
  EXPECT_EQ(ScalarProgram::FromGraph({x}, {x + y}).status().message(),
            "composite: y is needed but is not among the inputs");
  EXPECT_EQ(ScalarProgram::FromGraph({x}, {sum(x)}).status().message(),
            "composite: Sum{acc_dtype=float64}(x) is not an elementwise operation");
  auto program = *ScalarProgram::FromGraph({x}, {exp(x)});
  EXPECT_EQ(apply_composite(program, {fvector("f")})[0].status().message(),
            "Elemwise{Composite{exp(i0)}}: input 0 has type TensorType(float32, (?,)): the "
            "composite takes (float64)");
}

}  // namespace
}  // namespace kiln
