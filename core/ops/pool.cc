// Types, shapes, run-time checks and kernels' calls of the pooling ops; their gradients are in
// pool_grad.cc, their loops in pool_kernels.cc.
#include "core/ops/pool.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/pool_kernels.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(Pool);
KILN_REGISTER_OP(MaxPoolGrad);
KILN_REGISTER_OP(AveragePoolGrad);
KILN_REGISTER_OP(DownsampleFactorMaxGradGrad);
KILN_REGISTER_OP(MaxPoolRop);

absl::Status CheckPoolAttrs(const std::string& mode, int ndim, unsigned allowed) {
  const std::pair<const char*, unsigned> modes[] = {{"max", kPoolMax},
                                                    {"sum", kPoolSum},
                                                    {"average_inc_pad", kPoolAverageIncPad},
                                                    {"average_exc_pad", kPoolAverageExcPad}};
  bool known = false;
  std::vector<std::string> names;
  for (const auto& [name, bit] : modes) {
    if ((allowed & bit) == 0) continue;
    names.push_back(absl::StrCat("'", name, "'"));
    known = known || mode == name;
  }
  if (!known) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute 'mode' must be one of ", absl::StrJoin(names, ", "), "; got '", mode, "'"));
  }
  if (ndim < 1 || ndim > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute 'ndim' must be in [1, 64]; got ", ndim));
  }
  return absl::OkStatus();
}

namespace {

constexpr const char* kParamNames[] = {"ws", "stride", "pad"};
constexpr const char* kIntMessages[] = {"Pool downsample parameters must be ints.",
                                        "Stride parameters must be ints.",
                                        "Padding parameters must be ints."};

// The kernels' mode of a mode prop.
pooling::Mode ModeOf(const std::string& mode) {
  if (mode == "max") return pooling::Mode::kMax;
  if (mode == "sum") return pooling::Mode::kSum;
  if (mode == "average_inc_pad") return pooling::Mode::kAverageIncPad;
  return pooling::Mode::kAverageExcPad;
}

// The int64 vector constant of `values`.
Var IntVector(const std::vector<int64_t>& values) {
  return constant(
      *Tensor::FromValues<int64_t>(DType::kInt64, {static_cast<int64_t>(values.size())}, values));
}

// The values of an integer vector constant, or nullopt for another variable.
std::optional<std::vector<int64_t>> ConstantInts(const VariablePtr& v) {
  if (!v->is_constant()) return std::nullopt;
  const Tensor t = static_cast<const Constant&>(*v).data().AsType(DType::kInt64);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.size());
}

