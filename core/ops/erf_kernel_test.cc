// The vector erf kernel against correctly rounded values (tests/golden/erf_reference.txt).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/ops/sleef_kernels.h"
#include "gtest/gtest.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

// Distance in units in the last place between two finite doubles of the same sign.
int64_t UlpDistance(double a, double b) {
  int64_t ia, ib;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  return ia > ib ? ia - ib : ib - ia;
}

TEST(ErfKernelTest, WithinOneUlpOfCorrectlyRounded) {
  std::vector<double> x, expected;
  for (const auto& c : testing::ReadCases("tests/golden/erf_reference.txt")) {
    x.push_back(std::strtod(c[0].c_str(), nullptr));
    expected.push_back(std::strtod(c[1].c_str(), nullptr));
  }
  ASSERT_GT(x.size(), 2000u);
  std::vector<double> y(x.size());
  ASSERT_TRUE(sleef::Map(ScalarOpKind::kErf, x.data(), y.data(), static_cast<int64_t>(x.size())));
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t ulps = UlpDistance(y[i], expected[i]);
    EXPECT_LE(ulps, 1) << "erf(" << x[i] << ") = " << y[i] << ", expected " << expected[i];
    worst = std::max(worst, ulps);
  }
  std::printf("erf on %s: worst %lld ULP over %zu points\n", sleef::IsaName(),
              static_cast<long long>(worst), x.size());
}

TEST(ErfKernelTest, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {0.0, -0.0, inf, -inf, std::nan(""), 6.0, -7.5, 1e300, 5e-324};
  std::vector<double> y(x.size());
  ASSERT_TRUE(sleef::Map(ScalarOpKind::kErf, x.data(), y.data(), static_cast<int64_t>(x.size())));
  EXPECT_EQ(y[0], 0.0);
  EXPECT_FALSE(std::signbit(y[0]));
  EXPECT_EQ(y[1], 0.0);
  EXPECT_TRUE(std::signbit(y[1]));
  EXPECT_EQ(y[2], 1.0);
  EXPECT_EQ(y[3], -1.0);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], 1.0);
  EXPECT_EQ(y[6], -1.0);
  EXPECT_EQ(y[7], 1.0);
  EXPECT_EQ(y[8], std::erf(5e-324));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// log1p (Kiln's AVX-512 form, else SLEEF's) against glibc's log1p over magnitudes from 1e-300
// to 1e300 and down to -1.
TEST(Log1pKernelTest, WithinTwoUlpOfLibm) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> exponent(-300, 300), unit(-1, 0);
  std::vector<double> x;
  for (int i = 0; i < 20000; ++i) x.push_back(std::pow(10.0, exponent(rng)));
  for (int i = 0; i < 20000; ++i) x.push_back(-std::pow(10.0, -std::fabs(exponent(rng))));
  for (int i = 0; i < 5000; ++i) x.push_back(unit(rng));
  std::vector<double> y(x.size());
  ASSERT_TRUE(sleef::Map(ScalarOpKind::kLog1p, x.data(), y.data(), static_cast<int64_t>(x.size())));
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t ulps = UlpDistance(y[i], std::log1p(x[i]));
    EXPECT_LE(ulps, 2) << "log1p(" << x[i] << ") = " << y[i] << " vs " << std::log1p(x[i]);
    worst = std::max(worst, ulps);
  }
  std::printf("log1p on %s: worst %lld ULP from libm over %zu points\n", sleef::IsaName(),
              static_cast<long long>(worst), x.size());
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> s = {0.0, -0.0, -1.0, inf, -2.0, std::nan("")};
  std::vector<double> r(s.size());
  sleef::Map(ScalarOpKind::kLog1p, s.data(), r.data(), static_cast<int64_t>(s.size()));
  EXPECT_EQ(r[0], 0.0);
  EXPECT_FALSE(std::signbit(r[0]));
  EXPECT_TRUE(std::signbit(r[1]) && r[1] == 0.0);
  EXPECT_EQ(r[2], -inf);
  EXPECT_EQ(r[3], inf);
  EXPECT_TRUE(std::isnan(r[4]));
  EXPECT_TRUE(std::isnan(r[5]));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// tanh (SLEEF's, 3.5 ULP) against glibc's tanh from 1e-300 to 1e3, both signs, densely
// around 0.625, and its special values. (A Cephes-style rational with one exp measured 2 ULP
// but 20% slower than SLEEF's on AVX-512: two divisions.)
TEST(TanhKernelTest, WithinFourUlpOfLibm) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> exponent(-300, 3), near_switch(0.5, 0.75);
  std::vector<double> x;
  for (int i = 0; i < 20000; ++i) x.push_back(std::pow(10.0, exponent(rng)));
  for (int i = 0; i < 20000; ++i) x.push_back(near_switch(rng));
  for (int i = 0; i < 40000; ++i) x.push_back(-x[i]);
  std::vector<double> y(x.size());
  ASSERT_TRUE(sleef::Map(ScalarOpKind::kTanh, x.data(), y.data(), static_cast<int64_t>(x.size())));
  const int64_t bound = 4;
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t ulps = UlpDistance(y[i], std::tanh(x[i]));
    EXPECT_LE(ulps, bound) << "tanh(" << x[i] << ") = " << y[i];
    worst = std::max(worst, ulps);
  }
  std::printf("tanh on %s: worst %lld ULP over %zu points\n", sleef::IsaName(),
              static_cast<long long>(worst), x.size());
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> special = {0.0, -0.0, inf, -inf, std::nan(""), 5e-324, 800.0};
  std::vector<double> t(special.size());
  ASSERT_TRUE(sleef::Map(ScalarOpKind::kTanh, special.data(), t.data(),
                         static_cast<int64_t>(special.size())));
  EXPECT_EQ(t[0], 0.0);
  EXPECT_FALSE(std::signbit(t[0]));
  EXPECT_TRUE(std::signbit(t[1]));
  EXPECT_EQ(t[2], 1.0);
  EXPECT_EQ(t[3], -1.0);
  EXPECT_TRUE(std::isnan(t[4]));
  EXPECT_EQ(t[5], 5e-324);
  EXPECT_EQ(t[6], 1.0);
}

}  // namespace
}  // namespace kiln
