// The abstract convolution ops against Aesara 2.9.4 (tests/golden/aesara_conv.txt, written by
// tests/golden/gen_conv_cases.py): values of the convolution and of both gradients, inferred
// shapes, printed names and types, wire attributes, errors (hostile sizes refused before
// allocating) and finite-difference gradients of all three ops (double backward).
#include "core/ops/conv.h"

#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/conv_kernels.h"
#include "core/ops/op_util.h"
#include "core/tensor/call_limits.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

std::vector<int> Ints(const std::string& text) {
  std::vector<int> out;
  for (absl::string_view v : absl::StrSplit(text, ',')) out.push_back(std::stoi(std::string(v)));
  return out;
}

// "valid" | "full" | "half" | "lo:hi,lo:hi".
ConvBorder BorderOf(const std::string& text) {
  if (text == "valid" || text == "full" || text == "half") return ConvBorderMode(text);
  std::vector<std::vector<int64_t>> pads;
  for (absl::string_view axis : absl::StrSplit(text, ',')) {
    std::vector<std::string> lohi = absl::StrSplit(axis, ':');
    pads.push_back({std::stoll(lohi[0]), std::stoll(lohi[1])});
  }
  return ConvBorderPads(pads);
}

void ExpectClose(const Tensor& got, const std::vector<double>& want, double rtol,
                 const std::string& what) {
  const std::vector<double> values = testing::Elements(got);
  ASSERT_EQ(values.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(values[i], want[i], rtol * (1 + std::fabs(want[i]))) << what << " element " << i;
  }
}

Tensor Random(DType dtype, const Shape& shape, uint64_t seed) {
  std::vector<double> v(ShapeSize(shape));
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (double& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<double>(s >> 11) / static_cast<double>(uint64_t{1} << 53) * 2 - 1;
  }
  return Tensor::FromValues<double>(DType::kFloat64, shape, v)->AsType(dtype);
}

constexpr char kDefault2d[] =
    "AbstractConv2d{convdim=2, border_mode='valid', subsample=(1, 1), filter_flip=True, "
    "imshp=(None, None, None, None), kshp=(None, None, None, None), filter_dilation=(1, 1), "
    "num_groups=1, unshared=False}";

// Every case of the golden file: y = conv(x, w), and grad(sum(y * G)) wrt x and w (the
// gradInputs and gradWeights ops); the inferred shapes match the values'. Then the same cases
// again by im2col tiles only (no panels), of one output position each.
TEST(ConvTest, MatchesAesara) {
  for (int64_t cap : {int64_t{0}, int64_t{1}}) {
    SetConvColumnBytesForTesting(cap);
    SetConvPanelsForTesting(cap == 0);
    for (const auto& c : testing::ReadCases("tests/golden/aesara_conv.txt")) {
      ASSERT_EQ(c.size(), 17u);
      SCOPED_TRACE(c[0]);
      const int dim = std::stoi(c[1]);
      ConvOptions o;
      o.border_mode = BorderOf(c[2]);
      o.subsample = Ints(c[3]);
      o.filter_flip = c[4] == "True";
      o.filter_dilation = Ints(c[5]);
      o.num_groups = std::stoi(c[6]);
      const Tensor xv = testing::MakeTensor(c[7], c[8], c[9]);
      const Tensor wv = testing::MakeTensor(c[7], c[10], c[11]);
      const Tensor gv = testing::MakeTensor(c[7], c[12], c[14]);
      const Var x = tensor(xv.dtype(), StaticShape(dim + 2), "x");
      const Var w = tensor(xv.dtype(), StaticShape(dim + 2), "w");
      const Var g = tensor(xv.dtype(), StaticShape(dim + 2), "g");
      const Var y = dim == 2 ? conv2d(x, w, o) : conv3d(x, w, o);
      ASSERT_TRUE(y.ok()) << y.status();
      absl::StatusOr<std::vector<Var>> grads = grad(sum(y * g), std::vector<Var>{x, w});
      ASSERT_TRUE(grads.ok()) << grads.status();
      std::vector<Var> outputs = {y, (*grads)[0], (*grads)[1]};
      for (const Var& v : {y, (*grads)[0], (*grads)[1]}) {
        absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(v);
        ASSERT_TRUE(dims.ok()) << dims.status();
        for (const VariablePtr& d : *dims) outputs.push_back(d);
      }
      auto f = function({x, w, g}, outputs);
      ASSERT_TRUE(f.ok()) << f.status();
      auto result = (*f)({xv, wv, gv});
      ASSERT_TRUE(result.ok()) << result.status();
      const double rtol = xv.dtype() == DType::kFloat32 ? 2e-6 : 1e-12;
      EXPECT_EQ((*result)[0].shape(), testing::ParseShape(c[12]));
      ExpectClose((*result)[0], testing::ParseValues(c[13]), rtol, "y");
      ExpectClose((*result)[1], testing::ParseValues(c[15]), rtol, "dx");
      ExpectClose((*result)[2], testing::ParseValues(c[16]), rtol, "dw");
      int next = 3;
      for (int k = 0; k < 3; ++k) {
        for (int d = 0; d < dim + 2; ++d) {
          EXPECT_EQ(ScalarInt((*result)[next++]), (*result)[k].shape()[d]) << k << " dim " << d;
        }
      }
    }
  }
  SetConvColumnBytesForTesting(0);
  SetConvPanelsForTesting(true);
}