// `inputs` with Aesara's defaults filled in: stride = ws, pad = zeros (from `first`, the index
// of ws, with `count` inputs in all), each of the three checked as an integer vector of ndim
// entries (when its length is known). x (input 0) must be a real tensor of >= ndim dims, and
// the other tensor inputs up to `first` of x's rank.
absl::StatusOr<std::vector<VariablePtr>> CheckInputs(const Op& op, std::vector<VariablePtr> inputs,
                                                     int first, int ndim, bool ignore_border,
                                                     const char* names) {
  const int count = first + 3;
  if (static_cast<int>(inputs.size()) < first + 1 || static_cast<int>(inputs.size()) > count) {
    return Invalid(op, absl::StrCat("expects ", first + 1, " to ", count, " inputs (", names, ")"));
  }
  if (static_cast<int>(inputs.size()) < first + 2) inputs.push_back(inputs[first]);
  if (static_cast<int>(inputs.size()) < first + 3) {
    inputs.push_back(IntVector(std::vector<int64_t>(ndim, 0)).ptr());
  }
  const TensorType* x = inputs[0]->tensor_type();
  if (x == nullptr || x->ndim() < ndim || !(IsFloat(x->dtype()) || IsInteger(x->dtype()))) {
    return Invalid(op, absl::StrCat("input 0 (x) has type ", inputs[0]->type()->ToString(),
                                    " but a real tensor of at least ", ndim, " dims is needed"));
  }
  for (int i = 1; i < first; ++i) {
    const TensorType* t = inputs[i]->tensor_type();
    if (t == nullptr || t->ndim() != x->ndim()) {
      return Invalid(op, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                      " but a tensor of x's ", x->ndim(), " dims is needed"));
    }
  }
  for (int k = 0; k < 3; ++k) {
    const int i = first + k;
    const TensorType* t = inputs[i]->tensor_type();
    if (t == nullptr || t->ndim() != 1) {
      return Invalid(
          op, absl::StrCat("input ", i, " (", kParamNames[k], ") has type ",
                           inputs[i]->type()->ToString(), " but an integer vector is needed"));
    }
    if (!IsInteger(t->dtype())) {
      return Invalid(op, absl::StrCat("input ", i, " (", kParamNames[k], ") has type ",
                                      t->ToString(), ": ", kIntMessages[k]));
    }
    if (t->shape()[0] && *t->shape()[0] != ndim) {
      return Invalid(op,
                     absl::StrCat("input ", i, " (", kParamNames[k], ") has type ", t->ToString(),
                                  " but ndim=", ndim, " needs ", ndim, " entries"));
    }
  }
  // Aesara's make_node checks on constant paddings.
  const auto ws = ConstantInts(inputs[first]), pad = ConstantInts(inputs[first + 2]);
  if (pad) {
    for (size_t i = 0; i < pad->size(); ++i) {
      if ((*pad)[i] != 0 && !ignore_border) {
        return Invalid(op, "padding works only with ignore_border=True");
      }
      if (ws && i < ws->size() && (*pad)[i] >= (*ws)[i]) {
        return Invalid(op, absl::StrCat("padding must be smaller than strides (pad[", i,
                                        "] = ", (*pad)[i], ", ws[", i, "] = ", (*ws)[i], ")"));
      }
    }
  }
  return inputs;
}

// x's type with the static shapes Aesara keeps: only broadcastable (size-1) leading dims.
TypePtr PooledType(const TensorType& x, int ndim) {
  StaticShape shape(x.ndim());
  for (int d = 0; d < x.ndim() - ndim; ++d) {
    if (x.shape()[d] == 1) shape[d] = 1;
  }
  return TensorType::Make(x.dtype(), shape);
}

// The dtype the kernels compute a dtype in.
DType ComputeType(DType dtype) {
  if (dtype == DType::kFloat32 || dtype == DType::kFloat16) return DType::kFloat32;
  if (dtype == DType::kFloat64) return DType::kFloat64;
  if (dtype == DType::kUInt64) return DType::kUInt64;
  return DType::kInt64;
}

// t contiguous in `dtype` (without a copy when it already is).
Tensor Prepared(const Tensor& t, DType dtype) {
  return t.dtype() == dtype ? t.Contiguous() : t.AsType(dtype);
}

// The checked geometry of a call: the batch (x's leading dims' product), each pooled dim and
// the pooled output's shape.
struct Geometry {
  int64_t batch = 1;
  std::vector<pooling::Dim> dims;
  Shape out_shape;
};

