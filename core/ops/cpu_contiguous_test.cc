#include "core/ops/cpu_contiguous.h"

#include <gtest/gtest.h>

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

// A transposed (non-contiguous) input comes back C-contiguous with x.T's values (NumPy's
// ascontiguousarray); a contiguous one comes back as it is; the inferred shape is x's.
TEST(CpuContiguousTest, CopiesOnlyWhatIsNotContiguous) {
  const Var x = dmatrix("x");
  const Var y = cpu_contiguous(dimshuffle(x, {1, 0}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->owner()->op().Name(), "CpuContiguous");
  EXPECT_EQ(y->type()->ToString(), "TensorType(float64, (?, ?))");
  absl::StatusOr<ShapeVars> dims = infer_shape(y);
  ASSERT_TRUE(dims.ok()) << dims.status();
  auto f = function({x}, {y, cpu_contiguous(x), Var((*dims)[0]), Var((*dims)[1])},
                    {.mode = OptimizerMode::kNone});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor xv = testing::MakeTensor("float64", "2x3", "1,2,3,4,5,6");
  auto r = (*f)({xv});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE((*r)[0].is_contiguous());
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(testing::Elements((*r)[0]), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(testing::Elements((*r)[1]), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(testing::Elements((*r)[2]), (std::vector<double>{3}));
  EXPECT_EQ(testing::Elements((*r)[3]), (std::vector<double>{2}));
  absl::StatusOr<OpPtr> again = MakeOp("CpuContiguous", {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == y->owner()->op());
}

TEST(CpuContiguousTest, GradientIsTheOutputGradient) {
  const Tensor xv = testing::MakeTensor("float64", "2x3", "0.5,-1.0,2.0,3.5,0.25,-2.0");
  EXPECT_TRUE(verify_grad(
                  [](const std::vector<Var>& in) {
                    return cpu_contiguous(dimshuffle(in[0], {1, 0})) * 3.0;
                  },
                  {xv})
                  .ok());
}

TEST(CpuContiguousTest, Errors) {
  EXPECT_EQ(
      ApplyOp(std::make_shared<CpuContiguous>(), {dvector("a"), dvector("b")}).status().message(),
      "CpuContiguous: expects 1 input (x), got 2");
}

}  // namespace
}  // namespace kiln
