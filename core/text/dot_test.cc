#include "core/text/dot.h"

#include <gtest/gtest.h>

#include "core/kiln.h"
#include "tests/testing/golden.h"

namespace kiln {
namespace {

// The seed's a + a**10 in pydotprint's conventions (golden file, reviewed by eye as a PNG).
TEST(DotTest, SeedGraphGolden) {
  Var a = vector("a");
  Var b = a + pow(a, 10);
  testing::ExpectGolden(ToDot({b}), "tests/golden/dot_seed.dot");
}

TEST(DotTest, NonCompactDrawsEveryVariable) {
  Var x = dmatrix("x");
  Var y = exp(x);
  const std::string dot = ToDot({y}, {.compact = false, .var_with_name_simple = true});
  EXPECT_EQ(dot,
            "digraph G {\n"
            "  \"apply0\" [label=\"Elemwise{exp,no_inplace}\", shape=ellipse, style=filled, "
            "fillcolor=\"#FFAABB\"];\n"
            "  \"var1\" [label=\"x\", shape=box, style=filled, fillcolor=\"green\"];\n"
            "  \"var1\" -> \"apply0\";\n"
            "  \"var2\" [label=\"TensorType(float64, (?, ?))\", shape=box, style=filled, "
            "fillcolor=\"blue\"];\n"
            "  \"apply0\" -> \"var2\";\n"
            "}\n");
}

}  // namespace
}  // namespace kiln