TEST(ConvTest, NamesTypesAndWireAttributes) {
  const Var x = dtensor4("x"), w = dtensor4("w");
  const Var y = conv2d(x, w);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->owner()->op().Name(), kDefault2d);
  EXPECT_EQ(y->type()->ToString(), "TensorType(float64, (?, ?, ?, ?))");
  ConvOptions o;
  o.border_mode = ConvBorderPads({{1}, {2}});
  o.subsample = {2, 1};
  o.input_shape.dims = {2, 3, 5, 5};
  o.filter_shape.dims = {4, 3, 3, 3};
  EXPECT_EQ(conv2d(x, w, o)->owner()->op().Name(),
            "AbstractConv2d{convdim=2, border_mode=(1, 2), subsample=(2, 1), filter_flip=True, "
            "imshp=(2, 3, 5, 5), kshp=(4, 3, 3, 3), filter_dilation=(1, 1), num_groups=1, "
            "unshared=False}");
  o = ConvOptions();
  o.border_mode = ConvBorderPads({{1, 2}, {3}});
  o.input_shape.dims = {std::nullopt, 3, std::nullopt, std::nullopt};
  EXPECT_EQ(conv2d(x, w, o)->owner()->op().Name(),
            "AbstractConv2d{convdim=2, border_mode=((1, 2), 3), subsample=(1, 1), "
            "filter_flip=True, imshp=(None, 3, None, None), kshp=(None, None, None, None), "
            "filter_dilation=(1, 1), num_groups=1, unshared=False}");
  // Zero pads are 'valid'; one int pads every axis.
  EXPECT_EQ(ConvBorderPad(0, 2), ConvBorderMode("valid"));
  EXPECT_EQ(op_decl::Codec<ConvBorder>::Repr(ConvBorderPad(2, 3)), "(2, 2, 2)");
  o = ConvOptions();
  o.border_mode = ConvBorderMode("half");
  const Var y3 = conv3d(dtensor5("x"), dtensor5("w"), o);
  EXPECT_EQ(y3->owner()->op().Name(),
            "AbstractConv3d{convdim=3, border_mode='half', subsample=(1, 1, 1), filter_flip=True, "
            "imshp=(None, None, None, None, None), kshp=(None, None, None, None, None), "
            "filter_dilation=(1, 1, 1), num_groups=1, unshared=False}");
  // Aesara's types: the batch and filter dims keep a static 1; the output has img's dtype.
  const Var xb = tensor(DType::kFloat32, {1, std::nullopt, std::nullopt, std::nullopt}, "xb");
  const Var wb = tensor(DType::kFloat32, {1, 1, std::nullopt, std::nullopt}, "wb");
  EXPECT_EQ(conv2d(xb, wb)->type()->ToString(), "TensorType(float32, (1, 1, ?, ?))");
  // The gradients, as Aesara prints them: gradInputs(w, gz, x.shape[-2:]).
  absl::StatusOr<std::vector<Var>> grads = grad(sum(y), std::vector<Var>{x, w});
  ASSERT_TRUE(grads.ok()) << grads.status();
  const Apply& gi = *(*grads)[0]->owner();
  EXPECT_EQ(gi.op().type_name(), "AbstractConv2d_gradInputs");
  EXPECT_EQ(gi.op().Name().substr(std::string("AbstractConv2d_gradInputs").size()),
            std::string(kDefault2d).substr(std::string("AbstractConv2d").size()));
  EXPECT_EQ(gi.inputs()[0], w.ptr());
  EXPECT_EQ(gi.inputs()[2]->owner()->op().Name(), "Subtensor{int64::}");
  EXPECT_EQ((*grads)[1]->owner()->op().type_name(), "AbstractConv2d_gradWeights");
  // A gradient less specific than its input gets Aesara's SpecifyShape.
  auto gb = grad(sum(conv2d(xb, wb)), std::vector<Var>{xb, wb});
  ASSERT_TRUE(gb.ok()) << gb.status();
  EXPECT_EQ((*gb)[0]->type()->ToString(), "TensorType(float32, (1, 1, ?, ?))");
  EXPECT_EQ((*gb)[1]->owner()->op().Name(), "SpecifyShape");
  EXPECT_EQ((*gb)[1]->type()->ToString(), "TensorType(float32, (1, 1, ?, ?))");
  // One identity, whichever way the op was made.
  const Var kept = conv2d(x, w, o);
  const Op& op = kept->owner()->op();
  absl::StatusOr<OpPtr> again = MakeOp(op.type_name(), op.Attrs());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(**again == op);
  for (const std::string name :
       {"AbstractConv2d", "AbstractConv2d_gradInputs", "AbstractConv2d_gradWeights",
        "AbstractConv3d", "AbstractConv3d_gradInputs", "AbstractConv3d_gradWeights"}) {
    absl::StatusOr<OpPtr> made = MakeOp(name, {});
    ASSERT_TRUE(made.ok()) << made.status();
    EXPECT_EQ((*made)->type_name(), name);
  }
  absl::StatusOr<OpPtr> pads =
      MakeOp("AbstractConv2d", {{"border_mode", std::vector<int64_t>{1, 2, 3, 3}}});
  ASSERT_TRUE(pads.ok()) << pads.status();
  EXPECT_NE((*pads)->Name().find("border_mode=((1, 2), 3)"), std::string::npos);
  absl::StatusOr<OpPtr> zero =
      MakeOp("AbstractConv2d", {{"border_mode", std::vector<int64_t>{0, 0, 0, 0}}});
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_TRUE(**zero == **MakeOp("AbstractConv2d", {}));
}