absl::StatusOr<Geometry> ReadGeometry(const Op& op, int ndim, bool ignore_border, const Tensor& x,
                                      std::span<const Tensor> params) {
  if (x.ndim() < ndim) {
    return Invalid(op, absl::StrCat("x has shape ", ShapeToString(x.shape()), " but ndim=", ndim,
                                    " pooled dims are needed"));
  }
  std::vector<std::vector<int64_t>> values;
  for (int k = 0; k < 3; ++k) {
    if (params[k].ndim() != 1 || params[k].size() != ndim) {
      return Invalid(op, absl::StrCat(kParamNames[k], " must be a vector of size ", ndim,
                                      "; got shape ", ShapeToString(params[k].shape())));
    }
    const Tensor v = params[k].AsType(DType::kInt64);
    values.emplace_back(v.data<int64_t>(), v.data<int64_t>() + ndim);
  }
  Geometry g;
  const int lead = x.ndim() - ndim;
  bool empty = false;
  for (int d = 0; d < lead; ++d) empty = empty || x.shape()[d] == 0;
  for (int d = 0; d < lead && !empty; ++d) g.batch *= x.shape()[d];  // bounded by x's size
  g.out_shape.assign(x.shape().begin(), x.shape().begin() + lead);
  for (int i = 0; i < ndim; ++i) {
    const int64_t w = values[0][i], s = values[1][i], p = values[2][i], n = x.shape()[lead + i];
    if (w < 1) return Invalid(op, absl::StrCat("ws[", i, "] is ", w, ": windows must be >= 1"));
    if (s < 1) return Invalid(op, absl::StrCat("stride[", i, "] is ", s, ": strides must be >= 1"));
    if (p < 0) return Invalid(op, absl::StrCat("pad[", i, "] is ", p, ": padding must be >= 0"));
    if (p != 0 && !ignore_border) {
      return Invalid(op, "padding must be zero when ignore border is False");
    }
    if (p >= w) {
      return Invalid(op, absl::StrCat("padding must be smaller than strides (pad[", i, "] = ", p,
                                      ", ws[", i, "] = ", w, ")"));
    }
    const std::optional<int64_t> padded = CheckedAdd(n, p);
    const std::optional<int64_t> total = padded ? CheckedAdd(*padded, p) : std::nullopt;
    if (!total) {
      return Invalid(op, absl::StrCat("pad[", i, "] = ", p, " is too large for x's dim of ", n));
    }
    const int64_t out = pooling::OutLength(*total, w, s, ignore_border);
    g.dims.push_back({n, w, s, p, out});
    g.out_shape.push_back(out);
  }
  return g;
}

// The error for a tensor input whose shape is not the one pooling x gives.
absl::Status ShapeMismatch(const Op& op, int index, const char* name, const Tensor& t,
                           const Shape& want) {
  return Invalid(op,
                 absl::StrCat("input ", index, " (", name, ") has shape ", ShapeToString(t.shape()),
                              " but pooling x gives ", ShapeToString(want)));
}

// Aesara's Pool.out_shape on symbolic dims: per pooled dim of padded length v,
// max((v - ws) // stride + 1, 0) when ignoring the border, else
// switch(stride >= ws, (v - 1) // stride + 1, max(0, (v - 1 - ws) // stride + 1) + 1); x's
// dims `x`, ws, stride and pad node's inputs from `first`.
absl::StatusOr<std::vector<ShapeVars>> PooledShape(const Apply& node, const ShapeVars& x,
                                                   int first, int nd, bool ignore_border) {
  const int total = static_cast<int>(x.size());
  ShapeVars out(x.begin(), x.end() - nd);
  const Var one = constant(int64_t{1}), zero = constant(int64_t{0}), two = constant(int64_t{2});
  for (int i = 0; i < nd; ++i) {
    auto entry = [&](int k) {
      return cast(subtensor(Var(node.inputs()[first + k]), {Index(i)}), DType::kInt64);
    };
    const Var w = entry(0), s = entry(1), p = entry(2);
    const Var v = Var(x[total - nd + i]) + p * two;
    Var dim = ignore_border ? maximum(int_div(v - w, s) + one, zero)
                            : switch_(ge(s, w), int_div(v - one, s) + one,
                                      maximum(zero, int_div(v - one - w, s) + one) + one);
    if (!dim.ok()) return dim.status();
    out.push_back(dim.ptr());
  }
  return std::vector<ShapeVars>{out};
}

}  // namespace

// ---- Pool ----

absl::StatusOr<ApplyPtr> Pool::MakeNode(std::vector<VariablePtr> inputs) const {
  if (absl::Status s = attrs().Check(); !s.ok()) return Invalid(*this, std::string(s.message()));
  ASSIGN_OR_RETURN(inputs, CheckInputs(*this, std::move(inputs), 1, attrs().ndim,
                                       attrs().ignore_border, "x, ws, stride, pad"));
  TypePtr out = PooledType(*inputs[0]->tensor_type(), attrs().ndim);
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Pool::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  return PooledShape(node, in[0], 1, attrs().ndim, attrs().ignore_border);
}

