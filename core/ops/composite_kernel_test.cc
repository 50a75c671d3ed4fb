#include "core/ops/composite_kernel.h"

#include <gtest/gtest.h>

#include "core/kiln.h"

namespace kiln {
namespace {

// Enough elements for several blocks on every thread, and a partial last block.
constexpr int64_t kN = 100003;

Tensor Ramp(double scale) {
  Tensor t = Tensor::Empty(DType::kFloat64, {kN});
  for (int64_t i = 0; i < kN; ++i) t.data<double>()[i] = scale * static_cast<double>(i % 977);
  return t;
}

// Outputs of every kind: an instruction's result read again later, the last instruction's, an
// input passed through, and one register given twice. Each lands where it should, whether the
// instructions write outputs directly or through a block buffer.
TEST(CompositeKernelTest, EveryKindOfOutputGetsItsValues) {
  Var x = dscalar("x"), y = dscalar("y");
  Var t = x * y + 2.0;
  auto program = *ScalarProgram::FromGraph({x, y}, {t, t * x, x, t});
  const Tensor a = Ramp(0.5), b = Ramp(-0.25);
  for (bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "output 1 in x's buffer" : "fresh outputs");
    Tensor x_value = a.AsType(DType::kFloat64);  // a copy: the in-place case overwrites it
    std::vector<Tensor> outputs(4);
    if (in_place) outputs[1] = x_value;
    const std::vector<Tensor> inputs = {x_value, b};
    ASSERT_TRUE(RunFusedBlocks(*program, {kN}, inputs, outputs));
    for (int64_t i = 0; i < kN; ++i) {
      const double xi = a.data<double>()[i], yi = b.data<double>()[i];
      const double ti = xi * yi + 2.0;
      ASSERT_EQ(outputs[0].data<double>()[i], ti) << i;
      ASSERT_EQ(outputs[1].data<double>()[i], ti * xi) << i;
      ASSERT_EQ(outputs[2].data<double>()[i], xi) << i;
      ASSERT_EQ(outputs[3].data<double>()[i], ti) << i;
    }
  }
}

}  // namespace
}  // namespace kiln
