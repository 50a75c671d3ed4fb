#include "proto/convert/tensor_convert.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(TensorConvertTest, DTypesRoundTrip) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType d = static_cast<DType>(i);
    EXPECT_EQ(*FromProto(ToProto(d)), d);
  }
  EXPECT_EQ(ToProto(DType::kFloat64), v1::DTYPE_FLOAT64);
  EXPECT_EQ(FromProto(v1::DTYPE_UNSPECIFIED).status().message(), "unknown dtype 0");
  EXPECT_EQ(FromProto(static_cast<v1::DType>(99)).status().message(), "unknown dtype 99");
}

TEST(TensorConvertTest, TensorTypesRoundTrip) {
  TensorType t(DType::kInt32, {1, std::nullopt});
  auto back = FromProto(ToProto(t));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE((*back)->Equals(t));
  v1::TensorType bad = ToProto(t);
  bad.mutable_shape(0)->set_size(-4);
  EXPECT_EQ(FromProto(bad).status().message(), "tensor type: dim 0 has negative size -4");
}

TEST(TensorConvertTest, TypesAreBoundedInElementsNotBytes) {
  // A float64 type of 2^46 elements (the gradient of an int8 input that size) is a valid type:
  // only its values would be over the limit.
  const int64_t n = int64_t{1} << 46;
  TensorType big(DType::kFloat64, {n});
  auto back = FromProto(ToProto(big));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE((*back)->Equals(big));
  EXPECT_EQ(FromProto(ToProto(TensorType(DType::kFloat64, {n, 2}))).status().message(),
            "tensor type: shape (70368744177664, 2) has more than 70368744177664 elements");
}

TEST(TensorConvertTest, TensorsRoundTripIncludingViews) {
  Tensor t = *Tensor::Of<double>(DType::kFloat64, {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor transposed = t.View({3, 2}, {1, 3});
  v1::Tensor msg = ToProto(transposed);
  EXPECT_EQ(msg.data().size(), 48u);
  auto back = FromProto(msg);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->BitwiseEquals(transposed));
}

TEST(TensorConvertTest, UntrustedTensorsAreValidated) {
  v1::Tensor msg = ToProto(*Tensor::Of<double>(DType::kFloat32, {2}, {1, 2}));
  msg.set_data(msg.data() + "x");
  EXPECT_EQ(FromProto(msg).status().message(),
            "tensor: float32 data of shape (2,) needs 8 bytes but 9 were given");
  msg.clear_shape();
  msg.add_shape(-1);
  EXPECT_EQ(FromProto(msg).status().message(), "tensor: negative dimension in shape (-1,)");
  msg.clear_shape();
  for (int i = 0; i < 4; ++i) msg.add_shape(int64_t{1} << 20);
  EXPECT_EQ(FromProto(msg, 1 << 30).status().message(),
            "tensor: shape (1048576, 1048576, 1048576, 1048576) needs more than 70368744177664 "
            "bytes");
  // A zero dim does not let later dims grow without bound.
  msg.clear_shape();
  for (int64_t d : {int64_t{0}, int64_t{1} << 62, int64_t{1} << 62}) msg.add_shape(d);
  EXPECT_EQ(FromProto(msg).status().message(),
            "tensor: dimension 4611686018427387904 of shape (0, 4611686018427387904, "
            "4611686018427387904) is too large");
  msg.clear_shape();
  msg.add_shape(1 << 20);
  msg.add_shape(1 << 20);
  EXPECT_EQ(FromProto(msg, 1 << 30).status().message(), "tensor: more than 1073741824 bytes");
  v1::Tensor flags = ToProto(*Tensor::Of<bool>(DType::kBool, {2}, {true, false}));
  (*flags.mutable_data())[1] = 7;
  EXPECT_EQ(FromProto(flags).status().message(), "tensor: bool element 1 is neither 0 nor 1");
}

}  // namespace
}  // namespace kiln