absl::Status Pool::Perform(const Apply&, std::span<const Tensor> inputs,
                           std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  ASSIGN_OR_RETURN(Geometry g, ReadGeometry(*this, attrs().ndim, attrs().ignore_border, x,
                                            inputs.subspan(1, 3)));
  RETURN_IF_ERROR(CheckOutputShape(*this, g.out_shape, x.dtype()));
  const DType compute = ComputeType(x.dtype());
  Tensor out = Tensor::Empty(compute, g.out_shape);
  if (out.size() > 0) {
    const pooling::Mode mode = ModeOf(attrs().mode);
    for (const pooling::Dim& d : g.dims) {
      if (mode == pooling::Mode::kMax && pooling::HasEmptyWindow(d)) {
        return Invalid(*this, absl::StrCat("x has shape ", ShapeToString(x.shape()),
                                           ": a window holds no element to take the max of"));
      }
    }
    RETURN_IF_ERROR(pooling::Forward(mode, g.batch, g.dims, Prepared(x, compute), out));
  }
  outputs[0] = compute == x.dtype() ? std::move(out) : out.AsType(x.dtype());
  return absl::OkStatus();
}

// ---- MaxPoolGrad ----

absl::StatusOr<ApplyPtr> MaxPoolGrad::MakeNode(std::vector<VariablePtr> inputs) const {
  if (absl::Status s = attrs().Check(); !s.ok()) return Invalid(*this, std::string(s.message()));
  ASSIGN_OR_RETURN(inputs, CheckInputs(*this, std::move(inputs), 3, attrs().ndim,
                                       /*ignore_border=*/true, "x, maxout, gz, ws, stride, pad"));
  TypePtr out = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> MaxPoolGrad::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status MaxPoolGrad::Perform(const Apply&, std::span<const Tensor> inputs,
                                  std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  ASSIGN_OR_RETURN(Geometry g, ReadGeometry(*this, attrs().ndim, attrs().ignore_border, x,
                                            inputs.subspan(3, 3)));
  if (inputs[1].shape() != g.out_shape)
    return ShapeMismatch(*this, 1, "maxout", inputs[1], g.out_shape);
  if (inputs[2].shape() != g.out_shape)
    return ShapeMismatch(*this, 2, "gz", inputs[2], g.out_shape);
  const DType compute = ComputeType(x.dtype());
  // x exists: its shape is bounded. The kernel zeroes each image as it fills it.
  Tensor gx =
      inputs[1].size() > 0 ? Tensor::Empty(compute, x.shape()) : Tensor::Zeros(compute, x.shape());
  if (inputs[1].size() > 0) {
    RETURN_IF_ERROR(pooling::MaxGrad(g.batch, g.dims, Prepared(x, compute),
                                     Prepared(inputs[1], compute), Prepared(inputs[2], compute),
                                     gx));
  }
  outputs[0] = compute == x.dtype() ? std::move(gx) : gx.AsType(x.dtype());
  return absl::OkStatus();
}

// ---- AveragePoolGrad ----

absl::StatusOr<ApplyPtr> AveragePoolGrad::MakeNode(std::vector<VariablePtr> inputs) const {
  if (absl::Status s = attrs().Check(); !s.ok()) return Invalid(*this, std::string(s.message()));
  ASSIGN_OR_RETURN(inputs, CheckInputs(*this, std::move(inputs), 2, attrs().ndim,
                                       /*ignore_border=*/true, "x, gz, ws, stride, pad"));
  TypePtr out = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> AveragePoolGrad::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status AveragePoolGrad::Perform(const Apply&, std::span<const Tensor> inputs,
                                      std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  ASSIGN_OR_RETURN(Geometry g, ReadGeometry(*this, attrs().ndim, attrs().ignore_border, x,
                                            inputs.subspan(2, 3)));
  if (inputs[1].shape() != g.out_shape)
    return ShapeMismatch(*this, 1, "gz", inputs[1], g.out_shape);
  const DType compute = ComputeType(x.dtype());
  Tensor gx =
      inputs[1].size() > 0 ? Tensor::Empty(compute, x.shape()) : Tensor::Zeros(compute, x.shape());
  if (inputs[1].size() > 0) {
    RETURN_IF_ERROR(pooling::AverageGrad(ModeOf(attrs().mode), g.batch, g.dims,
                                         Prepared(inputs[1], compute), gx));
  }
  outputs[0] = compute == x.dtype() ? std::move(gx) : gx.AsType(x.dtype());
  return absl::OkStatus();
}

// ---- DownsampleFactorMaxGradGrad ----

absl::StatusOr<ApplyPtr> DownsampleFactorMaxGradGrad::MakeNode(
    std::vector<VariablePtr> inputs) const {
  if (absl::Status s = attrs().Check(); !s.ok()) return Invalid(*this, std::string(s.message()));
  ASSIGN_OR_RETURN(inputs, CheckInputs(*this, std::move(inputs), 3, attrs().ndim,
                                       attrs().ignore_border, "x, maxout, gz, ws, stride, pad"));
  // Aesara's x.type(), with the pooled dims of maxout's (the output has maxout's shape).
  const TensorType& x = *inputs[0]->tensor_type();
  StaticShape shape = x.shape();
  for (int d = x.ndim() - attrs().ndim; d < x.ndim(); ++d) {
    shape[d] = inputs[1]->tensor_type()->shape()[d];
  }
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(x.dtype(), shape)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> DownsampleFactorMaxGradGrad::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[1]};
}

absl::Status DownsampleFactorMaxGradGrad::Perform(const Apply&, std::span<const Tensor> inputs,
                                                  std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  ASSIGN_OR_RETURN(Geometry g, ReadGeometry(*this, attrs().ndim, attrs().ignore_border, x,
                                            inputs.subspan(3, 3)));
  if (inputs[1].shape() != g.out_shape)
    return ShapeMismatch(*this, 1, "maxout", inputs[1], g.out_shape);
  if (inputs[2].shape() != x.shape()) {
    return Invalid(*this, absl::StrCat("input 2 (gz) has shape ", ShapeToString(inputs[2].shape()),
                                       " but x has shape ", ShapeToString(x.shape())));
  }
  const DType compute = ComputeType(x.dtype());
  Tensor ggz = Tensor::Empty(compute, g.out_shape);  // maxout exists: its shape is bounded
  if (ggz.size() > 0) {
    RETURN_IF_ERROR(pooling::MaxGradGrad(g.batch, g.dims, Prepared(x, compute),
                                         Prepared(inputs[1], compute), Prepared(inputs[2], compute),
                                         ggz));
  }
  outputs[0] = compute == x.dtype() ? std::move(ggz) : ggz.AsType(x.dtype());
  return absl::OkStatus();
}

// ---- Builders ----

Var pool(const Var& input, const Var& ws, const Var& stride, const Var& pad, bool ignore_border,
         const std::string& mode, int ndim) {
  if (absl::Status s = CheckPoolAttrs(mode, ndim, kPoolAnyMode); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("Pool: ", s.message()));
  }
  return ApplyOp(OpPtr(std::make_shared<Pool>(PoolAttrs{ignore_border, mode, ndim})),
                 {input, ws, stride, pad});
}

