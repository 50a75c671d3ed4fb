#include "core/text/dprint.h"

#include <gtest/gtest.h>

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
