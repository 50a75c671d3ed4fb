// RFFTOp and IRFFTOp against numpy.fft (values written by numpy 1.24), a direct DFT at prime and
// power-of-two lengths, round trips, inferred shapes, errors and finite-difference gradients.
#include "core/ops/fft.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/fft_kernels.h"
#include "core/ops/op_util.h"
#include "core/tensor/call_limits.h"

namespace kiln {
namespace {

Tensor Values(const Shape& shape, std::vector<double> values) {
  return *Tensor::FromValues<double>(DType::kFloat64, shape, values);
}

std::vector<double> Evaluate(const std::vector<Var>& in, const Var& out,
                        const std::vector<Tensor>& args) {
  auto f = function(in, {out});
  EXPECT_TRUE(f.ok()) << f.status();
  auto result = (*f)(args);
  EXPECT_TRUE(result.ok()) << result.status();
  const Tensor y = (*result)[0].AsType(DType::kFloat64);
  return std::vector<double>(y.data<double>(), y.data<double>() + y.size());
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "entry " << i;
}

TEST(FftTest, RfftMatchesNumpy) {
  const Var a = dtensor3("a");
  // numpy.fft.rfftn([[0.5, -1, 2], [3, 0.25, -2.5]]), as (real, imag) pairs.
  ExpectNear(Evaluate({a}, rfft(a), {Values({1, 2, 3}, {0.5, -1.0, 2.0, 3.0, 0.25, -2.5})}),
             {2.25, 0, 4.125, 0.21650635094610982, 0.75, 0, -4.125, 4.979646071760522}, 1e-12);
  const Var m = dmatrix("m");
  std::vector<double> rows(10);
  for (int i = 0; i < 10; ++i) rows[i] = 0.3 * i - 1;
  const std::vector<double> y = Evaluate({m}, rfft(m), {Values({2, 5}, rows)});
  ASSERT_EQ(y.size(), 12u);  // (2, 3, 2)
  // numpy.fft.rfft of the second row.
  ExpectNear({y.begin() + 6, y.end()},
             {5.5, 0, -0.75, 1.03228644035338, -0.7499999999999996, 0.2436897721746799}, 1e-12);
  // s pads (7) or cuts (3) the transformed dim, as rfftn's s.
  const Var s = lvector("s");
  const Var padded = ApplyOp(*MakeOp("RFFTOp", {}), {m, s});
  const std::vector<double> seven = Evaluate({m, s}, padded, {Values({1, 5}, {-1, -0.7, -0.4, -0.1, 0.2}),
                                                         *Tensor::Of<int64_t>(DType::kInt64, {1}, {7})});
  ExpectNear(seven, {-2.0, 0, -1.4375313745088296, 1.067418324335618, -0.421498818883739,
                     0.27434659813984424, -0.6409698066074314, 0.28346439804962575},
             1e-12);
  ExpectNear(Evaluate({m, s}, padded, {Values({1, 5}, {-1, -0.7, -0.4, -0.1, 0.2}),
                                  *Tensor::Of<int64_t>(DType::kInt64, {1}, {3})}),
             {-2.1, 0, -0.44999999999999996, 0.2598076211353315}, 1e-12);
}

TEST(FftTest, IrfftIsTheUnnormalizedInverse) {
  const Var a = dtensor3("a"), s = lvector("s");
  const Var inverse = ApplyOp(*MakeOp("IRFFTOp", {}), {a, s});
  // numpy.fft.irfftn(B, s) * n for B = rfft(0.3 * [5..9] - 1), to n = 5 and n = 4.
  const Tensor b = Values({1, 3, 2}, {5.5, 0, -0.75, 1.03228644035338, -0.7499999999999996,
                                      0.2436897721746799});
  ExpectNear(Evaluate({a, s}, inverse, {b, *Tensor::Of<int64_t>(DType::kInt64, {1}, {5})}),
             {2.5, 4.0, 5.5, 7.0, 8.5}, 1e-12);
  ExpectNear(Evaluate({a, s}, inverse, {b, *Tensor::Of<int64_t>(DType::kInt64, {1}, {4})}),
             {3.25, 4.18542711929324, 6.25, 8.31457288070676}, 1e-12);
  // irfft(rfft(x)) is x, for even and odd lengths and every norm, in float32 too.
  for (const Shape& shape : {Shape{2, 3, 4}, Shape{1, 5, 7}, Shape{3, 6}}) {
    std::vector<double> x(ShapeSize(shape));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(1.7 * static_cast<double>(i)) * 3;
    const Var in = tensor(DType::kFloat64, StaticShape(shape.size()), "x");
    const bool odd = shape.back() % 2 == 1;
    for (const std::string norm : {"", "ortho", "no_norm"}) {
      const Var back = irfft(rfft(in, norm), norm, odd);
      std::vector<double> want = x;
      if (norm == "no_norm") {
        double n = 1;
        for (size_t d = 1; d < shape.size(); ++d) n *= static_cast<double>(shape[d]);
        for (double& v : want) v *= n;
      }
      ExpectNear(Evaluate({in}, back, {Values(shape, x)}), want, 1e-9);
    }
    const Var single = tensor(DType::kFloat32, StaticShape(shape.size()), "x32");
    const std::vector<double> y = Evaluate({single}, irfft(rfft(single), "", odd),
                                      {Values(shape, x).AsType(DType::kFloat32)});
    ExpectNear(y, x, 1e-5);
  }
}

// Bluestein at a prime length and radix-2 at a power of two, against the definition.
TEST(FftTest, TransformsOfEveryLengthMatchTheDefinition) {
  for (size_t n : {1u, 2u, 3u, 12u, 97u, 1009u, 1024u}) {
    std::vector<fft::Complex> x(n);
    for (size_t j = 0; j < n; ++j) x[j] = fft::Complex(std::cos(0.3 * j), std::sin(1.1 * j) - 0.2);
    std::vector<fft::Complex> y = x;
    fft::Transform(y, false);
    double worst = 0;
    for (size_t k = 0; k < n; k += std::max<size_t>(1, n / 17)) {
      fft::Complex sum;
      for (size_t j = 0; j < n; ++j) {
        const double angle = -2 * std::numbers::pi * static_cast<double>((j * k) % n) / n;
        sum += x[j] * fft::Complex(std::cos(angle), std::sin(angle));
      }
      worst = std::max(worst, std::abs(sum - y[k]));
    }
    EXPECT_LT(worst, 1e-9 * static_cast<double>(n)) << n;
    fft::Transform(y, true);
    for (size_t j = 0; j < n; ++j) EXPECT_NEAR(std::abs(y[j] / static_cast<double>(n) - x[j]), 0, 1e-12);
  }
}

TEST(FftTest, ShapesNamesAndErrors) {
  const Var a = dtensor3("a");
  const Var spectrum = rfft(a);
  ASSERT_TRUE(spectrum.ok()) << spectrum.status();
  EXPECT_EQ(spectrum->type()->ToString(), "TensorType(float64, (?, ?, ?, ?))");
  absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(spectrum);
  ASSERT_TRUE(dims.ok()) << dims.status();
  std::vector<Var> outs = {spectrum};
  for (const VariablePtr& d : *dims) outs.push_back(d);
  auto f = function({a}, outs);
  ASSERT_TRUE(f.ok()) << f.status();
  auto r = (*f)({Tensor::Zeros(DType::kFloat64, {2, 3, 5})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3, 3, 2}));
  for (int d = 0; d < 4; ++d) EXPECT_EQ(ScalarInt((*r)[1 + d]), (*r)[0].shape()[d]);
  EXPECT_EQ((*MakeOp("RFFTOp", {}))->Name(), "RFFTOp");
  EXPECT_EQ(rfft(dvector("v")).status().message(),
            "RFFTOp: input 0 (a) has type TensorType(float64, (?,)): input must have dimension "
            "> 2, with first dimension batches");
  EXPECT_EQ(rfft(lmatrix("i")).status().message(),
            "RFFTOp: input 0 (a) has type TensorType(int64, (?, ?)), which is not a float tensor");
  EXPECT_EQ(irfft(dmatrix("m")).status().message(),
            "IRFFTOp: input 0 (a) has type TensorType(float64, (?, ?)): input must have dimension "
            ">= 3,  with first dimension batches and last real/imag parts");
  EXPECT_EQ(ApplyOp(*MakeOp("RFFTOp", {}), {dmatrix("m"), dvector("s")}).status().message(),
            "RFFTOp: input 1 (s) has type TensorType(float64, (?,)): length of the transformed "
            "axis must be of type integer");
  EXPECT_EQ(rfft(a, "unitary").status().message(),
            "rfft: invalid value unitary for norm, must be None, 'ortho' or 'no norm'");
  const Var m = dmatrix("m"), s = lvector("s");
  auto g = function({m, s}, {ApplyOp(*MakeOp("RFFTOp", {}), {m, s})});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)({Tensor::Zeros(DType::kFloat64, {1, 4}),
                  *Tensor::Of<int64_t>(DType::kInt64, {1}, {0})})
                .status()
                .message(),
            "RFFTOp: input 1 (s) has the length 0, not >= 1");
  // An attacker's lengths: past the size limits, an error before any buffer is taken; within
  // them but past the call's memory budget, the budget's bad_alloc before the buffer is taken
  // (the server answers RESOURCE_EXHAUSTED; a sanitizer build would abort on asking malloc).
  const Tensor small = Tensor::Zeros(DType::kFloat64, {1, 4});
  absl::StatusOr<std::vector<Tensor>> huge =
      (*g)({small, *Tensor::Of<int64_t>(DType::kInt64, {1}, {int64_t{1} << 62})});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("RFFTOp"), std::string::npos) << huge.status();
  MemoryBudgetScope budget(std::make_shared<MemoryBudget>("the test's budget", int64_t{1} << 30));
  EXPECT_THROW(
      (void)(*g)({small, *Tensor::Of<int64_t>(DType::kInt64, {1}, {int64_t{1} << 40})}),
      BudgetExceeded);
}

