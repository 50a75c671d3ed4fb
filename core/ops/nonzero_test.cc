// Nonzero against numpy.nonzero: floats (NaN included), integers and bools, C order over 2 and 3
// dims, empty results, the shape it infers, and its refusals.
#include "core/ops/nonzero.h"

#include <cmath>

#include "core/kiln.h"
#include "gtest/gtest.h"
#include "tests/testing/eval.h"

namespace kiln {
namespace {

TEST(NonzeroTest, CoordinatesInCOrder) {
  const Var a = dmatrix("a");
  const Tensor v = *Tensor::Of<double>(DType::kFloat64, {2, 3}, {0, 1.5, 0, NAN, 0, -2});
  std::vector<Var> rows = nonzero(a);
  ASSERT_EQ(rows.size(), 2u);
  std::vector<Tensor> got = testing::Eval({a}, rows, {v});
  ASSERT_EQ(got.size(), 2u);
  // numpy.nonzero([[0, 1.5, 0], [nan, 0, -2]]) == ([0, 1, 1], [1, 0, 2])
  EXPECT_EQ(got[0].ToString(), "[0 1 1]");
  EXPECT_EQ(got[1].ToString(), "[1 0 2]");
  // The inferred shape is the count, without running the op.
  const Var n = shape_i(rows[0], 0);
  EXPECT_EQ(testing::Eval({a}, {n}, {v})[0].ToString(), "3");
  const Var b = bvector("b");
  got = testing::Eval({b}, {nonzero(b)[0]}, {*Tensor::Of<bool>(DType::kBool, {3}, {0, 0, 0})});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape(), (Shape{0}));
}

TEST(NonzeroTest, IntegersOverThreeDims) {
  const Var a = tensor(DType::kInt8, {2, 2, 2}, "a");
  const Tensor v =
      Tensor::Of<int64_t>(DType::kInt64, {2, 2, 2}, {0, -3, 0, 0, 7, 0, 0, 1})->AsType(DType::kInt8);
  std::vector<Tensor> got = testing::Eval({a}, nonzero(a), {v});
  ASSERT_EQ(got.size(), 3u);
  // numpy.nonzero(...) == ([0, 1, 1], [0, 0, 1], [1, 0, 1])
  EXPECT_EQ(got[0].ToString(), "[0 1 1]");
  EXPECT_EQ(got[1].ToString(), "[0 0 1]");
  EXPECT_EQ(got[2].ToString(), "[1 0 1]");
}

TEST(NonzeroTest, RefusesScalarsAndHasNoGradient) {
  EXPECT_EQ(nonzero(dscalar("s"))[0].status().message(),
            "Nonzero: input 0 has type TensorType(float64, ()) but nonzero needs at least one "
            "dim");
  const Var x = dvector("x");
  // sum(x[x > 0]): the gradient flows through the values, not the mask.
  const Var picked = take(x, nonzero(gt(x, constant(0.0)))[0]);
  const Var g = grad(sum(picked * picked), x);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(testing::Eval({x}, {g}, {*Tensor::Of<double>(DType::kFloat64, {3}, {-1, 2, 3})})[0]
                .ToString(),
            "[0. 4. 6.]");
}

}  // namespace
}  // namespace kiln
