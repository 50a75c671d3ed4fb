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

// A single integer or bool input (mean's gradient divides by a count) keeps the fused path and
// is read converted to float64, as the unfused kernel converts it; 2^53 + 1 rounds as AsType
// rounds it. A vector of integers or a complex scalar leaves the fused path.
TEST(CompositeKernelTest, SingleIntegerInputsAreReadAsTheProgramsFloats) {
  Var x = dscalar("x"), n = lscalar("n"), flag = tensor(DType::kBool, {}, "flag");
  auto program = *ScalarProgram::FromGraph({x, n, flag}, {x / n + flag});
  const Tensor a = Ramp(0.5);
  for (int64_t count : {int64_t{400}, (int64_t{1} << 53) + 1}) {
    SCOPED_TRACE(count);
    const Tensor count_value = *Tensor::Of<int64_t>(DType::kInt64, {1}, {count});
    const Tensor flag_value = *Tensor::Of<bool>(DType::kBool, {1}, {true});
    std::vector<Tensor> outputs(1);
    const std::vector<Tensor> inputs = {a, count_value, flag_value};
    ASSERT_TRUE(RunFusedBlocks(*program, {kN}, inputs, outputs));
    const double as_float = count_value.AsType(DType::kFloat64).data<double>()[0];
    for (int64_t i = 0; i < kN; ++i) {
      ASSERT_EQ(outputs[0].data<double>()[i], a.data<double>()[i] / as_float + 1.0) << i;
    }
  }
  std::vector<Tensor> outputs(1);
  const std::vector<Tensor> counts_per_element = {
      a, Tensor::Zeros(DType::kInt64, {kN}), *Tensor::Of<bool>(DType::kBool, {1}, {true})};
  EXPECT_FALSE(RunFusedBlocks(*program, {kN}, counts_per_element, outputs));
}

}  // namespace
}  // namespace kiln
