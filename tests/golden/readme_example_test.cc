// The C++ example of README.md, statement for statement, with its commented results checked.
#include <gtest/gtest.h>

#include <cmath>

#include "core/kiln.h"

namespace {

TEST(ReadmeExampleTest, StatementsGiveTheCommentedResults) {
  auto x = kiln::dmatrix("x");
  auto y = x * 2.0;
  EXPECT_EQ(y->owner()->op().Name(), "Elemwise{mul,no_inplace}");
  EXPECT_EQ(y->owner()->inputs()[1]->ToString(), "InplaceDimShuffle{x,x}.0");
  EXPECT_EQ(y->owner()->inputs()[1]->owner()->inputs()[0]->type()->ToString(),
            "TensorType(float32, ())");
  EXPECT_EQ(kiln::irow()->type()->ToString(), "TensorType(int32, (1, ?))");
  EXPECT_EQ(kiln::DebugPrint({y}),
            "Elemwise{mul,no_inplace} [id A]\n"
            " |x [id B]\n"
            " |InplaceDimShuffle{x,x} [id C]\n"
            "   |TensorConstant{2.0} [id D]\n");

  auto a = kiln::vector("a");
  auto f = kiln::function({a}, {a + kiln::pow(a, 10)});
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({*kiln::Tensor::Of<double>(kiln::DType::kFloat64, {3}, {0, 1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "[   0.    2. 1026.]");

  // The error example.
  auto bad = kiln::tensor(kiln::DType::kFloat64, {2, 4}) +
             kiln::tensor(kiln::DType::kFloat64, {kiln::kUnknownDim, 3});
  EXPECT_EQ(bad.status().message(),
            "Elemwise{add,no_inplace}: input 1 has type TensorType(float64, (?, 3)) but input 0 "
            "has TensorType(float64, (2, 4)): shapes (2, 4) and (?, 3) do not broadcast");
}

// The gradient example of README.md: d/dx sum(sigmoid(x) * x) = s + x s (1 - s).
TEST(ReadmeExampleTest, GradientExample) {
  kiln::Var x = kiln::dvector("x");
  kiln::Var cost = kiln::sum(kiln::sigmoid(x) * x);
  kiln::Var g = kiln::grad(cost, x);
  ASSERT_TRUE(g.ok()) << g.status();
  auto f = kiln::function({x}, {g});
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({*kiln::Tensor::Of<double>(kiln::DType::kFloat64, {2}, {0, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  const double s = 1 / (1 + std::exp(-2.0));
  EXPECT_EQ((*out)[0].ElementAsDouble(0), 0.5);
  EXPECT_NEAR((*out)[0].ElementAsDouble(1), s + 2 * s * (1 - s), 1e-15);
}

}  // namespace