TEST(FftTest, GradientsMatchFiniteDifferences) {
  for (const Shape& shape : {Shape{2, 4}, Shape{1, 5}, Shape{2, 3, 3}}) {
    SCOPED_TRACE(ShapeToString(shape));
    std::vector<double> x(ShapeSize(shape));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.9 * static_cast<double>(i)) - 0.1;
    const bool odd = shape.back() % 2 == 1;
    for (const std::string norm : {"", "ortho"}) {
      const absl::Status forward =
          verify_grad([&](const std::vector<Var>& in) { return rfft(in[0], norm); },
                      {Values(shape, x)});
      EXPECT_TRUE(forward.ok()) << forward;
      Shape half = shape;  // irfft's input: the spectrum that gives `shape` back
      half.back() = shape.back() / 2 + 1;
      half.push_back(2);
      std::vector<double> z(ShapeSize(half));
      for (size_t i = 0; i < z.size(); ++i) z[i] = std::sin(0.7 * static_cast<double>(i)) + 0.2;
      const absl::Status inverse =
          verify_grad([&](const std::vector<Var>& in) { return irfft(in[0], norm, odd); },
                      {Values(half, z)});
      EXPECT_TRUE(inverse.ok()) << inverse;
    }
  }
}

}  // namespace
}  // namespace kiln
