#include "core/tensor/tensor.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <vector>

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

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return {t.data<T>(), t.data<T>() + t.size()};
}

// NaN, infinities and reals out of an integer type's range convert as NumPy 1.24 on x86 does
// (values printed by numpy's astype), not as undefined behaviour.
TEST(TensorTest, AsTypeOfRealsOutOfRangeMatchesNumPyOnX86) {
  const Tensor t = *Tensor::Of<double>(
      DType::kFloat64, {9},
      {-6.25, 3e9, -3e9, 1e19, -1e19, NAN, INFINITY, 70000.5, 9223372036854779904.0});
  constexpr int32_t kMin32 = INT32_MIN;
  constexpr int64_t kMin64 = INT64_MIN;
  EXPECT_EQ(Values<int8_t>(t.AsType(DType::kInt8)),
            (std::vector<int8_t>{-6, 0, 0, 0, 0, 0, 0, 112, 0}));
  EXPECT_EQ(Values<uint16_t>(t.AsType(DType::kUInt16)),
            (std::vector<uint16_t>{65530, 0, 0, 0, 0, 0, 0, 4464, 0}));
  EXPECT_EQ(
      Values<int32_t>(t.AsType(DType::kInt32)),
      (std::vector<int32_t>{-6, kMin32, kMin32, kMin32, kMin32, kMin32, kMin32, 70000, kMin32}));
  EXPECT_EQ(Values<int64_t>(t.AsType(DType::kInt64)),
            (std::vector<int64_t>{-6, 3000000000, -3000000000, kMin64, kMin64, kMin64, kMin64,
                                  70000, kMin64}));
  EXPECT_EQ(Values<uint32_t>(t.AsType(DType::kUInt32)),
            (std::vector<uint32_t>{4294967290u, 3000000000u, 2147483648u, 0, 2147483648u,
                                   2147483648u, 0, 70000, 0}));
  EXPECT_EQ(Values<uint64_t>(t.AsType(DType::kUInt64)),
            (std::vector<uint64_t>{18446744073709551610u, 3000000000, 18446744070709551616u,
                                   10000000000000000000u, 9223372036854775808u,
                                   9223372036854775808u, 0, 70000, 9223372036854779904u}));
  // float32 converts through the same rule.
  EXPECT_EQ(Values<int16_t>(t.AsType(DType::kFloat32).AsType(DType::kInt16)),
            (std::vector<int16_t>{-6, 0, 0, 0, 0, 0, 0, 4464, 0}));
  // Unsigned 64-bit values print unsigned, as NumPy's.
  EXPECT_EQ(t.AsType(DType::kUInt64).View({2}, {1}).ToString(),
            "[18446744073709551610           3000000000]");
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

namespace kiln {
namespace {

// Copies of strided views (transposed, reversed, broadcast, sliced, with dims of 1) read each
// element where its strides say, into C order, converted or not.
TEST(TensorTest, CopiesOfStridedViewsReadEveryElement) {
  Tensor base = Tensor::Empty(DType::kFloat32, {4, 3, 5});
  for (int64_t i = 0; i < base.size(); ++i) base.data<float>()[i] = static_cast<float>(i);
  struct Case {
    Shape shape, strides;
    int64_t offset;
  };
  const std::vector<Case> cases = {
      {{3, 4, 5}, {5, 15, 1}, 0},       // the leading pair transposed: rows stay contiguous
      {{5, 3, 4}, {1, 5, 15}, 0},       // fully transposed
      {{4, 3, 5}, {15, 5, -1}, 4},      // the last dim reversed
      {{2, 3, 5, 2}, {30, 5, 1, 0}, 0}, // a broadcast dim, every other row
      {{4, 1, 2}, {15, 7, 2}, 1},       // a dim of 1 and a step of 2
      {{1}, {0}, 7},                    // one element
  };
  for (const Case& c : cases) {
    const Tensor view = base.View(c.shape, c.strides, c.offset);
    for (DType to : {DType::kFloat32, DType::kFloat64}) {
      const Tensor copy = view.AsType(to);
      ASSERT_EQ(copy.shape(), c.shape);
      std::vector<int64_t> index(c.shape.size(), 0);
      for (int64_t flat = 0; flat < copy.size(); ++flat) {
        int64_t offset = c.offset;
        for (size_t d = 0; d < index.size(); ++d) offset += index[d] * c.strides[d];
        const double got = to == DType::kFloat32 ? copy.data<float>()[flat] : copy.data<double>()[flat];
        ASSERT_EQ(got, base.data<float>()[offset]) << "element " << flat;
        for (int d = static_cast<int>(index.size()) - 1; d >= 0 && ++index[d] == c.shape[d]; --d) {
          index[d] = 0;
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln
