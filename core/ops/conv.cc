#include "core/ops/conv.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/op_registry.h"
#include "core/ops/conv_kernels.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(AbstractConv2d);
KILN_REGISTER_OP(AbstractConv2d_gradInputs);
KILN_REGISTER_OP(AbstractConv2d_gradWeights);
KILN_REGISTER_OP(AbstractConv3d);
KILN_REGISTER_OP(AbstractConv3d_gradInputs);
KILN_REGISTER_OP(AbstractConv3d_gradWeights);

namespace {

constexpr int64_t kMaxPad = int64_t{1} << 40;
constexpr int64_t kMaxStep = int64_t{1} << 30;
// BLAS's dimensions are 32-bit ints.
constexpr int64_t kMaxBlasDim = (int64_t{1} << 31) - 1;

// "(2, 3)" for sizes, "(None, 3)" for a hint.
std::string HintText(const ConvShapeHint& h) { return op_decl::Codec<ConvShapeHint>::Repr(h); }

// Every entry of v in [1, kMaxStep], and D of them.
absl::Status CheckSteps(absl::string_view name, const std::vector<int>& v, int dim) {
  if (static_cast<int>(v.size()) != dim) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must have ", dim, " elements, got (", absl::StrJoin(v, ", "), ")"));
  }
  for (int s : v) {
    if (s < 1 || s > kMaxStep) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must hold integers in [1, ", kMaxStep,
                                                     "], got (", absl::StrJoin(v, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHint(absl::string_view name, const ConvShapeHint& h, int dim) {
  if (static_cast<int>(h.dims.size()) != dim + 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must have ", dim + 2, " elements, got ", HintText(h)));
  }
  for (const auto& d : h.dims) {
    if (d && (*d < 0 || *d > kMaxTensorBytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must hold None or sizes in [0, 2^46], got ", HintText(h)));
    }
  }
  return absl::OkStatus();
}

// The (low, high) padding of axis i for a kernel dilated to `dilated`.
std::pair<int64_t, int64_t> PadsOf(const ConvBorder& b, int i, int64_t dilated) {
  switch (b.kind) {
    case ConvBorder::kValid:
      return {0, 0};
    case ConvBorder::kFull:
      return {dilated - 1, dilated - 1};
    case ConvBorder::kHalf:
      return {dilated / 2, dilated / 2};
    case ConvBorder::kPads:
      return {b.pads[2 * i], b.pads[2 * i + 1]};
  }
  return {0, 0};
}

// The element type a convolution computes in.
bool IsConvDType(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }

// Input i as a float tensor of rank `ndim`, or INVALID_ARGUMENT naming it (`what`).
absl::StatusOr<const TensorType*> ExpectConvTensor(const Op& op, const std::vector<VariablePtr>& in,
                                                   int i, int ndim, const char* what) {
  const TensorType* t = in[i]->tensor_type();
  if (t == nullptr || t->ndim() != ndim || !IsConvDType(t->dtype())) {
    return Invalid(op,
                   absl::StrCat("input ", i, " (", what, ") has type ", in[i]->type()->ToString(),
                                " but a float32 or float64 ", ndim, "D tensor is needed"));
  }
  return t;
}

// The shape input of the gradients: an integer vector of `dim` entries.
absl::Status ExpectSpatialShape(const Op& op, const std::vector<VariablePtr>& in, int dim) {
  const TensorType* t = in[2]->tensor_type();
  if (t == nullptr || t->ndim() != 1 || !IsInteger(t->dtype()) ||
      (t->shape()[0] && *t->shape()[0] != dim)) {
    return Invalid(op, absl::StrCat("input 2 (shape) has type ", in[2]->type()->ToString(),
                                    " but an integer vector of ", dim, " spatial sizes is needed"));
  }
  return absl::OkStatus();
}

// 1 when a static dim is 1, else unknown (Aesara's broadcastable pattern).
StaticDim Bcast(const StaticDim& d) { return d == 1 ? StaticDim(1) : std::nullopt; }

// OK when the runtime shape matches the hint wherever the hint is known.
absl::Status CheckAgainstHint(const Op& op, const ConvShapeHint& hint, const Shape& shape,
                              absl::string_view what, absl::string_view hint_name) {
  for (size_t i = 0; i < hint.dims.size() && i < shape.size(); ++i) {
    if (hint.dims[i] && *hint.dims[i] != shape[i]) {
      return Invalid(op, absl::StrCat("shape mismatch: shape of ", what, " ", ShapeToString(shape),
                                      " does not match given ", hint_name, " ", HintText(hint)));
    }
  }
  return absl::OkStatus();
}

// The geometry of a convolution of an image of shape `img` by a kernel of shape `kern`, every
// size checked: channels against groups, the dilated kernel against the padded image, and the
// im2col buffer and BLAS's dimensions bounded.
absl::StatusOr<ConvGeometry> ResolveGeometry(const Op& op, const ConvAttrs& a, const Shape& img,
                                             const Shape& kern) {
  const int dim = a.convdim;
  ConvGeometry g;
  g.batch = img[0];
  g.channels = img[1];
  g.filters = kern[0];
  g.groups = a.num_groups;
  g.flip = a.filter_flip;
  if (g.channels % g.groups != 0) {
    return Invalid(op, absl::StrCat("number of input channels must be divisible by num_groups: "
                                    "the image has shape ",
                                    ShapeToString(img), " and num_groups is ", g.groups));
  }
  if (g.filters % g.groups != 0) {
    return Invalid(op, absl::StrCat("number of filters must be divisible by num_groups: the "
                                    "kernel has shape ",
                                    ShapeToString(kern), " and num_groups is ", g.groups));
  }
  if (g.channels / g.groups != kern[1]) {
    return Invalid(
        op, absl::StrCat("the kernel of shape ", ShapeToString(kern), " has ", kern[1],
                         " input channels but the image of shape ", ShapeToString(img), " has ",
                         g.channels / g.groups, " channels per group (", g.groups, " group(s))"));
  }
  const int lead = 3 - dim;  // a 2-d convolution's leading axis of 1
  for (int i = 0; i < dim; ++i) {
    const int64_t in = img[2 + i], k = kern[2 + i];
    if (k < 1) {
      return Invalid(op, absl::StrCat("the kernel of shape ", ShapeToString(kern),
                                      " has an empty spatial axis"));
    }
    const int64_t d = a.filter_dilation[i], s = a.subsample[i];
    const std::optional<int64_t> scaled = CheckedMul(k - 1, d);
    const std::optional<int64_t> dilated = scaled ? CheckedAdd(*scaled, 1) : std::nullopt;
    const auto [lo, hi] = PadsOf(a.border_mode, i, dilated.value_or(0));
    std::optional<int64_t> padded = dilated ? CheckedAdd(in, lo) : std::nullopt;
    if (padded) padded = CheckedAdd(*padded, hi);
    if (!dilated || !padded || *padded < *dilated) {
      return Invalid(
          op,
          absl::StrCat("the kernel of shape ", ShapeToString(kern), " dilated by ", d, " spans ",
                       dilated ? absl::StrCat(*dilated) : "more than 2^63", " on spatial axis ", i,
                       ", more than the image of shape ", ShapeToString(img), " padded to ",
                       padded ? absl::StrCat(*padded) : "more than 2^63"));
    }
    g.image[lead + i] = in;
    g.kernel[lead + i] = k;
    g.output[lead + i] = (*padded - *dilated) / s + 1;
    g.stride[lead + i] = s;
    g.dilation[lead + i] = d;
    g.pad[lead + i] = lo;
  }
  // The im2col buffer of one image: (C / groups * kernel size) x output size.
  std::optional<int64_t> rows = g.channels / g.groups, cols = 1;
  for (int i = 0; i < 3; ++i) {
    if (rows) rows = CheckedMul(*rows, g.kernel[i]);
    if (cols) cols = CheckedMul(*cols, g.output[i]);
  }
  const std::optional<int64_t> col = rows && cols ? CheckedMul(*rows, *cols) : std::nullopt;
  if (!col || *col > kMaxTensorBytes / 8 || *rows > kMaxBlasDim || *cols > kMaxBlasDim ||
      g.filters > kMaxBlasDim) {
    return Invalid(
        op, absl::StrCat("the image of shape ", ShapeToString(img), " and the kernel of shape ",
                         ShapeToString(kern), " need an im2col buffer of ",
                         rows ? absl::StrCat(*rows) : "more than 2^63", " x ",
                         cols ? absl::StrCat(*cols) : "more than 2^63",
                         " elements, past what the kernels support (2^31 - 1 per "
                         "side, 2^43 in all)"));
  }
  return g;
}

// The output (or topgrad) shape of a geometry.
Shape OutputShape(const ConvGeometry& g, int dim) {
  Shape out{g.batch, g.filters};
  for (int i = 3 - dim; i < 3; ++i) out.push_back(g.output[i]);
  return out;
}

// The spatial sizes of a gradient's shape input, with the hint's sizes where it has them (the
// two must agree).
absl::StatusOr<Shape> SpatialSizes(const Op& op, const Tensor& shape, const ConvShapeHint& hint,
                                   int dim, absl::string_view hint_name) {
  const Tensor sizes = shape.AsType(DType::kInt64).Contiguous();
  if (sizes.size() != dim) {
    return Invalid(op, absl::StrCat("the shape input has ", sizes.size(), " entries but ", dim,
                                    " spatial sizes are needed"));
  }
  Shape out;
  for (int i = 0; i < dim; ++i) {
    const int64_t v = sizes.data<int64_t>()[i];
    const std::optional<int64_t>& h = hint.dims[2 + i];
    if (v < 0 || v > kMaxTensorBytes || (h && *h != v)) {
      return Invalid(
          op, absl::StrCat(
                  "the shape input ", sizes.ToString(), " is not a valid spatial shape",
                  h ? absl::StrCat(" matching ", hint_name, " ", HintText(hint)) : std::string()));
    }
    out.push_back(v);
  }
  return out;
}

// Aesara's infer_shape entry: the hint's constant where known, else the symbolic size.
VariablePtr HintOr(const ConvShapeHint& hint, int i, const Var& fallback) {
  if (hint.dims[i]) return constant(*hint.dims[i]).ptr();
  return fallback.ptr();
}

// One output size of an axis, as a graph: (in + pads - dilated) // stride + 1.
Var OutputSizeVar(const ConvAttrs& a, int i, const Var& in, const Var& k) {
  const int64_t d = a.filter_dilation[i], s = a.subsample[i];
  const Var dilated = d == 1 ? k : (k - constant(int64_t{1})) * constant(d) + constant(int64_t{1});
  Var size = in - dilated;
  switch (a.border_mode.kind) {
    case ConvBorder::kValid:
      break;
    case ConvBorder::kFull:
      size = size + constant(int64_t{2}) * (dilated - constant(int64_t{1}));
      break;
    case ConvBorder::kHalf:
      size = size + constant(int64_t{2}) * int_div(dilated, constant(int64_t{2}));
      break;
    case ConvBorder::kPads:
      size = size + constant(a.border_mode.pads[2 * i] + a.border_mode.pads[2 * i + 1]);
      break;
  }
  if (s != 1) size = int_div(size, constant(int64_t{s}));
  return size + constant(int64_t{1});
}

// A tensor of `dtype`, contiguous.
Tensor Prepared(const Tensor& t, DType dtype) { return t.AsType(dtype).Contiguous(); }

// The kernel's status as the op's error.
absl::Status Named(const Op& op, const absl::Status& status) {
  if (status.ok() || status.code() != absl::StatusCode::kInvalidArgument) return status;
  return Invalid(op, std::string(status.message()));
}

}  // namespace

namespace op_decl {

AttrValue Codec<ConvBorder>::Encode(const ConvBorder& v) {
  switch (v.kind) {
    case ConvBorder::kValid:
      return std::string("valid");
    case ConvBorder::kFull:
      return std::string("full");
    case ConvBorder::kHalf:
      return std::string("half");
    case ConvBorder::kPads:
      break;
  }
  return v.pads;
}

absl::StatusOr<ConvBorder> Codec<ConvBorder>::Decode(const OpAttrs& a, const std::string& key) {
  if (absl::StatusOr<std::string> mode = a.String(key); mode.ok()) {
    if (*mode == "valid") return ConvBorderMode("valid");
    if (*mode == "full") return ConvBorderMode("full");
    if (*mode == "half") return ConvBorderMode("half");
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid border_mode '", *mode,
        "', which must be either \"valid\", \"full\", \"half\", an integer or a tuple"));
  }
  absl::StatusOr<std::vector<int64_t>> pads = a.Ints(key);
  if (!pads.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute '", key, "' must be a string (a mode) or a list of (low, high) pads"));
  }
  ConvBorder b{ConvBorder::kPads, *pads};
  bool zero = true;
  for (int64_t p : b.pads) zero = zero && p == 0;
  if (zero && !b.pads.empty()) return ConvBorder{};
  return b;
}

std::string Codec<ConvBorder>::Repr(const ConvBorder& v) {
  switch (v.kind) {
    case ConvBorder::kValid:
      return "'valid'";
    case ConvBorder::kFull:
      return "'full'";
    case ConvBorder::kHalf:
      return "'half'";
    case ConvBorder::kPads:
      break;
  }
  std::vector<std::string> axes;
  for (size_t i = 0; i + 1 < v.pads.size(); i += 2) {
    axes.push_back(v.pads[i] == v.pads[i + 1]
                       ? absl::StrCat(v.pads[i])
                       : absl::StrCat("(", v.pads[i], ", ", v.pads[i + 1], ")"));
  }
  return absl::StrCat("(", absl::StrJoin(axes, ", "), axes.size() == 1 ? ",)" : ")");
}

AttrValue Codec<ConvShapeHint>::Encode(const ConvShapeHint& v) {
  std::vector<int64_t> out;
  for (const auto& d : v.dims) out.push_back(d.value_or(-1));
  return out;
}

absl::StatusOr<ConvShapeHint> Codec<ConvShapeHint>::Decode(const OpAttrs& a,
                                                           const std::string& key) {
  absl::StatusOr<std::vector<int64_t>> v = a.Ints(key);
  if (!v.ok()) return v.status();
  ConvShapeHint h;
  for (int64_t d : *v) {
    if (d < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", key, "' holds ", d, "; sizes are >= 0 (-1 for None)"));
    }
    h.dims.push_back(d == -1 ? std::nullopt : std::optional<int64_t>(d));
  }
  return h;
}

std::string Codec<ConvShapeHint>::Repr(const ConvShapeHint& v) {
  std::vector<std::string> dims;
  for (const auto& d : v.dims) dims.push_back(d ? absl::StrCat(*d) : "None");
  return absl::StrCat("(", absl::StrJoin(dims, ", "), dims.size() == 1 ? ",)" : ")");
}

}  // namespace op_decl

absl::Status ConvAttrs::CheckFor(int dim) const {
  if (convdim != dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute 'convdim' is ", convdim, " but this op convolves ", dim, " axes"));
  }
  if (border_mode.kind == ConvBorder::kPads) {
    if (static_cast<int>(border_mode.pads.size()) != 2 * dim) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid border_mode ", op_decl::Codec<ConvBorder>::Repr(border_mode),
          ", which must be a tuple of length ", dim, " (", 2 * dim, " pads on the wire)"));
    }
    for (int i = 0; i < dim; ++i) {
      const int64_t lo = border_mode.pads[2 * i], hi = border_mode.pads[2 * i + 1];
      if (lo < 0 || hi < 0 || lo > kMaxPad || hi > kMaxPad) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid border_mode ", op_decl::Codec<ConvBorder>::Repr(border_mode),
                         ": pads must be integers in [0, 2^40]"));
      }
      if (lo != hi && dim != 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("Asymmetric padding not implemented for ", dim, "D"));
      }
    }
  }
  RETURN_IF_ERROR(CheckSteps("subsample", subsample, dim));
  RETURN_IF_ERROR(CheckSteps("filter_dilation", filter_dilation, dim));
  RETURN_IF_ERROR(CheckHint("imshp", imshp, dim));
  RETURN_IF_ERROR(CheckHint("kshp", kshp, dim));
  if (num_groups < 1) {
    return absl::InvalidArgumentError("num_groups must have value greater than zero");
  }
  if (unshared) {
    return absl::InvalidArgumentError(
        "unshared (locally connected) convolution is not supported by Kiln");
  }
  return absl::OkStatus();
}

