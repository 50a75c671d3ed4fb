#include "core/ops/reduce.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"

namespace kiln {
namespace {

const char* ReduceName(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum:
      return "Sum";
    case ReduceKind::kProd:
      return "Prod";
    case ReduceKind::kMax:
      return "Max";
    case ReduceKind::kMin:
      return "Min";
    case ReduceKind::kAll:
      return "All";
    case ReduceKind::kAny:
      return "Any";
  }
  return "?";
}

// Sorted, non-negative, distinct axes of an ndim tensor, or numpy's AxisError text.
absl::StatusOr<std::vector<int>> NormalizeAxes(const std::string& op, std::vector<int> axes,
                                               int ndim) {
  for (int& a : axes) {
    const int original = a;
    if (a < 0) a += ndim;
    if (a < 0 || a >= std::max(1, ndim) || (ndim == 0 && original != 0 && original != -1)) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": axis ", original, " is out of bounds for array of dimension ", ndim));
    }
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": repeated axis"));
  }
  if (ndim == 0) axes.clear();
  return axes;
}

std::vector<int> AllAxes(int ndim) {
  std::vector<int> axes(ndim);
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

// Aesara's default output dtype of Sum and Prod: small integers widen to int64 / uint64.
DType SumOutputDType(DType in) {
  if (IsBool(in) || (IsSignedInt(in) && in != DType::kInt64)) return DType::kInt64;
  if (IsUnsignedInt(in) && in != DType::kUInt64) return DType::kUInt64;
  return in;
}

// Aesara's default accumulator: int64 / uint64 for integers, one float size up for floats.
DType SumAccDType(DType in) {
  if (IsBool(in) || IsSignedInt(in)) return DType::kInt64;
  if (IsUnsignedInt(in)) return DType::kUInt64;
  if (in == DType::kFloat16) return DType::kFloat32;
  if (in == DType::kFloat32) return DType::kFloat64;
  if (in == DType::kComplex64) return DType::kComplex128;
  return in;
}

StaticShape KeptShape(const TensorType& t, const std::vector<int>& axes) {
  StaticShape out;
  for (int d = 0; d < t.ndim(); ++d) {
    if (!std::binary_search(axes.begin(), axes.end(), d)) out.push_back(t.shape()[d]);
  }
  return out;
}

}  // namespace

// --- CAReduce ---------------------------------------------------------------------------------

std::string CAReduce::Name() const {
  const std::string axes = axis_ ? absl::StrJoin(*axis_, ", ") : "";
  switch (reduce_) {
    case ReduceKind::kSum:
    case ReduceKind::kProd: {
      std::string props = axis_ ? absl::StrCat("axis=[", axes, "], ") : "";
      if (dtype_) absl::StrAppend(&props, "dtype=", DTypeName(*dtype_), ", ");
      absl::StrAppend(&props, "acc_dtype=", acc_dtype_ ? DTypeName(*acc_dtype_) : "?");
      return absl::StrCat(reduce_ == ReduceKind::kSum ? "Sum{" : "Prod{mul}{", props, "}");
    }
    case ReduceKind::kMax:
    case ReduceKind::kMin:
      return absl::StrCat(ReduceName(reduce_),
                          reduce_ == ReduceKind::kMax ? "{maximum}" : "{minimum}",
                          axis_ ? absl::StrCat("{", axes, "}") : "");
    default:
      return absl::StrCat(ReduceName(reduce_), axis_ ? absl::StrCat("{", axes, "}") : "");
  }
}

absl::StatusOr<ApplyPtr> CAReduce::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(Name(), ": expects 1 input"));
  }
  const TensorType* t = inputs[0]->tensor_type();
  if (t == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(Name(), ": input 0 has type ",
                                                   inputs[0]->type()->ToString(),
                                                   ", which is not a TensorType"));
  }
  std::vector<int> axes = axis_ ? *axis_ : AllAxes(t->ndim());
  absl::StatusOr<std::vector<int>> normalized = NormalizeAxes(Name(), axes, t->ndim());
  if (!normalized.ok()) return normalized.status();
  DType out = t->dtype();
  std::optional<DType> acc;
  switch (reduce_) {
    case ReduceKind::kSum:
    case ReduceKind::kProd:
      out = dtype_.value_or(SumOutputDType(t->dtype()));
      acc = acc_dtype_.value_or(SumAccDType(PromoteTypes(t->dtype(), out)));
      if (!CanCastSafely(t->dtype(), *acc)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Cannot build ", ReduceName(reduce_), " node with input dtype ", DTypeName(t->dtype()),
            " and acc_dtype ", DTypeName(*acc), ", as precision would be lost."));
      }
      break;
    case ReduceKind::kAll:
    case ReduceKind::kAny:
      out = DType::kBool;
      break;
    default:
      if (IsComplex(t->dtype())) {
        return absl::InvalidArgumentError(
            absl::StrCat(Name(), ": input 0 has type ", t->ToString(), ", which has no order"));
      }
      break;
  }
  // The node's op records the normalized axes (None stays None) and the chosen dtypes.
  auto op = std::make_shared<CAReduce>(reduce_, axis_ ? std::optional(*normalized) : std::nullopt,
                                       dtype_, acc);
  if (reduce_ != ReduceKind::kSum && reduce_ != ReduceKind::kProd) op->acc_dtype_ = std::nullopt;
  OpPtr chosen = (*op == *this) ? self() : OpPtr(op);
  return Apply::Make(chosen, std::move(inputs),
                     {TensorType::Make(out, KeptShape(*t, *normalized))});
}