namespace {

// pool_2d and pool_3d: `name` requires input of >= ndim dims.
Var PoolNd(const char* name, int ndim, const Var& input, const std::vector<int64_t>& ws,
           bool ignore_border, const std::optional<std::vector<int64_t>>& stride,
           const std::vector<int64_t>& pad, const std::string& mode) {
  if (!input.ok()) return input;
  if (input->tensor_type() == nullptr || input.ndim() < ndim) {
    return absl::InvalidArgumentError(absl::StrCat(name, " requires a dimension >= ", ndim));
  }
  return pool(input, IntVector(ws), IntVector(stride ? *stride : ws), IntVector(pad), ignore_border,
              mode, ndim);
}

}  // namespace

Var pool_2d(const Var& input, const std::vector<int64_t>& ws, bool ignore_border,
            const std::optional<std::vector<int64_t>>& stride, const std::vector<int64_t>& pad,
            const std::string& mode) {
  return PoolNd("pool_2d", 2, input, ws, ignore_border, stride, pad, mode);
}

Var pool_3d(const Var& input, const std::vector<int64_t>& ws, bool ignore_border,
            const std::optional<std::vector<int64_t>>& stride, const std::vector<int64_t>& pad,
            const std::string& mode) {
  return PoolNd("pool_3d", 3, input, ws, ignore_border, stride, pad, mode);
}

