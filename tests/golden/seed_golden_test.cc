// The seed document's examples (Aesara's "Graph Structures"), reproduced line for line. The
// expected transcript is tests/golden/seed.txt.
#include <gtest/gtest.h>

#include <sstream>

#include "core/kiln.h"
#include "tests/testing/golden.h"

namespace kiln {
namespace {

TEST(SeedGoldenTest, GraphStructures) {
  std::ostringstream out;
  // >>> x = aesara.tensor.dmatrix('x'); y = x * 2.
  Var x = dmatrix("x");
  Var y = x * 2.0;
  ASSERT_TRUE(y.ok()) << y.status();
  Apply* node = y->owner();
  const Var ds = node->inputs()[1];
  out << ">>> y.owner.op.name\n"
      << node->op().Name() << "\n"
      << ">>> len(y.owner.inputs)\n"
      << node->num_inputs() << "\n"
      << ">>> y.owner.inputs[0]\n"
      << node->inputs()[0]->ToString() << "\n"
      << ">>> y.owner.inputs[1]\n"
      << ds->ToString() << "\n"
      << ">>> y.owner.inputs[1].owner.op\n"
      << ds->owner()->op().Name() << "\n"
      << ">>> y.owner.inputs[1].owner.inputs\n[" << ds->owner()->inputs()[0]->ToString() << "]\n"
      << ">>> y.type\n"
      << y->type()->ToString() << "\n"
      << ">>> aesara.tensor.irow().type\n"
      << irow()->type()->ToString() << "\n"
      << ">>> aesara.dprint(y)\n"
      << DebugPrint({y}) << ">>> aesara.dprint(y, print_type=True)\n"
      << DebugPrint({y}, {.print_type = true});

  // >>> a = aesara.tensor.vector("a"); b = a + a ** 10; f = aesara.function([a], b)
  Var a = vector("a");
  Var b = a + pow(a, 10);
  auto f = function({a}, {b});
  ASSERT_TRUE(f.ok()) << f.status();
  auto result = (*f)({*Tensor::Of<double>(DType::kFloat64, {3}, {0, 1, 2})});
  ASSERT_TRUE(result.ok()) << result.status();
  out << ">>> aesara.dprint(b)\n"
      << DebugPrint({b}) << ">>> print(f([0, 1, 2]))\n"
      << (*result)[0].ToString() << "\n";

  testing::ExpectGolden(out.str(), "tests/golden/seed.txt");
  // The values themselves, independently of printing.
  EXPECT_EQ((*result)[0].ElementAsDouble(0), 0.0);
  EXPECT_EQ((*result)[0].ElementAsDouble(1), 2.0);
  EXPECT_EQ((*result)[0].ElementAsDouble(2), 1026.0);
  EXPECT_EQ(y->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(ds->owner()->inputs()[0]->type()->ToString(), "TensorType(float32, ())");
}

}  // namespace
}  // namespace kiln
