#include "core/graph/type.h"

#include <gtest/gtest.h>

#include "core/graph/constructors.h"

namespace kiln {
namespace {

TEST(TensorTypeTest, PrintsAsAesara) {
  EXPECT_EQ(TensorType(DType::kInt32, {1, std::nullopt}).ToString(), "TensorType(int32, (1, ?))");
  EXPECT_EQ(TensorType(DType::kFloat64, {std::nullopt}).ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(TensorType(DType::kFloat64, {}).ToString(), "TensorType(float64, ())");
  EXPECT_EQ(TensorType(DType::kUInt8, {2, 3, std::nullopt}).ToString(),
            "TensorType(uint8, (2, 3, ?))");
}

TEST(TensorTypeTest, BroadcastableIsStaticSizeOne) {
  TensorType t(DType::kFloat32, {1, std::nullopt, 3, 1});
  EXPECT_EQ(t.broadcastable(), (std::vector<bool>{true, false, false, true}));
  const bool pattern[] = {true, false};
  EXPECT_EQ(TensorType::FromBroadcastable(DType::kInt8, pattern)->ToString(),
            "TensorType(int8, (1, ?))");
}

TEST(TensorTypeTest, EqualityAndHash) {
  TensorType a(DType::kFloat64, {std::nullopt, 3});
  TensorType b(DType::kFloat64, {std::nullopt, 3});
  TensorType c(DType::kFloat32, {std::nullopt, 3});
  TensorType d(DType::kFloat64, {3, std::nullopt});
  EXPECT_TRUE(a.Equals(b));
  EXPECT_EQ(a.Hash(), b.Hash());
  EXPECT_FALSE(a.Equals(c));
  EXPECT_FALSE(a.Equals(d));
}

TEST(ConstructorsTest, PrefixesAndShapes) {
  EXPECT_EQ(irow()->type()->ToString(), "TensorType(int32, (1, ?))");
  EXPECT_EQ(dmatrix("x")->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(dmatrix("x")->name(), "x");
  EXPECT_EQ(bscalar()->type()->ToString(), "TensorType(int8, ())");
  EXPECT_EQ(wvector()->type()->ToString(), "TensorType(int16, (?,))");
  EXPECT_EQ(lcol()->type()->ToString(), "TensorType(int64, (?, 1))");
  EXPECT_EQ(ftensor3()->type()->ToString(), "TensorType(float32, (?, ?, ?))");
  EXPECT_EQ(ctensor4()->type()->ToString(), "TensorType(complex64, (?, ?, ?, ?))");
  EXPECT_EQ(ztensor7()->type()->ToString(), "TensorType(complex128, (?, ?, ?, ?, ?, ?, ?))");
  EXPECT_EQ(matrix()->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(tensor(DType::kUInt16, {2, kUnknownDim}, "u")->type()->ToString(),
            "TensorType(uint16, (2, ?))");
  EXPECT_EQ(tensor("bool", {})->type()->ToString(), "TensorType(bool, ())");
}

TEST(ConstructorsTest, BadArgumentsAreErrors) {
  EXPECT_EQ(tensor("float128", {}).status().message(), "tensor: unknown dtype 'float128'");
  EXPECT_EQ(tensor(DType::kFloat64, {-1}).status().message(),
            "tensor: static shape (-1,) has a negative dimension");
}

TEST(ConstructorsTest, LiteralsFollowAesaraAutocast) {
  auto dtype_of = [](const Var& v) { return DTypeName(v.dtype()); };
  EXPECT_EQ(dtype_of(constant(2.0)), "float32");
  EXPECT_EQ(dtype_of(constant(0.5)), "float32");
  EXPECT_EQ(dtype_of(constant(0.1)), "float64");
  EXPECT_EQ(dtype_of(constant(1e100)), "float64");
  EXPECT_EQ(dtype_of(constant(std::nan(""))), "float64");
  EXPECT_EQ(dtype_of(constant(INFINITY * 1.0)), "float32");
  EXPECT_EQ(dtype_of(constant(2.0f)), "float32");
  EXPECT_EQ(dtype_of(constant(2)), "int8");
  EXPECT_EQ(dtype_of(constant(-128)), "int8");
  EXPECT_EQ(dtype_of(constant(-129)), "int16");
  EXPECT_EQ(dtype_of(constant(300)), "int16");
  EXPECT_EQ(dtype_of(constant(70000)), "int32");
  EXPECT_EQ(dtype_of(constant(int64_t{1} << 40)), "int64");
  EXPECT_EQ(dtype_of(constant(true)), "bool");
}

}  // namespace
}  // namespace kiln