Var max_pool_2d_same_size(const Var& input, const std::vector<int64_t>& patch_size) {
  const Var out = pool_2d(input, patch_size, /*ignore_border=*/true);
  const MaxPoolGradAttrs attrs{true, "max", 2};
  return ApplyOp(
      OpPtr(std::make_shared<MaxPoolGrad>(attrs)),
      {input, out, out, IntVector(patch_size), IntVector(patch_size), IntVector({0, 0})});
}

// ---- MaxPoolRop ----

absl::StatusOr<ApplyPtr> MaxPoolRop::MakeNode(std::vector<VariablePtr> inputs) const {
  if (absl::Status s = attrs().Check(); !s.ok()) return Invalid(*this, std::string(s.message()));
  ASSIGN_OR_RETURN(inputs, CheckInputs(*this, std::move(inputs), 2, attrs().ndim,
                                       attrs().ignore_border, "x, eval_point, ws, stride, pad"));
  // Aesara's type: x's broadcastable leading dims, eval_point's dtype.
  const TensorType& x = *inputs[0]->tensor_type();
  const DType dtype = inputs[1]->tensor_type()->dtype();
  const TypePtr pooled = PooledType(x, attrs().ndim);
  TypePtr out = TensorType::Make(dtype, static_cast<const TensorType&>(*pooled).shape());
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> MaxPoolRop::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  return PooledShape(node, in[0], 2, attrs().ndim, attrs().ignore_border);
}

absl::Status MaxPoolRop::Perform(const Apply&, std::span<const Tensor> inputs,
                                 std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  const Tensor& ex = inputs[1];
  ASSIGN_OR_RETURN(Geometry g, ReadGeometry(*this, attrs().ndim, attrs().ignore_border, x,
                                            inputs.subspan(2, 3)));
  if (ex.shape() != x.shape()) return ShapeMismatch(*this, 1, "eval_point", ex, x.shape());
  RETURN_IF_ERROR(CheckOutputShape(*this, g.out_shape, ex.dtype()));
  Tensor out = Tensor::Empty(ex.dtype(), g.out_shape);
  if (out.size() > 0) {
    for (const pooling::Dim& d : g.dims) {
      if (pooling::HasEmptyWindow(d)) {
        return Invalid(*this, absl::StrCat("x has shape ", ShapeToString(x.shape()),
                                           ": a window holds no element to take the max of"));
      }
    }
    Tensor argmax = Tensor::Empty(DType::kInt64, {out.size()});
    RETURN_IF_ERROR(
        pooling::WindowArgmax(g.batch, g.dims, Prepared(x, ComputeType(x.dtype())), argmax));
    // Each output takes eval_point's element at its window's argmax, in the same image.
    int64_t image = 1, out_image = 1;
    for (const pooling::Dim& d : g.dims) image *= d.n, out_image *= d.out;
    const Tensor e = ex.Contiguous();
    const size_t size = DTypeSize(e.dtype());
    const char* src = static_cast<const char*>(e.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    const int64_t* at = argmax.data<int64_t>();
    for (int64_t k = 0; k < out.size(); ++k) {
      const int64_t b = k / out_image;
      std::memcpy(dst + k * size, src + (b * image + at[k]) * size, size);
    }
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

}  // namespace kiln