// --- MaxAndArgmax / Argmax --------------------------------------------------------------------

namespace {

// "MaxAndArgmax{axis=(0,)}", "Argmax{axis=(0, 1)}".
std::string ArgmaxName(absl::string_view type_name, const std::vector<int>& axis) {
  return absl::StrCat(type_name, "{axis=(", absl::StrJoin(axis, ", "),
                      axis.size() == 1 ? ",)}" : ")}");
}

// The node of MaxAndArgmax (with_max: the maximum, then the index) or Argmax (the index).
absl::StatusOr<ApplyPtr> MakeArgmaxNode(const Op& op, OpPtr self, const std::vector<int>& axis,
                                        std::vector<VariablePtr> inputs, bool with_max) {
  if (inputs.size() != 1) return absl::InvalidArgumentError(op.Name() + ": expects 1 input");
  const TensorType* t = inputs[0]->tensor_type();
  if (t == nullptr || IsComplex(t->dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(op.Name(), ": input 0 has type ",
                                                   inputs[0]->type()->ToString(),
                                                   ", which is not an ordered tensor"));
  }
  for (int a : axis) {
    if (a < 0 || a >= t->ndim()) {
      return absl::InvalidArgumentError(absl::StrCat("Computation needs a valid axis number for ",
                                                     t->ndim(), "-D tensor. Got ", a));
    }
  }
  const StaticShape kept = KeptShape(*t, axis);
  std::vector<TypePtr> types;
  if (with_max) types.push_back(TensorType::Make(t->dtype(), kept));
  types.push_back(TensorType::Make(DType::kInt64, kept));
  return Apply::Make(std::move(self), std::move(inputs), types);
}

// The input's shape without the reduced axes, for each output.
std::vector<std::vector<VariablePtr>> ArgmaxShape(const Apply& node, const std::vector<int>& axis,
                                                  const std::vector<VariablePtr>& in) {
  std::vector<VariablePtr> out;
  for (int d = 0; d < static_cast<int>(in.size()); ++d) {
    if (std::find(axis.begin(), axis.end(), d) == axis.end()) out.push_back(in[d]);
  }
  return std::vector<std::vector<VariablePtr>>(node.num_outputs(), out);
}

}  // namespace

std::string MaxAndArgmax::Name() const { return ArgmaxName(kTypeName, axis()); }
std::string Argmax::Name() const { return ArgmaxName(kTypeName, axis()); }

absl::StatusOr<ApplyPtr> MaxAndArgmax::MakeNode(std::vector<VariablePtr> inputs) const {
  return MakeArgmaxNode(*this, self(), axis(), std::move(inputs), /*with_max=*/true);
}
absl::StatusOr<ApplyPtr> Argmax::MakeNode(std::vector<VariablePtr> inputs) const {
  return MakeArgmaxNode(*this, self(), axis(), std::move(inputs), /*with_max=*/false);
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> MaxAndArgmax::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  return ArgmaxShape(node, axis(), in[0]);
}
absl::StatusOr<std::vector<std::vector<VariablePtr>>> Argmax::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  return ArgmaxShape(node, axis(), in[0]);
}

absl::Status ArgmaxAttrs::Check() const {
  for (int a : axis) RETURN_IF_ERROR(CheckDimIndex("axis", a));
  return absl::OkStatus();
}

// --- CumOp ------------------------------------------------------------------------------------

std::string CumOp::Name() const {
  return absl::StrCat("CumOp{", axis() ? absl::StrCat(*axis()) : "None", ", ",
                      product() ? "mul" : "add", "}");
}

