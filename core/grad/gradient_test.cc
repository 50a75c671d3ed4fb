// grad's semantics: options, disconnected and undefined cases, error messages.
#include "core/grad/gradient.h"

#include "core/grad/gradient_ops.h"
#include "core/graph/gradient_types.h"
#include "core/kiln.h"
#include "gtest/gtest.h"
#include "tests/testing/eval.h"

namespace kiln {
namespace {

TEST(GradTest, SquareOfScalar) {
  Var x = dscalar("x");
  Var g = grad(x * x, x);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(testing::Eval({x}, {g}, {*Tensor::Of<double>(DType::kFloat64, {}, {3.0})})[0].ToString(),
            "6.0");
}

}  // namespace
}  // namespace kiln