TEST(ConvTest, AttributeErrors) {
  EXPECT_EQ(MakeOp("AbstractConv2d", {{"unshared", int64_t{1}}}).status().message(),
            "AbstractConv2d: unshared (locally connected) convolution is not supported by Kiln");
  EXPECT_EQ(
      MakeOp("AbstractConv2d", {{"subsample", std::vector<int64_t>{0, 1}}}).status().message(),
      "AbstractConv2d: subsample must hold integers in [1, 1073741824], got (0, 1)");
  EXPECT_EQ(
      MakeOp("AbstractConv2d", {{"filter_dilation", std::vector<int64_t>{1}}}).status().message(),
      "AbstractConv2d: filter_dilation must have 2 elements, got (1)");
  EXPECT_EQ(MakeOp("AbstractConv3d", {{"convdim", int64_t{2}}}).status().message(),
            "AbstractConv3d: attribute 'convdim' is 2 but this op convolves 3 axes");
  EXPECT_EQ(MakeOp("AbstractConv2d", {{"border_mode", std::string("same")}}).status().message(),
            "AbstractConv2d: invalid border_mode 'same', which must be either \"valid\", "
            "\"full\", \"half\", an integer or a tuple");
  EXPECT_EQ(MakeOp("AbstractConv2d", {{"border_mode", std::vector<int64_t>{1, -1, 0, 0}}})
                .status()
                .message(),
            "AbstractConv2d: invalid border_mode ((1, -1), 0): pads must be integers in [0, 2^40]");
  EXPECT_EQ(MakeOp("AbstractConv3d", {{"border_mode", std::vector<int64_t>{1, 2, 0, 0, 0, 0}}})
                .status()
                .message(),
            "AbstractConv3d: Asymmetric padding not implemented for 3D");
  EXPECT_EQ(MakeOp("AbstractConv2d", {{"num_groups", int64_t{0}}}).status().message(),
            "AbstractConv2d: num_groups must have value greater than zero");
  EXPECT_EQ(MakeOp("AbstractConv2d", {{"imshp", std::vector<int64_t>{1, 2}}}).status().message(),
            "AbstractConv2d: imshp must have 4 elements, got (1, 2)");
  ConvOptions o;
  o.subsample = {-1, 1};
  EXPECT_EQ(conv2d(dtensor4(), dtensor4(), o).status().message(),
            "AbstractConv2d: subsample must hold integers in [1, 1073741824], got (-1, 1)");
}