absl::StatusOr<ApplyPtr> CumOp::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return absl::InvalidArgumentError(Name() + ": expects 1 input");
  const TensorType* t = inputs[0]->tensor_type();
  if (t == nullptr) {
    return absl::InvalidArgumentError(Name() + ": input 0 is not a tensor");
  }
  if (!axis()) {
    return Apply::Make(self(), std::move(inputs), {TensorType::Make(t->dtype(), {std::nullopt})});
  }
  if (*axis() < 0 || *axis() >= t->ndim()) {
    return absl::InvalidArgumentError(absl::StrCat("axis(=", *axis(), ") out of bounds"));
  }
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {type});
}

// --- DSL --------------------------------------------------------------------------------------

namespace {

// Re-inserts the reduced axes of x as broadcastable dims of the reduction r.
Var KeepDims(const Var& x, const Var& r, const std::vector<int>& reduced) {
  if (!r.ok()) return r;
  std::vector<int> order;
  int next = 0;
  for (int d = 0; d < x.ndim(); ++d) {
    order.push_back(std::binary_search(reduced.begin(), reduced.end(), d) ? kX : next++);
  }
  return dimshuffle(r, order);
}

Var Reduce(ReduceKind kind, const Var& x, const Axes& axes, bool keepdims) {
  if (!x.ok()) return x;
  Var r = ApplyOp(OpPtr(std::make_shared<CAReduce>(kind, axes.axes)), {x});
  if (!keepdims || !r.ok()) return r;
  const auto* op = static_cast<const CAReduce*>(&r->owner()->op());
  return KeepDims(x, r, op->axis() ? *op->axis() : AllAxes(x.ndim()));
}

absl::StatusOr<std::vector<int>> ArgmaxAxes(const Var& x, const Axes& axes) {
  std::vector<int> list = axes.axes ? *axes.axes : AllAxes(x.ndim());
  for (int& a : list) {
    if (a < 0) a += x.ndim();
  }
  std::sort(list.begin(), list.end());
  return list;
}

}  // namespace

Var sum(const Var& x, Axes axes, bool keepdims) {
  return Reduce(ReduceKind::kSum, x, axes, keepdims);
}
Var prod(const Var& x, Axes axes, bool keepdims) {
  return Reduce(ReduceKind::kProd, x, axes, keepdims);
}
Var max(const Var& x, Axes axes, bool keepdims) {
  return Reduce(ReduceKind::kMax, x, axes, keepdims);
}
Var min(const Var& x, Axes axes, bool keepdims) {
  return Reduce(ReduceKind::kMin, x, axes, keepdims);
}
Var all(const Var& x, Axes axes, bool keepdims) {
  return Reduce(ReduceKind::kAll, x, axes, keepdims);
}
Var any(const Var& x, Axes axes, bool keepdims) {
  return Reduce(ReduceKind::kAny, x, axes, keepdims);
}

std::vector<Var> max_and_argmax(const Var& x, Axes axes) {
  if (!x.ok()) return {x, x};
  absl::StatusOr<std::vector<int>> list = ArgmaxAxes(x, axes);
  auto op = std::make_shared<MaxAndArgmax>(ArgmaxAttrs{*list});
  std::vector<VariablePtr> in = {x.ptr()};
  absl::StatusOr<ApplyPtr> node = op->MakeNode(in);
  if (!node.ok()) return {Var(node.status()), Var(node.status())};
  (*node)->output(0)->set_name("max");
  (*node)->output(1)->set_name("argmax");
  return {Var((*node)->output(0)), Var((*node)->output(1))};
}

Var argmax(const Var& x, Axes axes, bool keepdims) {
  if (!x.ok()) return x;
  absl::StatusOr<std::vector<int>> list = ArgmaxAxes(x, axes);
  Var r = ApplyOp(OpPtr(std::make_shared<Argmax>(ArgmaxAttrs{*list})), {x});
  return keepdims ? KeepDims(x, r, *list) : r;
}

Var argmin(const Var& x, Axes axes, bool keepdims) {
  if (!x.ok()) return x;
  // ~x reverses the order of bools and integers without overflow (-x would wrap INT_MIN).
  if (x->tensor_type() && !IsFloat(x.dtype())) return argmax(invert(x), axes, keepdims);
  return argmax(-x, axes, keepdims);
}

Var mean(const Var& x, Axes axes, bool keepdims) {
  if (!x.ok()) return x;
  Var s = sum(x, axes, keepdims);
  if (!s.ok()) return s;
  const DType count_dtype = (s.dtype() == DType::kFloat16 || s.dtype() == DType::kFloat32 ||
                             s.dtype() == DType::kComplex64)
                                ? DType::kFloat32
                                : DType::kFloat64;
  const std::vector<int> reduced = axes.axes ? *ArgmaxAxes(x, axes) : AllAxes(x.ndim());
  for (int a : reduced) s = s / cast(shape_i(x, a), count_dtype);
  if (s.ok() && !IsFloat(s.dtype()) && !IsComplex(s.dtype())) s = cast(s, count_dtype);
  if (s.ok()) s->set_name("mean");
  return s;
}

