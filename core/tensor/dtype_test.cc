#include "core/tensor/dtype.h"

#include <gtest/gtest.h>

#include <sstream>

#include "tests/testing/golden.h"

namespace kiln {
namespace {

TEST(DTypeTest, NamesRoundTripAndSizes) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType d = static_cast<DType>(i);
    EXPECT_EQ(ParseDType(DTypeName(d)), d);
  }
  EXPECT_EQ(DTypeName(DType::kComplex128), "complex128");
  EXPECT_EQ(DTypeSize(DType::kComplex128), 16);
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2);
  EXPECT_EQ(DTypeSize(DType::kBool), 1);
  EXPECT_EQ(ParseDType("float128"), std::nullopt);
}

// Every pair of dtypes against numpy.promote_types and numpy.can_cast(..., 'safe'), recorded by
// tests/golden/gen_numpy_cases.py.
TEST(DTypeTest, PromotionMatchesNumPy) {
  std::istringstream table(testing::ReadSourceFile("tests/golden/numpy_dtype_promotion.txt"));
  std::string line;
  int pairs = 0;
  while (std::getline(table, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string a, b, promoted;
    int safe;
    fields >> a >> b >> promoted >> safe;
    const DType da = *ParseDType(a), db = *ParseDType(b);
    EXPECT_EQ(DTypeName(PromoteTypes(da, db)), promoted) << a << " + " << b;
    EXPECT_EQ(CanCastSafely(da, db), safe == 1) << a << " -> " << b;
    ++pairs;
  }
  EXPECT_EQ(pairs, kNumDTypes * kNumDTypes);
}

TEST(DTypeTest, UpgradeToFloatFollowsAesara) {
  EXPECT_EQ(UpgradeToFloat(DType::kBool), DType::kFloat32);
  EXPECT_EQ(UpgradeToFloat(DType::kInt8), DType::kFloat32);
  EXPECT_EQ(UpgradeToFloat(DType::kUInt16), DType::kFloat32);
  EXPECT_EQ(UpgradeToFloat(DType::kInt32), DType::kFloat64);
  EXPECT_EQ(UpgradeToFloat(DType::kUInt64), DType::kFloat64);
  EXPECT_EQ(UpgradeToFloat(DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(UpgradeToFloat(DType::kComplex64), DType::kComplex64);
}

}  // namespace
}  // namespace kiln
