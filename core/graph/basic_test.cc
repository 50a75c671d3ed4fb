#include "core/graph/basic.h"

#include <gtest/gtest.h>

#include "core/kiln.h"

namespace kiln {
namespace {

TEST(VariableTest, PrintsAsAesara) {
  Var x = dmatrix("x");
  EXPECT_EQ(x->ToString(), "x");
  EXPECT_EQ(dmatrix()->ToString(), "<TensorType(float64, (?, ?))>");
  Var y = x * 2.0;
  EXPECT_EQ(y->ToString(), "Elemwise{mul,no_inplace}.0");
  y->set_name("y");
  EXPECT_EQ(y->ToString(), "y");
  EXPECT_EQ(y->owner()->ToString(), "Elemwise{mul,no_inplace}(x, InplaceDimShuffle{x,x}.0)");
  EXPECT_EQ(y->index(), 0);
  EXPECT_EQ(x->owner(), nullptr);
}

TEST(ConstantTest, PrintsAsAesara) {
  EXPECT_EQ(constant(2.0)->ToString(), "TensorConstant{2.0}");
  EXPECT_EQ(constant(10)->ToString(), "TensorConstant{10}");
  EXPECT_EQ(constant(0.1)->ToString(), "TensorConstant{0.1}");
  EXPECT_EQ(constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {0, 1, 2}))->ToString(),
            "TensorConstant{[0 1 2]}");
  EXPECT_EQ(constant(*Tensor::Of<double>(DType::kFloat64, {1}, {1.0}))->ToString(),
            "TensorConstant{(1,) of 1.0}");
  EXPECT_EQ(constant(*Tensor::Of<int64_t>(DType::kInt64, {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}))
                ->ToString(),
            "TensorConstant{[0 1 2 3 4..5 6 7 8 9]}");
  EXPECT_EQ(constant(3.0, "three")->ToString(), "three");
  Var c = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {0, 1, 2}));
  EXPECT_EQ(c->type()->ToString(), "TensorType(int64, (3,))");
  EXPECT_TRUE(c->is_constant());
}

TEST(ApplyTest, OutputsKeepTheirNodeAlive) {
  VariablePtr out;
  {
    Var x = dvector("x");
    out = (exp(x)).ptr();
  }
  ASSERT_NE(out->owner(), nullptr);
  EXPECT_EQ(out->owner()->inputs()[0]->name(), "x");
  EXPECT_EQ(out->owner()->output_ptr(0), out.get());
}

TEST(VarTest, FailedVarsCarryTheirError) {
  Var none;
  EXPECT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  Var bad = tensor("nope", {});
  EXPECT_EQ((bad + 1.0).status(), bad.status());
  EXPECT_EQ(Unwrap(bad).status(), bad.status());
  EXPECT_EQ(DebugPrint({bad}), "<error: tensor: unknown dtype 'nope'>\n");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(ConstantTest, MakeCheckedRejectsDataThatDoesNotFitItsType) {
  const Tensor data = *Tensor::Of<double>(DType::kFloat64, {2}, {1, 2});
  EXPECT_TRUE(Constant::MakeChecked(TensorType::Make(DType::kFloat64, {std::nullopt}), data).ok());
  EXPECT_EQ(Constant::MakeChecked(TensorType::Make(DType::kFloat64, {3}), data).status().message(),
            "a value of dtype float64 and shape (2,) does not have type TensorType(float64, (3,))");
  EXPECT_FALSE(Constant::MakeChecked(TensorType::Make(DType::kFloat32, {2}), data).ok());
  EXPECT_FALSE(Constant::MakeChecked(TensorType::Make(DType::kFloat64, {2, 1}), data).ok());
}

}  // namespace
}  // namespace kiln