Var var(const Var& x, Axes axes, bool keepdims, int ddof) {
  if (!x.ok()) return x;
  Var centered = x - mean(x, axes, /*keepdims=*/true);
  Var v;
  if (ddof == 0) {
    v = mean(sqr(centered), axes, keepdims);
  } else {
    v = sum(sqr(centered), axes, keepdims);
    const std::vector<int> reduced = axes.axes ? *ArgmaxAxes(x, axes) : AllAxes(x.ndim());
    for (int a : reduced) v = v / cast(shape_i(x, a) - ddof, DType::kFloat64);
  }
  if (v.ok()) v->set_name("var");
  return v;
}

Var std(const Var& x, Axes axes, bool keepdims, int ddof) {
  Var s = sqrt(var(x, axes, keepdims, ddof));
  if (s.ok()) s->set_name("std");
  return s;
}

Var cumsum(const Var& x, std::optional<int> axis) {
  if (x.ok() && axis && *axis < 0) axis = *axis + x.ndim();
  return ApplyOp(OpPtr(std::make_shared<CumOp>(axis, false)), {x});
}

Var cumprod(const Var& x, std::optional<int> axis) {
  if (x.ok() && axis && *axis < 0) axis = *axis + x.ndim();
  return ApplyOp(OpPtr(std::make_shared<CumOp>(axis, true)), {x});
}

// The kept dims of the input.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> CAReduce::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const int ndim = static_cast<int>(in[0].size());
  std::vector<bool> reduced(ndim, !axis_.has_value());
  if (axis_) {
    for (int a : *axis_) reduced[a] = true;
  }
  ShapeVars out;
  for (int d = 0; d < ndim; ++d) {
    if (!reduced[d]) out.push_back(in[0][d]);
  }
  return std::vector<ShapeVars>{out};
}

// The input's shape, or its size when flattened.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> CumOp::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  if (axis()) return std::vector<ShapeVars>{in[0]};
  return std::vector<ShapeVars>{{ProductOf(in[0])}};
}

// --- Wire attributes ----------------------------------------------------------------------------

KILN_REGISTER_OP_FIELDS(CAReduce, "reduce", "axis", "dtype", "acc_dtype");
KILN_REGISTER_OP(MaxAndArgmax);
KILN_REGISTER_OP(Argmax);
KILN_REGISTER_OP(CumOp);

namespace {
const char* kReduceNames[] = {"sum", "prod", "max", "min", "all", "any"};
}  // namespace

OpAttrs CAReduce::Attrs() const {
  OpAttrs a{{"reduce", kReduceNames[static_cast<int>(reduce_)]}};
  if (axis_) a.Set("axis", std::vector<int64_t>(axis_->begin(), axis_->end()));
  if (dtype_) a.Set("dtype", DTypeName(*dtype_));
  if (acc_dtype_) a.Set("acc_dtype", DTypeName(*acc_dtype_));
  return a;
}

absl::StatusOr<OpPtr> CAReduce::FromAttrs(const OpAttrs& a) {
  ASSIGN_OR_RETURN(std::string r, a.String("reduce"));
  const auto* name = std::find(std::begin(kReduceNames), std::end(kReduceNames), r);
  if (name == std::end(kReduceNames)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown reduction '", r, "'"));
  }
  absl::StatusOr<std::optional<std::vector<int>>> axis =
      DecodeAttr<std::optional<std::vector<int>>>(a, "axis");
  if (!axis.ok()) return axis.status();
  absl::StatusOr<std::optional<DType>> dtype = DecodeAttr<std::optional<DType>>(a, "dtype");
  if (!dtype.ok()) return dtype.status();
  absl::StatusOr<std::optional<DType>> acc = DecodeAttr<std::optional<DType>>(a, "acc_dtype");
  if (!acc.ok()) return acc.status();
  return OpPtr(std::make_shared<CAReduce>(static_cast<ReduceKind>(name - std::begin(kReduceNames)),
                                          *axis, *dtype, *acc));
}

absl::Status CumOpAttrs::Check() const {
  if (mode != "add" && mode != "mul") return absl::InvalidArgumentError("mode must be add or mul");
  return axis ? CheckDimIndex("axis", *axis) : absl::OkStatus();
}

}  // namespace kiln
