#include "core/ops/composite_kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"

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

// Inputs broadcast to the output (a column against a row, short and long rows, three dims,
// a transposed input of the output's shape) are gathered block by block: every element as the
// plain loop computes it, over several blocks and a partial last one.
TEST(CompositeKernelTest, BroadcastInputsAreGathered) {
  Var x = dscalar("x"), y = dscalar("y"), z = dscalar("z");
  auto program = *ScalarProgram::FromGraph({x, y, z}, {(x - y) * z + 0.5, x - y});
  struct Case {
    Shape out, a, b, c;
  };
  const std::vector<Case> cases = {
      {{1000, 3}, {1000, 1}, {1, 3}, {1, 3}},     // the mixture's column against rows
      {{700, 40}, {700, 1}, {1, 40}, {700, 40}},  // rows longer than a repeated window
      {{3, 1000}, {1, 1000}, {3, 1}, {1, 1}},     // a row against a column
      {{2, 3, 5}, {2, 1, 5}, {1, 3, 1}, {2, 3, 5}},
      {{16, 16}, {1, 16}, {16, 1}, {1, 1}},       // a window of the longest repeated row
      {{5}, {5}, {1}, {5}}};
  auto fill = [](const Shape& shape, double scale) {
    Tensor t = Tensor::Empty(DType::kFloat64, shape);
    for (int64_t i = 0; i < t.size(); ++i) t.data<double>()[i] = scale * ((i * 31) % 17 - 8);
    return t;
  };
  for (const Case& c : cases) {
    for (bool transposed_c : {false, true}) {
      SCOPED_TRACE(absl::StrCat(ShapeToString(c.out), transposed_c ? " c transposed" : ""));
      const Tensor a = fill(c.a, 0.5), b = fill(c.b, -0.25);
      Tensor cv = fill(c.c, 1.5);
      if (transposed_c && c.c.size() == 2 && c.c == c.out) {
        // The same shape, its elements laid out column by column.
        Tensor t = fill({c.out[1], c.out[0]}, 1.5);
        cv = t.View(c.out, {1, c.out[0]});
      }
      const std::vector<Tensor> inputs = {a, b, cv};
      std::vector<Tensor> outputs(2);
      ASSERT_TRUE(RunFusedBlocks(*program, c.out, inputs, outputs));
      // The element of t at the output's flat index i (broadcast dims read at 0).
      auto at = [&](const Tensor& t, int64_t i) {
        int64_t offset = 0;
        for (int d = static_cast<int>(c.out.size()) - 1; d >= 0; --d) {
          const int64_t k = i % c.out[d];
          i /= c.out[d];
          if (t.shape()[d] != 1) offset += k * t.strides()[d];
        }
        return t.data<double>()[offset];
      };
      for (int64_t i = 0; i < ShapeSize(c.out); ++i) {
        const double d = at(a, i) - at(b, i);
        ASSERT_EQ(outputs[0].data<double>()[i], d * at(cv, i) + 0.5) << i;
        ASSERT_EQ(outputs[1].data<double>()[i], d) << i;
      }
    }
  }
}

// A short call (one block, a buffer per register) writes its outputs only once every input is
// read: an output in its input's buffer, a broadcast input and a comparison's bool all land.
TEST(CompositeKernelTest, ShortCallsWriteOutputsAfterReadingInputs) {
  Var x = dscalar("x"), y = dscalar("y");
  Var t = x * y + 2.0;
  auto program = *ScalarProgram::FromGraph({x, y}, {t * x, x, lt(x, t), t});
  for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{64}}) {
    SCOPED_TRACE(n);
    Tensor x_value = Tensor::Empty(DType::kFloat64, {n, 1});
    for (int64_t i = 0; i < n; ++i) x_value.data<double>()[i] = 0.5 * static_cast<double>(i) - 3;
    const Tensor original = x_value.AsType(DType::kFloat32).AsType(DType::kFloat64);
    const Tensor y_row = *Tensor::FromValues<double>(DType::kFloat64, {1, 1},
                                                     std::vector<double>{-1.5});
    std::vector<Tensor> outputs(4);
    outputs[0] = x_value;  // in place over x
    const std::vector<Tensor> inputs = {x_value, y_row};
    ASSERT_TRUE(RunFusedBlocks(*program, {n, 1}, inputs, outputs));
    EXPECT_EQ(outputs[0].raw_data(), x_value.raw_data());
    for (int64_t i = 0; i < n; ++i) {
      const double xi = original.data<double>()[i], ti = xi * -1.5 + 2.0;
      ASSERT_EQ(outputs[0].data<double>()[i], ti * xi) << i;
      ASSERT_EQ(outputs[1].data<double>()[i], xi) << i;
      ASSERT_EQ(outputs[2].data<bool>()[i], xi < ti) << i;
      ASSERT_EQ(outputs[3].data<double>()[i], ti) << i;
    }
  }
}