TEST(ConvTest, InputErrors) {
  const Var x = dtensor4("x"), w = dtensor4("w");
  EXPECT_EQ(conv2d(dmatrix("m"), w).status().message(),
            std::string(kDefault2d) +
                ": input 0 (img) has type TensorType(float64, (?, ?)) but a float32 or float64 "
                "4D tensor is needed");
  EXPECT_EQ(conv2d(x, itensor4("i")).status().message(),
            std::string(kDefault2d) +
                ": input 1 (kern) has type TensorType(int32, (?, ?, ?, ?)) but a float32 or "
                "float64 4D tensor is needed");
  EXPECT_EQ(conv_grad_wrt_inputs(2, w, x, dvector("s")).status().message(),
            "AbstractConv2d_gradInputs" + std::string(kDefault2d).substr(14) +
                ": input 2 (shape) has type TensorType(float64, (?,)) but an integer vector of 2 "
                "spatial sizes is needed");

  auto run = [&](const ConvOptions& o, const Shape& xs, const Shape& ws) {
    auto f = function({x, w}, {conv2d(x, w, o)});
    EXPECT_TRUE(f.ok()) << f.status();
    return (*f)({Tensor::Zeros(DType::kFloat64, xs), Tensor::Zeros(DType::kFloat64, ws)}).status();
  };
  const std::string prefix = std::string(kDefault2d) + ": ";
  EXPECT_EQ(run({}, {1, 3, 5, 5}, {2, 2, 3, 3}).message(),
            prefix +
                "the kernel of shape (2, 2, 3, 3) has 2 input channels but the image of "
                "shape (1, 3, 5, 5) has 3 channels per group (1 group(s))");
  EXPECT_EQ(run({}, {1, 3, 5, 5}, {2, 3, 6, 3}).message(),
            prefix +
                "the kernel of shape (2, 3, 6, 3) dilated by 1 spans 6 on spatial axis 0, "
                "more than the image of shape (1, 3, 5, 5) padded to 5");
  ConvOptions groups;
  groups.num_groups = 2;
  const std::string gprefix =
      "AbstractConv2d{convdim=2, border_mode='valid', subsample=(1, 1), "
      "filter_flip=True, imshp=(None, None, None, None), kshp=(None, "
      "None, None, None), filter_dilation=(1, 1), num_groups=2, "
      "unshared=False}: ";
  EXPECT_EQ(run(groups, {1, 3, 5, 5}, {2, 1, 3, 3}).message(),
            gprefix +
                "number of input channels must be divisible by num_groups: the image has "
                "shape (1, 3, 5, 5) and num_groups is 2");
  EXPECT_EQ(run(groups, {1, 4, 5, 5}, {3, 2, 3, 3}).message(),
            gprefix +
                "number of filters must be divisible by num_groups: the kernel has shape "
                "(3, 2, 3, 3) and num_groups is 2");
  ConvOptions hinted;
  hinted.input_shape.dims = {std::nullopt, 3, std::nullopt, std::nullopt};
  EXPECT_NE(
      run(hinted, {1, 2, 5, 5}, {2, 2, 3, 3})
          .message()
          .find("shape mismatch: shape of image (1, 2, 5, 5) does not match given imshp (None, 3, "
                "None, None)"),
      std::string::npos);
  // A huge dilation: the dilated kernel does not fit, nothing is allocated.
  ConvOptions dilated;
  dilated.filter_dilation = {1 << 30, 1};
  EXPECT_NE(run(dilated, {1, 1, 5, 5}, {1, 1, 3, 3}).message().find("spans 2147483649"),
            std::string::npos);
  // An output of 10^12 elements (a padding of 2^19 on a 1x1 image) is refused before allocating.
  ConvOptions padded;
  padded.border_mode = ConvBorderPad(int64_t{1} << 19, 2);
  const absl::Status huge = run(padded, {4, 1, 1, 1}, {1, 1, 1, 1});
  EXPECT_FALSE(huge.ok());
  EXPECT_NE(huge.code(), absl::StatusCode::kInternal) << huge;
  // gradInputs: the spatial shape must give back topgrad's shape.
  const Var s = lvector("s");
  auto gi = function({w, x, s}, {conv_grad_wrt_inputs(2, w, x, s)});
  ASSERT_TRUE(gi.ok()) << gi.status();
  EXPECT_NE((*gi)({Tensor::Zeros(DType::kFloat64, {2, 3, 3, 3}),
                   Tensor::Zeros(DType::kFloat64, {1, 2, 3, 3}),
                   *Tensor::Of<int64_t>(DType::kInt64, {2}, {6, 5})})
                .status()
                .message()
                .find("invalid input_shape for gradInputs: the given input_shape would produce an "
                      "output of shape (1, 2, 4, 3), but the given topgrad has shape (1, 2, 3, 3)"),
            std::string::npos);
  EXPECT_NE((*gi)({Tensor::Zeros(DType::kFloat64, {2, 3, 3, 3}),
                   Tensor::Zeros(DType::kFloat64, {1, 2, 3, 3}),
                   *Tensor::Of<int64_t>(DType::kInt64, {2}, {-5, 5})})
                .status()
                .message()
                .find("is not a valid spatial shape"),
            std::string::npos);
}

