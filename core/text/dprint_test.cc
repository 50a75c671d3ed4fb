#include "core/text/dprint.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/kiln.h"

namespace kiln {
namespace {

TEST(DprintTest, CharIdsAreBase26) {
  EXPECT_EQ(CharId(0), "A");
  EXPECT_EQ(CharId(25), "Z");
  EXPECT_EQ(CharId(26), "BA");
  EXPECT_EQ(CharId(27), "BB");
  EXPECT_EQ(CharId(26 * 26), "BAA");
}

TEST(DprintTest, SharedNodesPrintOnceWithTheirId) {
  Var x = dvector("x"), y = dvector("y");
  Var s = x + y;
  Var out = exp(s) * s;
  EXPECT_EQ(DebugPrint({out}),
            "Elemwise{mul,no_inplace} [id A]\n"
            " |Elemwise{exp,no_inplace} [id B]\n"
            " | |Elemwise{add,no_inplace} [id C]\n"
            " |   |x [id D]\n"
            " |   |y [id E]\n"
            " |Elemwise{add,no_inplace} [id C]\n");
}

// A subtree nested deeper than max_nesting continues as a block of its own, so that a deep chain
// prints in text linear in its length.
TEST(DprintTest, DeepSubtreesContinueBelow) {
  Var x = dvector("x");
  Var out = exp(tanh(sin(x)));
  EXPECT_EQ(DebugPrint({out}, {.max_nesting = 1}),
            "Elemwise{exp,no_inplace} [id A]\n"
            " |Elemwise{tanh,no_inplace} [id B] ...\n"
            "Elemwise{tanh,no_inplace} [id B]\n"
            " |Elemwise{sin,no_inplace} [id C] ...\n"
            "Elemwise{sin,no_inplace} [id C]\n"
            " |x [id D]\n");
  EXPECT_EQ(DebugPrint({out}, {.max_nesting = 3}), DebugPrint({out}, {.max_nesting = -1}));
  Var y = x;
  for (int i = 0; i < 100000; ++i) y = tanh(y);
  const std::string text = DebugPrint({y});
  EXPECT_LT(text.size(), 100000u * 250);  // uncut, the indentation alone would be 10^10 bytes
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 100001 + 999);  // 999 cuts
}

TEST(DprintTest, OptionsTypesIdsDepthAndNames) {
  Var x = dvector("x");
  Var e = exp(x);
  e->set_name("e");
  Var out = -e;
  EXPECT_EQ(DebugPrint({out}, {.print_type = true}),
            "Elemwise{neg,no_inplace} [id A] <TensorType(float64, (?,))>\n"
            " |Elemwise{exp,no_inplace} [id B] <TensorType(float64, (?,))> 'e'\n"
            "   |x [id C] <TensorType(float64, (?,))>\n");
  EXPECT_EQ(DebugPrint({out}, {.ids = DprintIds::kInt}),
            "Elemwise{neg,no_inplace} [id 0]\n"
            " |Elemwise{exp,no_inplace} [id 1] 'e'\n"
            "   |x [id 2]\n");
  EXPECT_EQ(DebugPrint({out}, {.ids = DprintIds::kNone, .depth = 2}),
            "Elemwise{neg,no_inplace}\n"
            " |Elemwise{exp,no_inplace} 'e'\n");
  EXPECT_EQ(DebugPrint({out}, {.stop_on_name = true}),
            "Elemwise{neg,no_inplace} [id A]\n"
            " |Elemwise{exp,no_inplace} [id B] 'e'\n");
}

TEST(DprintTest, SeveralOutputsShareIds) {
  Var x = dvector("x");
  Var e = exp(x);
  EXPECT_EQ(DebugPrint({e, log(e)}),
            "Elemwise{exp,no_inplace} [id A]\n"
            " |x [id B]\n"
            "Elemwise{log,no_inplace} [id C]\n"
            " |Elemwise{exp,no_inplace} [id A]\n");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A compiled function's dprint numbers each node by Aesara's io_toposort (the numbers of the
// shapes page of Aesara's documentation): a node's last input is computed first.
TEST(DprintTest, PrintOrderNumbersNodesAsAesarasToposort) {
  Var x = dmatrix("x"), y = dmatrix("y");
  Var shape = make_vector({shape_i(x, 0) + shape_i(y, 0), shape_i(x, 1)});
  EXPECT_EQ(DebugPrint({shape}, {.print_order = true}),
            "MakeVector{dtype='int64'} [id A] 4\n"
            " |Elemwise{add,no_inplace} [id B] 3\n"
            " | |Shape_i{0} [id C] 2\n"
            " | | |x [id D]\n"
            " | |Shape_i{0} [id E] 1\n"
            " |   |y [id F]\n"
            " |Shape_i{1} [id G] 0\n"
            "   |x [id D]\n");
}

}  // namespace
}  // namespace kiln