// isnan and isinf run in the blocks as 0 / 1 (a switch reads them so) and as bool outputs:
// logsumexp's switch(isinf(m), m, log(s) + m) is fused.
TEST(CompositeKernelTest, IsNanAndIsInfRunInTheBlocks) {
  Var m = dscalar("m"), t = dscalar("t");
  auto program =
      *ScalarProgram::FromGraph({m, t}, {switch_(isinf(m), m, log(t) + m), isnan(t)});
  Tensor mv = Ramp(0.25), tv = Ramp(0.5);
  for (int64_t i = 0; i < kN; i += 97) {
    mv.data<double>()[i] = i % 2 ? INFINITY : -INFINITY;
    tv.data<double>()[i + 1] = NAN;
  }
  const std::vector<Tensor> inputs = {mv, tv};
  std::vector<Tensor> outputs(2);
  ASSERT_TRUE(RunFusedBlocks(*program, {kN}, inputs, outputs));
  ASSERT_EQ(outputs[1].dtype(), DType::kBool);
  for (int64_t i = 0; i < kN; ++i) {
    const double mi = mv.data<double>()[i], ti = tv.data<double>()[i];
    const double got = outputs[0].data<double>()[i];
    ASSERT_EQ(outputs[1].data<bool>()[i], std::isnan(ti)) << i;
    if (std::isinf(mi)) {
      ASSERT_EQ(got, mi) << i;
    } else if (std::isnan(ti) || ti == 0) {
      ASSERT_EQ(std::isnan(got), std::isnan(std::log(ti) + mi)) << i;
    } else {
      // SLEEF's log is within 3.5 ULP.
      ASSERT_NEAR(got, std::log(ti) + mi, 4e-15 * std::max(1.0, std::fabs(got))) << i;
    }
  }
}

// An output sharing memory with a broadcast input (which any block may read) is left to the
// instruction-by-instruction path.
TEST(CompositeKernelTest, AnOutputOverABroadcastInputIsNotFused) {
  Var x = dscalar("x"), y = dscalar("y");
  auto program = *ScalarProgram::FromGraph({x, y}, {x + y});
  Tensor big = Tensor::Zeros(DType::kFloat64, {100, 3});
  const Tensor column = big.View({100, 1}, {3, 1});
  const std::vector<Tensor> inputs = {big, column};
  std::vector<Tensor> outputs = {big};
  EXPECT_FALSE(RunFusedBlocks(*program, {100, 3}, inputs, outputs));
}