// Finite differences for the convolution and for each gradient op (so the gradient of the
// gradient, Aesara's double backward), across padding, strides, dilation, groups and 3d.
TEST(ConvTest, GradientsMatchFiniteDifferences) {
  struct Case {
    int dim;
    ConvBorder border;
    std::vector<int> subsample, dilation;
    int groups;
    bool flip;
    Shape x, w;
  };
  const std::vector<Case> cases = {
      {2, ConvBorderMode("valid"), {1, 1}, {1, 1}, 1, true, {2, 2, 5, 4}, {3, 2, 2, 3}},
      {2, ConvBorderPads({{1, 2}, {0}}), {2, 1}, {1, 2}, 1, false, {1, 2, 6, 6}, {2, 2, 3, 2}},
      {2, ConvBorderMode("half"), {1, 2}, {1, 1}, 2, true, {2, 4, 5, 5}, {4, 2, 3, 3}},
      {2, ConvBorderMode("full"), {1, 1}, {2, 1}, 1, true, {1, 1, 4, 4}, {2, 1, 2, 2}},
      {3, ConvBorderPad(1, 3), {2, 1, 1}, {1, 1, 2}, 1, true, {1, 2, 4, 3, 5}, {2, 2, 2, 2, 2}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    const Case& c = cases[i];
    ConvOptions o;
    o.border_mode = c.border;
    o.subsample = c.subsample;
    o.filter_dilation = c.dilation;
    o.num_groups = c.groups;
    o.filter_flip = c.flip;
    const Tensor xv = Random(DType::kFloat64, c.x, 1 + i), wv = Random(DType::kFloat64, c.w, 7 + i);
    auto conv = [&](const Var& x, const Var& w) {
      return c.dim == 2 ? conv2d(x, w, o) : conv3d(x, w, o);
    };
    absl::Status s =
        verify_grad([&](const std::vector<Var>& in) { return conv(in[0], in[1]); }, {xv, wv});
    EXPECT_TRUE(s.ok()) << s;
    // The output's shape, for the gradient ops' topgrad.
    auto f = function({}, {conv(constant(xv), constant(wv))});
    ASSERT_TRUE(f.ok()) << f.status();
    const Shape ys = (*(*f)({}))[0].shape();
    const Tensor gv = Random(DType::kFloat64, ys, 13 + i);
    std::vector<int64_t> xs(c.x.begin() + 2, c.x.end()), ws(c.w.begin() + 2, c.w.end());
    const Var xsv = constant(*Tensor::FromValues<int64_t>(DType::kInt64, {c.dim}, xs));
    const Var wsv = constant(*Tensor::FromValues<int64_t>(DType::kInt64, {c.dim}, ws));
    s = verify_grad(
        [&](const std::vector<Var>& in) {
          return conv_grad_wrt_inputs(c.dim, in[0], in[1], xsv, o);
        },
        {wv, gv});
    EXPECT_TRUE(s.ok()) << s;
    s = verify_grad(
        [&](const std::vector<Var>& in) {
          return conv_grad_wrt_weights(c.dim, in[0], in[1], wsv, o);
        },
        {xv, gv});
    EXPECT_TRUE(s.ok()) << s;
  }
}

// A direct loop over every (image, filter, output position, channel, kernel position): the
// convolution and, as its adjoints, both gradients, in float64, on 3 spatial axes (a 2-d case
// has a leading axis of 1).
struct Naive {
  ConvGeometry g;
  int64_t Pad(int i) const { return g.pad[i]; }
  // Calls fn(img index, kern index, out index) for every product the convolution sums.
  template <typename Fn>
  void ForEachProduct(Fn fn) const {
    const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups;
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t m = 0; m < g.filters; ++m) {
        const int64_t grp = m / mg;
        for (int64_t o0 = 0; o0 < g.output[0]; ++o0) {
          for (int64_t o1 = 0; o1 < g.output[1]; ++o1) {
            for (int64_t o2 = 0; o2 < g.output[2]; ++o2) {
              const int64_t out =
                  (((n * g.filters + m) * g.output[0] + o0) * g.output[1] + o1) * g.output[2] + o2;
              for (int64_t c = 0; c < cg; ++c) {
                for (int64_t j0 = 0; j0 < g.kernel[0]; ++j0) {
                  for (int64_t j1 = 0; j1 < g.kernel[1]; ++j1) {
                    for (int64_t j2 = 0; j2 < g.kernel[2]; ++j2) {
                      const int64_t i0 = o0 * g.stride[0] + j0 * g.dilation[0] - Pad(0);
                      const int64_t i1 = o1 * g.stride[1] + j1 * g.dilation[1] - Pad(1);
                      const int64_t i2 = o2 * g.stride[2] + j2 * g.dilation[2] - Pad(2);
                      if (i0 < 0 || i0 >= g.image[0] || i1 < 0 || i1 >= g.image[1] || i2 < 0 ||
                          i2 >= g.image[2]) {
                        continue;
                      }
                      const int64_t img =
                          (((n * g.channels + grp * cg + c) * g.image[0] + i0) * g.image[1] + i1) *
                              g.image[2] +
                          i2;
                      // The flipped kernel position when the op convolves.
                      const int64_t k0 = g.flip ? g.kernel[0] - 1 - j0 : j0;
                      const int64_t k1 = g.flip ? g.kernel[1] - 1 - j1 : j1;
                      const int64_t k2 = g.flip ? g.kernel[2] - 1 - j2 : j2;
                      const int64_t kern =
                          (((m * cg + c) * g.kernel[0] + k0) * g.kernel[1] + k1) * g.kernel[2] + k2;
                      fn(img, kern, out);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
};

// Random geometries (2-d and 3-d; padding, strides, dilation, groups, flipped or not) against
// the direct loop, for the convolution and both gradient ops; float32 too.
// y, dx and dw of the convolution of x (shape xs) by w (shape ws) with options o (border
// `mode`: 0 valid, 1 full, 2 half, 3 `pads`) against a loop over every product, in float64.
void ExpectMatchesADirectLoop(int dim, const Shape& xs, const Shape& ws, ConvOptions o,
                              int64_t mode, const std::vector<std::vector<int64_t>>& pads,
                              DType dtype, int trial) {
  const int groups = static_cast<int>(o.num_groups);
  o.border_mode = mode == 0   ? ConvBorderMode("valid")
                  : mode == 1 ? ConvBorderMode("full")
                  : mode == 2 ? ConvBorderMode("half")
                              : ConvBorderPads(pads);
  const Tensor xv = Random(dtype, xs, 100 + trial), wv = Random(dtype, ws, 200 + trial);
  const Var x = tensor(dtype, StaticShape(dim + 2)), w = tensor(dtype, StaticShape(dim + 2));
  const Var y = dim == 2 ? conv2d(x, w, o) : conv3d(x, w, o);
  ASSERT_TRUE(y.ok()) << y.status();
  auto f = function({x, w}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  auto yv = (*f)({xv, wv});
  ASSERT_TRUE(yv.ok()) << yv.status();
  const Tensor gv = Random(dtype, (*yv)[0].shape(), 300 + trial);
  // The geometry the op resolved, for the loop (the output shape is the op's).
  Naive naive;
  ConvGeometry& g = naive.g;
  g.batch = xs[0];
  g.channels = xs[1];
  g.filters = ws[0];
  g.groups = groups;
  g.flip = o.filter_flip;
  for (int i = 0; i < dim; ++i) {
    const int a = 3 - dim + i;
    g.image[a] = xs[2 + i];
    g.kernel[a] = ws[2 + i];
    g.output[a] = (*yv)[0].shape()[2 + i];
    g.stride[a] = o.subsample[i];
    g.dilation[a] = o.filter_dilation[i];
    const int64_t dilated = (ws[2 + i] - 1) * o.filter_dilation[i] + 1;
    g.pad[a] = mode == 0 ? 0 : mode == 1 ? dilated - 1 : mode == 2 ? dilated / 2 : pads[i][0];
    const int64_t high = mode == 3 ? pads[i][1] : g.pad[a];
    EXPECT_EQ(g.output[a], (xs[2 + i] + g.pad[a] + high - dilated) / o.subsample[i] + 1);
  }
  const std::vector<double> xd = testing::Elements(xv), wd = testing::Elements(wv),
                            gd = testing::Elements(gv);
  std::vector<double> want_y(ShapeSize((*yv)[0].shape())), want_dx(xd.size()), want_dw(wd.size());
  naive.ForEachProduct([&](int64_t i, int64_t k, int64_t out) {
    want_y[out] += xd[i] * wd[k];
    want_dx[i] += gd[out] * wd[k];
    want_dw[k] += gd[out] * xd[i];
  });
  const double tol = dtype == DType::kFloat32 ? 1e-5 : 1e-12;
  ExpectClose((*yv)[0], want_y, tol, "y");
  const Var g_in = tensor(dtype, StaticShape(dim + 2));
  std::vector<int64_t> x_spatial(xs.begin() + 2, xs.end()), w_spatial(ws.begin() + 2, ws.end());
  const Var dx = conv_grad_wrt_inputs(
      dim, w, g_in, constant(*Tensor::FromValues<int64_t>(DType::kInt64, {dim}, x_spatial)), o);
  const Var dw = conv_grad_wrt_weights(
      dim, x, g_in, constant(*Tensor::FromValues<int64_t>(DType::kInt64, {dim}, w_spatial)), o);
  auto grads = function({x, w, g_in}, {dx, dw});
  ASSERT_TRUE(grads.ok()) << grads.status();
  auto got = (*grads)({xv, wv, gv});
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectClose((*got)[0], want_dx, tol, "dx");
  ExpectClose((*got)[1], want_dw, tol, "dw");
}

TEST(ConvTest, RandomGeometriesMatchADirectLoop) {
  uint64_t state = 12345;
  auto next = [&](int64_t lo, int64_t hi) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(hi - lo + 1));
  };
  for (int trial = 0; trial < 60; ++trial) {
    SCOPED_TRACE(trial);
    SetConvColumnBytesForTesting(trial % 2);  // odd trials: a tile per output position
    SetConvPanelsForTesting(trial % 3 != 0);  // every third trial: tiles only
    const int dim = next(2, 3);
    const int groups = next(1, 3);
    ConvOptions o;
    o.num_groups = groups;
    o.filter_flip = next(0, 1) == 1;
    std::vector<std::vector<int64_t>> pads;
    Shape xs{next(1, 3), groups * next(1, 2)}, ws{groups * next(1, 2), xs[1] / groups};
    for (int i = 0; i < dim; ++i) {
      o.subsample.push_back(next(1, 3));
      o.filter_dilation.push_back(next(1, 2));
      ws.push_back(next(1, 3));
      xs.push_back(next(1, 6) + (ws.back() - 1) * o.filter_dilation.back());
      pads.push_back({next(0, 2), next(0, 2)});
      if (dim == 3) pads.back()[1] = pads.back()[0];
    }
    const int64_t mode = next(0, 3);
    const DType dtype = trial % 4 == 3 ? DType::kFloat32 : DType::kFloat64;
    ExpectMatchesADirectLoop(dim, xs, ws, o, mode, pads, dtype, trial);
  }
  SetConvColumnBytesForTesting(0);
  SetConvPanelsForTesting(true);
}

// Geometries past the random ones' few channels, where the kernels split their work: the
// forward panels' passes over blocks of channels (more than 192 rows of columns), the image's
// gradient by the columns' product and col2im for 6 or more channels, the weights' gradient
// over whole vectors only or partial ones too; each in float32 and float64, with and without
// the filters' flip, the panels on and off.
TEST(ConvTest, ManyChannelsMatchADirectLoop) {
  struct Case {
    Shape xs, ws;
    int64_t mode;
    std::vector<std::vector<int64_t>> pads;
  };
  const Case cases[] = {
      {{2, 30, 9, 11}, {7, 30, 3, 3}, 2, {}},               // 270 rows, 11-wide lines
      {{1, 64, 8, 16}, {13, 64, 3, 3}, 2, {}},              // 576 rows, whole vectors
      {{3, 8, 12, 12}, {5, 8, 5, 5}, 0, {}},                // LeNet-like, 8x8 outputs
      {{2, 7, 13, 12}, {6, 7, 5, 5}, 3, {{1, 0}, {0, 2}}},  // uneven pads, 10-wide lines
  };
  int trial = 1000;
  for (const Case& c : cases) {
    for (const DType dtype : {DType::kFloat32, DType::kFloat64}) {
      for (const bool flip : {false, true}) {
        for (const bool panels : {true, false}) {
          SCOPED_TRACE(absl::StrCat(absl::StrJoin(c.xs, ","), " by ", absl::StrJoin(c.ws, ","), " ",
                                    DTypeName(dtype), flip ? " flip" : "", panels ? "" : " tiles"));
          SetConvPanelsForTesting(panels);
          ConvOptions o;
          o.filter_flip = flip;
          o.subsample = {1, 1};
          o.filter_dilation = {1, 1};
          ExpectMatchesADirectLoop(2, c.xs, c.ws, o, c.mode, c.pads, dtype, trial++);
        }
      }
    }
  }
  SetConvPanelsForTesting(true);
}

// Empty batches and channels: empty outputs, or zeros where nothing is summed (as NumPy's
// sums of nothing).
TEST(ConvTest, EmptyBatchesAndChannels) {
  const Var x = dtensor4("x"), w = dtensor4("w"), g = dtensor4("g");
  const Var y = conv2d(x, w);
  auto grads = grad(sum(y * g), std::vector<Var>{x, w});
  ASSERT_TRUE(grads.ok()) << grads.status();
  auto f = function({x, w, g}, {y, (*grads)[0], (*grads)[1]});
  ASSERT_TRUE(f.ok()) << f.status();
  auto empty_batch =
      (*f)({Tensor::Zeros(DType::kFloat64, {0, 3, 5, 5}), Random(DType::kFloat64, {4, 3, 3, 3}, 1),
            Tensor::Zeros(DType::kFloat64, {0, 4, 3, 3})});
  ASSERT_TRUE(empty_batch.ok()) << empty_batch.status();
  EXPECT_EQ((*empty_batch)[0].shape(), (Shape{0, 4, 3, 3}));
  EXPECT_EQ((*empty_batch)[1].shape(), (Shape{0, 3, 5, 5}));
  EXPECT_EQ(testing::Elements((*empty_batch)[2]), std::vector<double>(4 * 3 * 3 * 3, 0.0));
  auto no_channels = (*f)({Tensor::Zeros(DType::kFloat64, {2, 0, 5, 5}),
                           Tensor::Zeros(DType::kFloat64, {4, 0, 3, 3}),
                           Random(DType::kFloat64, {2, 4, 3, 3}, 2)});
  ASSERT_TRUE(no_channels.ok()) << no_channels.status();
  EXPECT_EQ(testing::Elements((*no_channels)[0]), std::vector<double>(2 * 4 * 3 * 3, 0.0));
  EXPECT_EQ((*no_channels)[1].shape(), (Shape{2, 0, 5, 5}));
  EXPECT_EQ((*no_channels)[2].shape(), (Shape{4, 0, 3, 3}));
}

// The im2col buffer is charged to the call's memory budget: a batch is unrolled in chunks that
// fit what the budget has left, and a call past the budget is refused before the buffer is taken.
TEST(ConvTest, ColumnsCountAgainstTheMemoryBudget) {
  const Tensor xv = Random(DType::kFloat64, {16, 1, 28, 28}, 5);
  const Tensor wv = Random(DType::kFloat64, {20, 1, 5, 5}, 6);
  const Var x = dtensor4("x"), w = dtensor4("w");
  auto f = function({x, w}, {conv2d(x, w)});
  ASSERT_TRUE(f.ok()) << f.status();
  auto free = (*f)({xv, wv});
  ASSERT_TRUE(free.ok()) << free.status();
  {
    // The output is 1.5 MB; the whole batch's columns would be 1.8 MB more.
    MemoryBudgetScope budget(std::make_shared<MemoryBudget>("the test's budget", 3 << 20));
    auto within = (*f)({xv, wv});
    ASSERT_TRUE(within.ok()) << within.status();
    EXPECT_TRUE((*within)[0].BitwiseEquals((*free)[0]));
  }
  MemoryBudgetScope budget(std::make_shared<MemoryBudget>("the test's budget", 1 << 20));
  EXPECT_THROW((void)(*f)({xv, wv}), BudgetExceeded);
}

// float32 (with float64 filters cast to the image's dtype) agrees with float64.
TEST(ConvTest, Float32AgreesWithFloat64) {
  const Tensor xv = Random(DType::kFloat64, {3, 4, 9, 8}, 3),
               wv = Random(DType::kFloat64, {5, 4, 3, 3}, 4);
  ConvOptions o;
  o.border_mode = ConvBorderMode("half");
  const Var x = dtensor4("x"), w = dtensor4("w");
  const Var xf = ftensor4("xf");
  auto f = function({x, w, xf}, {conv2d(x, w, o), conv2d(xf, w, o)});
  ASSERT_TRUE(f.ok()) << f.status();
  auto r = (*f)({xv, wv, xv.AsType(DType::kFloat32)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[1].dtype(), DType::kFloat32);
  ExpectClose((*r)[1], testing::Elements((*r)[0]), 1e-5, "float32");
}

}  // namespace
}  // namespace kiln
