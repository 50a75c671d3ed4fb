// kiln::onnx::Export: Kiln graphs written as ONNX, read back by Import and run, give the values
// the Kiln graph gives; an op without an ONNX equivalent is named.
#include "proto/onnx/export.h"

#include <string>

#include "core/compile/function.h"
#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/conv.h"
#include "core/ops/ifelse.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/scan/scan.h"
#include "gtest/gtest.h"
#include "proto/onnx/import.h"

namespace kiln::onnx {
namespace {

Tensor Random(DType dtype, Shape shape, double seed) {
  Tensor t = Tensor::Empty(DType::kFloat64, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<double>()[i] = std::sin(seed + 0.7 * i);
  return t.AsType(dtype);
}

// outputs(inputs) through Kiln, and through Kiln -> ONNX -> Kiln: the same values.
void ExpectRoundTrip(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                     const std::vector<Tensor>& args) {
  absl::StatusOr<std::string> model = Export(inputs, outputs);
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<ImportedModel> back = Import(*model);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->inputs.size(), inputs.size());
  FunctionOptions options;
  options.on_unused_input = OnUnusedInput::kIgnore;
  absl::StatusOr<Function> direct = function(inputs, outputs, options);
  absl::StatusOr<Function> again = function(back->inputs, back->outputs, options);
  ASSERT_TRUE(direct.ok()) << direct.status();
  ASSERT_TRUE(again.ok()) << again.status();
  absl::StatusOr<std::vector<Tensor>> want = (*direct)(args), got = (*again)(args);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t i = 0; i < want->size(); ++i) {
    const Tensor w = (*want)[i].AsType(DType::kFloat64), g = (*got)[i].AsType(DType::kFloat64);
    ASSERT_EQ((*want)[i].dtype(), (*got)[i].dtype()) << "output " << i;
    ASSERT_EQ(w.shape(), g.shape()) << "output " << i;
    for (int64_t k = 0; k < w.size(); ++k) {
      EXPECT_NEAR(g.data<double>()[k], w.data<double>()[k],
                  1e-6 * (1 + std::abs(w.data<double>()[k])))
          << "output " << i << " element " << k;
    }
  }
}

TEST(OnnxExport, LogisticRegressionRoundTrips) {
  Var x = dmatrix("x"), y = dvector("y"), w = dvector("w"), b = dscalar("b");
  Var p = sigmoid(dot(x, w) + b);
  Var cost = mean(-(y * log(p)) - (literal(1.0) - y) * log(literal(1.0) - p));
  ExpectRoundTrip(
      {x, y, w, b}, {p, cost, p > literal(0.5)},
      {Random(DType::kFloat64, {5, 3}, 1), Random(DType::kFloat64, {5}, 2).AsType(DType::kFloat64),
       Random(DType::kFloat64, {3}, 3), Random(DType::kFloat64, {}, 4)});
}

TEST(OnnxExport, ShapesReductionsSoftmaxAndJoinRoundTrip) {
  Var x = ftensor3("x");
  Var t = dimshuffle(x, {2, -1, 0, 1});
  Var s = sum(x, {1});
  Var m = max(x, std::vector<int>{0, 2});
  Var r = reshape(x, std::vector<int64_t>{-1, 4});
  Var j = concatenate({s, s * s}, 1);
  Var sm = softmax(r, 1) + log_softmax(r, 0);
  ExpectRoundTrip({x}, {t, s, m, r, j, sm}, {Random(DType::kFloat32, {2, 3, 4}, 5)});
}

TEST(OnnxExport, FlippedAndPaddedConvolutionRoundTrips) {
  Var img = ftensor4("img"), kern = ftensor4("kern");
  ConvOptions options;
  options.border_mode = ConvBorderMode("half");
  options.filter_shape.dims = {4, 3, 3, 3};
  Var y = relu(conv2d(img, kern, options));
  ExpectRoundTrip(
      {img, kern}, {y},
      {Random(DType::kFloat32, {2, 3, 6, 5}, 6), Random(DType::kFloat32, {4, 3, 3, 3}, 7)});
}

TEST(OnnxExport, AnOptimizedGraphWithFusedLoopsRoundTrips) {
  Var x = dvector("x"), z = dvector("z");
  absl::StatusOr<Function> f = function({x, z}, {exp(x) * z + tanh(x - z) / literal(3.0)});
  ASSERT_TRUE(f.ok()) << f.status();
  const FunctionGraph& g = f->fgraph();
  std::vector<Var> ins(g.inputs().begin(), g.inputs().end()),
      outs(g.outputs().begin(), g.outputs().end());
  ExpectRoundTrip(ins, outs, {Random(DType::kFloat64, {7}, 8), Random(DType::kFloat64, {7}, 9)});
}

// IfElse as If: both conditions' values, through Kiln -> ONNX -> Kiln.
TEST(OnnxExport, IfElseRoundTripsAsIf) {
  Var x = dvector("x");
  const std::vector<Var> y =
      ifelse(gt(sum(x), literal(0.0)), {x * literal(2.0), sum(x)}, {exp(x), max(x)});
  ExpectRoundTrip({x}, y, {Random(DType::kFloat64, {5}, 1.0)});      // sum > 0
  ExpectRoundTrip({x}, y, {Random(DType::kFloat64, {5}, 4.0)});  // sum < 0
}

// Scan as Loop: a sequence read at two taps, a state read two steps back, a non-sequence, a
// nit-sot; then a while loop and a state kept last.
TEST(OnnxExport, ScanRoundTripsAsLoop) {
  Var x = dvector("x"), a = dscalar("a"), init = dvector("init");
  ScanArgs args;
  args.sequences.push_back(ScanSequence{x, {-1, 0}});
  args.outputs_info.push_back(ScanOutput{init, {-2, -1}});
  args.outputs_info.push_back(ScanOutput{std::nullopt});
  args.non_sequences.push_back(a);
  absl::StatusOr<ScanResult> r = scan(
      [](const std::vector<Var>& v) {  // x[t-1], x[t], s[t-2], s[t-1], a
        const Var s = v[3] * v[4] + v[2] * literal(0.5) + v[1] - v[0];
        return ScanStep{{s, s * s}};
      },
      args);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectRoundTrip({x, a, init}, r->outputs,
                  {Random(DType::kFloat64, {6}, 1), Random(DType::kFloat64, {}, 2),
                   Random(DType::kFloat64, {2}, 3)});

  Var v = dscalar("v");
  ScanArgs halving;
  halving.outputs_info.push_back(ScanOutput{v});
  halving.n_steps = constant(int64_t{50});
  absl::StatusOr<ScanResult> w = scan(
      [](const std::vector<Var>& s) {  // halve until below 1
        const Var next = s[0] / literal(2.0);
        return ScanStep{{next}, {}, lt(next, literal(1.0))};
      },
      halving);
  ASSERT_TRUE(w.ok()) << w.status();
  ExpectRoundTrip({v}, w->outputs, {*Tensor::Of<double>(DType::kFloat64, {}, {37.0})});
  absl::StatusOr<ScanResult> last =
      reduce([](const std::vector<Var>& s) { return ScanStep{{s[1] + s[0] * s[0]}}; }, {x},
             {scalar_constant(0.0, DType::kFloat64)});
  ASSERT_TRUE(last.ok()) << last.status();
  ExpectRoundTrip({x}, last->outputs, {Random(DType::kFloat64, {4}, 5)});
}

TEST(OnnxExport, AnOpWithoutAnEquivalentIsNamed) {
  Var x = dvector("x");
  absl::StatusOr<std::string> model = Export({x}, {cumsum(x, 0)});
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented) << model.status();
  EXPECT_NE(model.status().message().find("CumOp"), absl::string_view::npos) << model.status();
  EXPECT_EQ(Export({x}, {x * literal(2.0)}, {}, {.opset = 9}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::onnx