template <ConvDirection Dir, int D>
absl::StatusOr<ApplyPtr> ConvOp<Dir, D>::MakeNode(std::vector<VariablePtr> inputs) const {
  const ConvAttrs& a = this->attrs();
  if (absl::Status s = a.CheckFor(D); !s.ok()) return Invalid(*this, std::string(s.message()));
  const size_t arity = Dir == ConvDirection::kForward ? 2 : 3;
  if (inputs.size() != arity) {
    return Invalid(*this, Dir == ConvDirection::kForward ? "expects 2 inputs (img, kern)"
                          : Dir == ConvDirection::kGradInputs
                              ? "expects 3 inputs (kern, topgrad, shape)"
                              : "expects 3 inputs (img, topgrad, shape)");
  }
  StaticShape out(D + 2, std::nullopt);
  DType dtype;
  if constexpr (Dir == ConvDirection::kForward) {
    ASSIGN_OR_RETURN(const TensorType* img, ExpectConvTensor(*this, inputs, 0, D + 2, "img"));
    ASSIGN_OR_RETURN(const TensorType* kern, ExpectConvTensor(*this, inputs, 1, D + 2, "kern"));
    dtype = img->dtype();
    out[0] = Bcast(img->shape()[0]);
    out[1] = Bcast(kern->shape()[0]);
  } else {
    const bool inputs_grad = Dir == ConvDirection::kGradInputs;
    ASSIGN_OR_RETURN(const TensorType* first,
                     ExpectConvTensor(*this, inputs, 0, D + 2, inputs_grad ? "kern" : "img"));
    ASSIGN_OR_RETURN(const TensorType* top, ExpectConvTensor(*this, inputs, 1, D + 2, "topgrad"));
    RETURN_IF_ERROR(ExpectSpatialShape(*this, inputs, D));
    dtype = first->dtype();
    if (inputs_grad) {
      out[0] = Bcast(top->shape()[0]);
      if (a.num_groups == 1) out[1] = Bcast(first->shape()[1]);
    } else {
      out[0] = Bcast(top->shape()[1]);
      out[1] = Bcast(first->shape()[1]);
    }
  }
  return Apply::Make(this->self(), std::move(inputs), {TensorType::Make(dtype, out)});
}

