#include "core/graph/fgraph.h"

#include <gtest/gtest.h>

#include "core/kiln.h"

namespace kiln {
namespace {

std::unique_ptr<FunctionGraph> MakeOrDie(std::vector<Var> inputs, std::vector<Var> outputs) {
  std::vector<VariablePtr> ins, outs;
  for (const Var& v : inputs) ins.push_back(v.ptr());
  for (const Var& v : outputs) outs.push_back(v.ptr());
  auto fg = FunctionGraph::Make(ins, outs);
  EXPECT_TRUE(fg.ok()) << fg.status();
  return *std::move(fg);
}

TEST(FunctionGraphTest, ClonesAndTracksClients) {
  Var x = dvector("x"), y = dvector("y");
  Var s = x + y;
  Var out = exp(s) * s;
  auto fg = MakeOrDie({x, y}, {out});
  EXPECT_NE(fg->inputs()[0].get(), x.ptr().get());
  EXPECT_EQ(fg->inputs()[0]->name(), "x");
  EXPECT_EQ(fg->num_nodes(), 3);
  const Variable* fs = fg->outputs()[0]->owner()->inputs()[1].get();  // the cloned s
  EXPECT_EQ(fg->clients(fs).size(), 2u);
  EXPECT_EQ(fg->clients(fg->outputs()[0].get()),
            (std::vector<FunctionGraph::Client>{{nullptr, 0}}));
  EXPECT_TRUE(fg->CheckIntegrity().ok());
  EXPECT_EQ(fg->Toposort().size(), 3u);
}

TEST(FunctionGraphTest, ReplaceRewiresAndPrunes) {
  Var x = dvector("x"), y = dvector("y");
  Var s = x + y;
  Var out = exp(s) * 2.0;
  auto fg = MakeOrDie({x, y}, {out});
  Variable* fs = fg->outputs()[0]->owner()->inputs()[0]->owner()->inputs()[0].get();
  ASSERT_EQ(fs->ToString(), "Elemwise{add,no_inplace}.0");
  // Replace x + y by x * y: the add node is dropped, the mul node imported.
  Var prod = Var(fg->inputs()[0]) * Var(fg->inputs()[1]);
  ASSERT_TRUE(fg->Replace(fs, prod.ptr(), "test").ok());
  EXPECT_TRUE(fg->CheckIntegrity().ok()) << fg->CheckIntegrity();
  EXPECT_EQ(fg->num_nodes(), 4);  // mul(x, y), exp, DimShuffle, mul by 2
  EXPECT_EQ(fg->clients(fg->inputs()[0].get()).size(), 1u);
  // The user's graph is untouched.
  EXPECT_EQ(DebugPrint({out}),
            "Elemwise{mul,no_inplace} [id A]\n"
            " |Elemwise{exp,no_inplace} [id B]\n"
            " | |Elemwise{add,no_inplace} [id C]\n"
            " |   |x [id D]\n"
            " |   |y [id E]\n"
            " |InplaceDimShuffle{x} [id F]\n"
            "   |TensorConstant{2.0} [id G]\n");
}

TEST(FunctionGraphTest, ReplaceAnOutputWithAnExpressionOfItself) {
  Var x = dvector("x");
  auto fg = MakeOrDie({x}, {exp(x)});
  Variable* old_out = fg->outputs()[0].get();
  Var wrapped = log(Var(fg->outputs()[0]));
  ASSERT_TRUE(fg->Replace(old_out, wrapped.ptr()).ok());
  EXPECT_EQ(fg->outputs()[0].get(), wrapped.ptr().get());
  EXPECT_EQ(fg->num_nodes(), 2);
  EXPECT_TRUE(fg->CheckIntegrity().ok()) << fg->CheckIntegrity();
}

TEST(FunctionGraphTest, ReplaceAConstantInputDropsIt) {
  Var x = dvector("x");
  auto fg = MakeOrDie({x}, {x * 2.0});
  Apply* mul = fg->outputs()[0]->owner();
  Variable* ds_out = mul->inputs()[1].get();  // InplaceDimShuffle{x}(TensorConstant{2.0})
  const Variable* two = ds_out->owner()->inputs()[0].get();
  Var three = constant(3.0);
  ASSERT_TRUE(fg->Replace(const_cast<Variable*>(two), three.ptr()).ok());
  EXPECT_TRUE(fg->clients(two).empty());
  EXPECT_TRUE(fg->CheckIntegrity().ok()) << fg->CheckIntegrity();
  EXPECT_EQ(fg->clients(three.ptr().get()).size(), 1u);
}

TEST(FunctionGraphTest, ReplaceChecksTypes) {
  Var x = dvector("x");
  auto fg = MakeOrDie({x}, {exp(x)});
  absl::Status s = fg->Replace(fg->outputs()[0].get(), fvector("f").ptr(), "my_rule");
  EXPECT_EQ(s.message(),
            "replace (my_rule): the replacement f has type TensorType(float32, (?,)) but "
            "Elemwise{exp,no_inplace}.0 has type TensorType(float64, (?,))");
}

TEST(FunctionGraphTest, MissingInputsAndConstantInputs) {
  Var x = dvector("x"), y = dvector("y");
  auto fg = FunctionGraph::Make({x.ptr()}, {(x + y).ptr()});
  EXPECT_EQ(fg.status().message(),
            "MissingInputError: Input 1 (y) of the graph (indices start from 0), used to compute "
            "Elemwise{add,no_inplace}(x, y), was not provided and not given a value.");
  Var c = constant(1.0);
  fg = FunctionGraph::Make({c.ptr()}, {(x + c).ptr()});
  EXPECT_EQ(fg.status().message(),
            "input 0 (TensorConstant{1.0}) is a Constant; constants are not function inputs, "
            "their value is in the graph");
  fg = FunctionGraph::Make({x.ptr(), x.ptr()}, {x.ptr()});
  EXPECT_EQ(fg.status().message(), "input 1 (x) is given more than once");
}

}  // namespace
}  // namespace kiln