// RunSimpleElemwise (up to kMaxSimpleElements) against Elemwise's general kernels (one element
// more): the same bits for each op it takes, on float64 and float32, with a broadcast one-element
// float32 input (of the other dtype for float64: Aesara's float32 constants); ops it does not
// take are left to the general kernels.
TEST(CompositeKernelTest, SimpleElemwiseGivesTheGeneralKernelsBits) {
  for (const DType dtype : {DType::kFloat64, DType::kFloat32}) {
    Var x = tensor(dtype, {std::nullopt}, "x"), y = tensor(dtype, {std::nullopt}, "y");
    // A one-element constant, float32 in both (for float64, one of the other dtype).
    const Var one = constant(0.1f);
    const std::vector<Var> outs = {x + one, x - y, x * one, true_div(x, y), neg(x), sqr(x),
                                   sqrt(x), abs(y), maximum(x, y), minimum(x, one),
                                   reciprocal(y), x + y + x};
    FunctionOptions unoptimized;
    unoptimized.mode = OptimizerMode::kNone;
    auto f = function({x, y}, outs, unoptimized);
    ASSERT_TRUE(f.ok()) << f.status();
    for (const int64_t n : {kMaxSimpleElements, kMaxSimpleElements + 1}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " n=", n));
      std::vector<double> xs(n), ys(n);
      for (int64_t i = 0; i < n; ++i) {
        xs[i] = 0.37 * static_cast<double>(i % 97) + 0.01;
        ys[i] = -1.3 + 0.031 * static_cast<double>(i % 89);
      }
      auto fast = (*f)({*Tensor::FromValues<double>(dtype, {n}, xs),
                        *Tensor::FromValues<double>(dtype, {n}, ys)});
      ASSERT_TRUE(fast.ok()) << fast.status();
      if (n == kMaxSimpleElements) {
        // The general kernels on the same values: the first n of a call one element longer.
        xs.push_back(1.0);
        ys.push_back(1.0);
        auto general = (*f)({*Tensor::FromValues<double>(dtype, {n + 1}, xs),
                             *Tensor::FromValues<double>(dtype, {n + 1}, ys)});
        ASSERT_TRUE(general.ok()) << general.status();
        for (size_t o = 0; o < outs.size(); ++o) {
          const Tensor& a = (*fast)[o];
          const Tensor b = (*general)[o].View({n}, {1});
          ASSERT_EQ(a.dtype(), dtype);
          ASSERT_EQ(b.dtype(), dtype);
          ASSERT_EQ(std::memcmp(a.raw_data(), b.raw_data(), n * DTypeSize(dtype)), 0)
              << "output " << o;
        }
      }
    }
  }
  // Taken directly: a vector and a one-element float32 input, into a new output.
  const Tensor ramp =
      *Tensor::FromValues<double>(DType::kFloat64, {3}, std::vector<double>{1, 2, 3});
  const Tensor quarter =
      *Tensor::FromValues<double>(DType::kFloat32, {1}, std::vector<double>{0.25});
  Tensor sum;
  ASSERT_TRUE(RunSimpleElemwise(ScalarOpKind::kAdd, DType::kFloat64, {3}, {{ramp, quarter}}, sum));
  EXPECT_EQ(sum.data<double>()[2], 3.25);
  // Not its ops: a comparison, an integer op, an input of another shape.
  const Tensor v = Tensor::Zeros(DType::kFloat64, {4}), w = Tensor::Zeros(DType::kFloat64, {2});
  const Tensor i = Tensor::Zeros(DType::kInt64, {4});
  Tensor out;
  EXPECT_FALSE(RunSimpleElemwise(ScalarOpKind::kLt, DType::kBool, {4}, {{v, v}}, out));
  EXPECT_FALSE(RunSimpleElemwise(ScalarOpKind::kAdd, DType::kInt64, {4}, {{i, i}}, out));
  EXPECT_FALSE(RunSimpleElemwise(ScalarOpKind::kAdd, DType::kFloat64, {4}, {{v, w}}, out));
  EXPECT_FALSE(RunSimpleElemwise(ScalarOpKind::kExp, DType::kFloat64, {4}, {{v}}, out));
  // Nor a sum of more than kMaxSimpleInputs terms (each single one would be filled to n).
  const std::vector<Tensor> terms(kMaxSimpleInputs + 1, quarter);
  EXPECT_FALSE(RunSimpleElemwise(ScalarOpKind::kAdd, DType::kFloat64, {3}, terms, out));
}

// Both ways a program is made give it its plan; a program without one (built by hand) gets the
// same values from a plan made for the call, and one outside the fast path (an integer program)
// is refused either way.
TEST(CompositeKernelTest, ProgramsCarryTheirPlan) {
  Var x = dscalar("x"), y = dscalar("y");
  auto program = *ScalarProgram::FromGraph({x, y}, {exp(x) * y + 2.0, lt(x, y)});
  ASSERT_NE(program->plan, nullptr);
  auto decoded = *DecodeScalarProgram(EncodeScalarProgram(*program));
  ASSERT_NE(decoded->plan, nullptr);
  ScalarProgram by_hand = *program;
  by_hand.plan = nullptr;
  const Tensor a = Ramp(0.001), b = Ramp(-0.25);
  for (int64_t n : {int64_t{kN}, int64_t{5}}) {  // the blocked path and the one-block one
    SCOPED_TRACE(n);
    const std::vector<Tensor> in = {a.View({n}, {1}), b.View({n}, {1})};
    std::vector<Tensor> planned(2), unplanned(2);
    ASSERT_TRUE(RunFusedBlocks(*decoded, {n}, in, planned));
    ASSERT_TRUE(RunFusedBlocks(by_hand, {n}, in, unplanned));
    ASSERT_EQ(planned[1].dtype(), DType::kBool);
    for (int64_t i = 0; i < n; ++i) {
      const double xi = a.data<double>()[i], yi = b.data<double>()[i];
      ASSERT_EQ(planned[0].data<double>()[i], unplanned[0].data<double>()[i]) << i;
      const double expected = std::exp(xi) * yi + 2.0;
      ASSERT_NEAR(planned[0].data<double>()[i], expected, 1e-12 * (1 + std::fabs(expected))) << i;
      ASSERT_EQ(planned[1].data<bool>()[i], xi < yi) << i;
      ASSERT_EQ(unplanned[1].data<bool>()[i], xi < yi) << i;
    }
  }
  Var i = lscalar("i"), j = lscalar("j");
  auto integer = *ScalarProgram::FromGraph({i, j}, {i + j});
  const Tensor k = *Tensor::Of<int64_t>(DType::kInt64, {3}, {1, 2, 3});
  std::vector<Tensor> outputs(1);
  EXPECT_FALSE(RunFusedBlocks(*integer, {3}, std::vector<Tensor>{k, k}, outputs));
}

}  // namespace
}  // namespace kiln