template <ConvDirection Dir, int D>
absl::StatusOr<std::vector<std::vector<VariablePtr>>> ConvOp<Dir, D>::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const ConvAttrs& a = this->attrs();
  ShapeVars out;
  if constexpr (Dir == ConvDirection::kForward) {
    out.push_back(HintOr(a.imshp, 0, Var(in[0][0])));
    out.push_back(HintOr(a.kshp, 0, Var(in[1][0])));
    for (int i = 0; i < D; ++i) {
      const Var size = OutputSizeVar(a, i, Var(HintOr(a.imshp, 2 + i, Var(in[0][2 + i]))),
                                     Var(HintOr(a.kshp, 2 + i, Var(in[1][2 + i]))));
      if (!size.ok()) return size.status();
      out.push_back(size.ptr());
    }
    return std::vector<ShapeVars>{out};
  }
  const Var spatial(node.inputs()[2]);
  if constexpr (Dir == ConvDirection::kGradInputs) {
    out.push_back(HintOr(a.imshp, 0, Var(in[1][0])));
    const Var channels =
        a.num_groups > 1 ? Var(in[0][1]) * constant(int64_t{a.num_groups}) : Var(in[0][1]);
    out.push_back(HintOr(a.imshp, 1, channels));
  } else {
    out.push_back(HintOr(a.kshp, 0, Var(in[1][1])));
    const Var channels =
        a.num_groups > 1 ? int_div(Var(in[0][1]), constant(int64_t{a.num_groups})) : Var(in[0][1]);
    out.push_back(HintOr(a.kshp, 1, channels));
  }
  const ConvShapeHint& hint = Dir == ConvDirection::kGradInputs ? a.imshp : a.kshp;
  for (int i = 0; i < D; ++i) {
    out.push_back(HintOr(hint, 2 + i, cast(subtensor(spatial, {i}), DType::kInt64)));
  }
  for (const VariablePtr& v : out) {
    if (v == nullptr)
      return absl::InternalError(absl::StrCat(this->Name(), ": shape graph failed"));
  }
  return std::vector<ShapeVars>{out};
}

