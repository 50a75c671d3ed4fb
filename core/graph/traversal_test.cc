#include "core/graph/traversal.h"

#include <gtest/gtest.h>

#include "core/kiln.h"

namespace kiln {
namespace {

std::vector<std::string> Names(const std::vector<Variable*>& vars) {
  std::vector<std::string> names;
  for (const Variable* v : vars) names.push_back(v->ToString());
  return names;
}

class TraversalTest : public ::testing::Test {
 protected:
  Var x = dvector("x"), y = dvector("y");
  Var s = x + y;  // Elemwise{add}
  Var out = exp(s) * s;
};

TEST_F(TraversalTest, AncestorsInputsFirst) {
  EXPECT_EQ(Names(Ancestors({{out.ptr()}})),
            (std::vector<std::string>{"x", "y", "Elemwise{add,no_inplace}.0",
                                      "Elemwise{exp,no_inplace}.0", "Elemwise{mul,no_inplace}.0"}));
  EXPECT_EQ(Names(Ancestors({{out.ptr()}}, {{s.ptr()}})).size(), 3u);
}

TEST_F(TraversalTest, GraphInputsIncludeConstants) {
  Var z = out * 2.0;
  EXPECT_EQ(Names(GraphInputs({{z.ptr()}})),
            (std::vector<std::string>{"x", "y", "TensorConstant{2.0}"}));
  EXPECT_EQ(Names(GraphInputs({{out.ptr()}}, {{s.ptr()}})),
            (std::vector<std::string>{"Elemwise{add,no_inplace}.0"}));
}

TEST_F(TraversalTest, IoToposortOrdersNodes) {
  std::vector<Apply*> order = IoToposort({{x.ptr(), y.ptr()}}, {{out.ptr()}});
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0], s->owner());
  EXPECT_EQ(order[2], out->owner());
  EXPECT_EQ(IoToposort({{s.ptr()}}, {{out.ptr()}}).size(), 2u);
}

TEST_F(TraversalTest, CloneCopiesWithoutTouchingTheOriginal) {
  CloneMap memo;
  std::vector<VariablePtr> copies = Clone({{x.ptr(), y.ptr()}}, {{out.ptr()}}, true, &memo);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_NE(copies[0].get(), out.ptr().get());
  EXPECT_NE(memo.at(x.ptr().get()).get(), x.ptr().get());
  EXPECT_EQ(memo.at(x.ptr().get())->name(), "x");
  EXPECT_TRUE(EqualComputations({{copies[0]}}, {{out.ptr()}},
                                {{memo.at(x.ptr().get()), memo.at(y.ptr().get())}},
                                {{x.ptr(), y.ptr()}}));
  EXPECT_EQ(out->owner()->inputs()[1].get(), s.ptr().get());
}

TEST_F(TraversalTest, CloneReplaceSubstitutes) {
  Var z = dvector("z");
  auto replaced = CloneReplace({{out.ptr()}}, {{y.ptr(), z.ptr()}});
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(Names(GraphInputs(*replaced)), (std::vector<std::string>{"x", "z"}));
  EXPECT_EQ(Names(GraphInputs({{out.ptr()}})), (std::vector<std::string>{"x", "y"}));
  auto bad = CloneReplace({{out.ptr()}}, {{y.ptr(), fvector("f").ptr()}});
  EXPECT_EQ(bad.status().message(),
            "clone_replace: the replacement f has type TensorType(float32, (?,)) but y has type "
            "TensorType(float64, (?,))");
}

TEST_F(TraversalTest, EqualComputations) {
  Var x2 = dvector("x2"), y2 = dvector("y2");
  Var s2 = x2 + y2;
  Var out2 = exp(s2) * s2;
  EXPECT_TRUE(EqualComputations({{out.ptr()}}, {{out2.ptr()}}, {{x.ptr(), y.ptr()}},
                                {{x2.ptr(), y2.ptr()}}));
  // Inputs matched the other way round differ.
  EXPECT_FALSE(EqualComputations({{out.ptr()}}, {{out2.ptr()}}, {{x.ptr(), y.ptr()}},
                                 {{y2.ptr(), x2.ptr()}}));
  EXPECT_FALSE(EqualComputations({{out.ptr()}}, {{out2.ptr()}}));
  // Constants compare by bits: NaN equals NaN, 0.0 differs from -0.0.
  EXPECT_TRUE(EqualComputations({{(x * NAN).ptr()}}, {{(x * NAN).ptr()}}));
  EXPECT_FALSE(EqualComputations({{(x * 0.0).ptr()}}, {{(x * -0.0).ptr()}}));
  EXPECT_FALSE(EqualComputations({{(x + y).ptr()}}, {{(x * y).ptr()}}));
}

TEST(TraversalDeepTest, DeepGraphsDoNotOverflowTheStack) {
  Var x = dscalar("x");
  Var y = x;
  for (int i = 0; i < 100000; ++i) y = y + 1.0;
  // A 0-d constant needs no DimShuffle: one node per add. Destroying y at the end of the test
  // must not recurse either.
  EXPECT_EQ(IoToposort({{x.ptr()}}, {{y.ptr()}}).size(), 100000u);
  EXPECT_EQ(GraphInputs({{y.ptr()}}).size(), 100001u);
}

}  // namespace
}  // namespace kiln
