#include "core/tensor/tensor.h"

#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_replace.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

TEST(TensorTest, BuffersAreAlignedAndContiguous) {
  Tensor t = Tensor::Zeros(DType::kFloat32, {3, 5});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(t.size(), 15);
  EXPECT_EQ(t.nbytes(), 60);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.data<float>()[14], 0.0f);
  Tensor empty = Tensor::Empty(DType::kInt8, {0, 4});
  EXPECT_EQ(empty.size(), 0);
}

TEST(TensorTest, FromValuesChecksTheCount) {
  absl::StatusOr<Tensor> t = Tensor::Of<double>(DType::kFloat64, {2, 2}, {1, 2, 3});
  EXPECT_EQ(t.status().message(), "shape (2, 2) needs 4 values but 3 were given");
}

TEST(TensorTest, ViewsShareTheBuffer) {
  Tensor t = *Tensor::Of<int64_t>(DType::kInt64, {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor transposed = t.View({3, 2}, {1, 3});
  EXPECT_TRUE(transposed.SharesBufferWith(t));
  EXPECT_FALSE(transposed.is_contiguous());
  EXPECT_EQ(transposed.ToString(), "[[0 3]\n [1 4]\n [2 5]]");
  Tensor row = t.View({3}, {1}, 3);
  EXPECT_EQ(row.ToString(), "[3 4 5]");
  Tensor copy = transposed.Contiguous();
  EXPECT_FALSE(copy.SharesBufferWith(t));
  EXPECT_TRUE(copy.is_contiguous());
  EXPECT_EQ(copy.ElementAsDouble(1), 3.0);
}

TEST(TensorTest, AsTypeConvertsLikeNumPy) {
  Tensor t = *Tensor::Of<double>(DType::kFloat64, {4}, {-1.7, 0.0, 2.9, 300.0});
  EXPECT_EQ(t.AsType(DType::kInt32).ToString(), "[ -1   0   2 300]");
  EXPECT_EQ(t.AsType(DType::kBool).ToString(), "[ True False  True  True]");
  EXPECT_EQ(t.AsType(DType::kComplex128).AsType(DType::kFloat32).ToString(),
            "[ -1.7   0.    2.9 300. ]");
}

TEST(TensorTest, BitwiseEqualsComparesBits) {
  Tensor nan1 = *Tensor::Of<double>(DType::kFloat64, {1}, {NAN});
  Tensor nan2 = *Tensor::Of<double>(DType::kFloat64, {1}, {NAN});
  Tensor zero = *Tensor::Of<double>(DType::kFloat64, {1}, {0.0});
  Tensor negzero = *Tensor::Of<double>(DType::kFloat64, {1}, {-0.0});
  EXPECT_TRUE(nan1.BitwiseEquals(nan2));
  EXPECT_FALSE(zero.BitwiseEquals(negzero));
  EXPECT_FALSE(zero.BitwiseEquals(zero.AsType(DType::kFloat32)));
}

// str(ndarray) for each case of tests/golden/numpy_format.txt.
TEST(TensorTest, ToStringMatchesNumPy) {
  for (const auto& c : testing::ReadCases("tests/golden/numpy_format.txt")) {
    ASSERT_EQ(c.size(), 4u);
    Tensor t = testing::MakeTensor(c[0], c[1], c[2]);
    EXPECT_EQ(t.ToString(), absl::StrReplaceAll(c[3], {{"\\n", "\n"}}))
        << c[0] << " " << c[1] << " " << c[2];
  }
}

// Raw bytes from outside: the count must fit the shape and a bool must be 0 or 1.
TEST(TensorTest, FromBytesChecksCountAndBools) {
  auto ok = Tensor::FromBytes(DType::kBool, {3}, std::string("\x01\x00\x01", 3));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->ToString(), "[ True False  True]");
  EXPECT_EQ(Tensor::FromBytes(DType::kBool, {3}, std::string("\x01\x02\x01", 3), "argument 0")
                .status()
                .message(),
            "argument 0: bool element 1 is neither 0 nor 1");
  EXPECT_EQ(Tensor::FromBytes(DType::kFloat64, {2}, std::string(15, '\0')).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