template <ConvDirection Dir, int D>
absl::Status ConvOp<Dir, D>::Perform(const Apply& node, std::span<const Tensor> inputs,
                                     std::vector<Tensor>& outputs) const {
  const ConvAttrs& a = this->attrs();
  const DType dtype = node.output_ptr(0)->tensor_type()->dtype();
  const Tensor first = Prepared(inputs[0], dtype), top = Prepared(inputs[1], dtype);
  if constexpr (Dir == ConvDirection::kForward) {
    const Tensor& img = first;
    const Tensor& kern = top;
    RETURN_IF_ERROR(CheckAgainstHint(*this, a.imshp, img.shape(), "image", "imshp"));
    RETURN_IF_ERROR(CheckAgainstHint(*this, a.kshp, kern.shape(), "filters", "kshp"));
    ASSIGN_OR_RETURN(const ConvGeometry g, ResolveGeometry(*this, a, img.shape(), kern.shape()));
    const Shape shape = OutputShape(g, D);
    RETURN_IF_ERROR(CheckOutputShape(*this, shape, dtype));
    Tensor out = Tensor::Empty(dtype, shape);
    RETURN_IF_ERROR(Named(*this, ConvForwardKernel(g, img, kern, out)));
    outputs[0] = std::move(out);
    return absl::OkStatus();
  }
  const bool inputs_grad = Dir == ConvDirection::kGradInputs;
  ASSIGN_OR_RETURN(const Shape spatial,
                   SpatialSizes(*this, inputs[2], inputs_grad ? a.imshp : a.kshp, D,
                                inputs_grad ? "imshp" : "kshp"));
  // The forward convolution's image and kernel shapes.
  Shape img_shape, kern_shape;
  if (inputs_grad) {
    kern_shape = first.shape();
    const std::optional<int64_t> channels = CheckedMul(first.shape()[1], a.num_groups);
    if (!channels || *channels > kMaxTensorBytes) {
      return Invalid(*this, absl::StrCat("the kernel of shape ", ShapeToString(first.shape()),
                                         " in ", a.num_groups, " groups has too many channels"));
    }
    img_shape = {top.shape()[0], *channels};
    img_shape.insert(img_shape.end(), spatial.begin(), spatial.end());
  } else {
    img_shape = first.shape();
    kern_shape = {top.shape()[1], first.shape()[1] / a.num_groups};
    kern_shape.insert(kern_shape.end(), spatial.begin(), spatial.end());
  }
  RETURN_IF_ERROR(CheckAgainstHint(*this, a.imshp, img_shape, "image", "imshp"));
  RETURN_IF_ERROR(CheckAgainstHint(*this, a.kshp, kern_shape, "filters", "kshp"));
  ASSIGN_OR_RETURN(const ConvGeometry g, ResolveGeometry(*this, a, img_shape, kern_shape));
  if (OutputShape(g, D) != top.shape()) {
    return Invalid(
        *this, absl::StrCat("invalid ", inputs_grad ? "input_shape" : "filter_shape", " for ",
                            inputs_grad ? "gradInputs" : "gradWeights", ": the given ",
                            inputs_grad ? "input_shape" : "filter_shape",
                            " would produce an output of shape ", ShapeToString(OutputShape(g, D)),
                            ", but the given topgrad has shape ", ShapeToString(top.shape())));
  }
  const Shape& shape = inputs_grad ? img_shape : kern_shape;
  RETURN_IF_ERROR(CheckOutputShape(*this, shape, dtype));
  Tensor out = Tensor::Empty(dtype, shape);
  RETURN_IF_ERROR(Named(*this, inputs_grad ? ConvGradInputsKernel(g, first, top, out)
                                           : ConvGradWeightsKernel(g, first, top, out)));
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

template class ConvOp<ConvDirection::kForward, 2>;
template class ConvOp<ConvDirection::kGradInputs, 2>;
template class ConvOp<ConvDirection::kGradWeights, 2>;
template class ConvOp<ConvDirection::kForward, 3>;
template class ConvOp<ConvDirection::kGradInputs, 3>;
template class ConvOp<ConvDirection::kGradWeights, 3>;

ConvBorder ConvBorderMode(absl::string_view mode) {
  if (mode == "full") return ConvBorder{ConvBorder::kFull, {}};
  if (mode == "half") return ConvBorder{ConvBorder::kHalf, {}};
  return ConvBorder{};
}

ConvBorder ConvBorderPad(int64_t pad, int dim) {
  return ConvBorderPads(std::vector<std::vector<int64_t>>(dim, {pad}));
}

ConvBorder ConvBorderPads(const std::vector<std::vector<int64_t>>& pads_per_axis) {
  ConvBorder b{ConvBorder::kPads, {}};
  bool zero = true;
  for (const auto& axis : pads_per_axis) {
    const int64_t lo = axis.empty() ? 0 : axis[0];
    const int64_t hi = axis.size() > 1 ? axis[1] : lo;
    b.pads.push_back(lo);
    b.pads.push_back(hi);
    zero = zero && lo == 0 && hi == 0;
  }
  return zero ? ConvBorder{} : b;
}

namespace {

template <int D>
absl::StatusOr<OpPtr> MakeConvOpOf(ConvDirection dir, const ConvOptions& o) {
  ConvAttrsOf<D> a;
  a.border_mode = o.border_mode;
  if (!o.subsample.empty()) a.subsample = o.subsample;
  a.filter_flip = o.filter_flip;
  if (!o.input_shape.dims.empty()) a.imshp = o.input_shape;
  if (!o.filter_shape.dims.empty()) a.kshp = o.filter_shape;
  if (!o.filter_dilation.empty()) a.filter_dilation = o.filter_dilation;
  a.num_groups = o.num_groups;
  if (absl::Status s = a.Check(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(ConvTypeName(dir, D), ": ", s.message()));
  }
  switch (dir) {
    case ConvDirection::kForward:
      return OpPtr(std::make_shared<ConvOp<ConvDirection::kForward, D>>(a));
    case ConvDirection::kGradInputs:
      return OpPtr(std::make_shared<ConvOp<ConvDirection::kGradInputs, D>>(a));
    case ConvDirection::kGradWeights:
      break;
  }
  return OpPtr(std::make_shared<ConvOp<ConvDirection::kGradWeights, D>>(a));
}

}  // namespace

absl::StatusOr<OpPtr> MakeConvOp(ConvDirection dir, int dim, const ConvOptions& options) {
  if (dim == 2) return MakeConvOpOf<2>(dir, options);
  if (dim == 3) return MakeConvOpOf<3>(dir, options);
  return absl::InvalidArgumentError(
      absl::StrCat("convolution dimension ", dim, " is not supported (2 or 3)"));
}

Var conv2d(const Var& input, const Var& filters, const ConvOptions& options) {
  return ApplyOp(MakeConvOp(ConvDirection::kForward, 2, options), {input, filters});
}

Var conv3d(const Var& input, const Var& filters, const ConvOptions& options) {
  return ApplyOp(MakeConvOp(ConvDirection::kForward, 3, options), {input, filters});
}

Var conv_grad_wrt_inputs(int dim, const Var& filters, const Var& output_grad,
                         const Var& input_spatial_shape, const ConvOptions& options) {
  return ApplyOp(MakeConvOp(ConvDirection::kGradInputs, dim, options),
                 {filters, output_grad, input_spatial_shape});
}

Var conv_grad_wrt_weights(int dim, const Var& input, const Var& output_grad,
                          const Var& filter_spatial_shape, const ConvOptions& options) {
  return ApplyOp(MakeConvOp(ConvDirection::kGradWeights, dim, options),
                 {input, output_grad, filter_spatial_shape});
}

}  // namespace kiln
