#include "core/ops/dimshuffle.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/shape_infer.h"

namespace kiln {
namespace {

std::string PatternText(const std::vector<int>& order) {
  return absl::StrJoin(order, ",", [](std::string* out, int d) {
    absl::StrAppend(out, d == kX ? "x" : absl::StrCat(d));
  });
}

std::string BroadcastableText(const std::vector<bool>& b) {
  return absl::StrCat(
      "(",
      absl::StrJoin(b, ", ",
                    [](std::string* out, bool v) { absl::StrAppend(out, v ? "True" : "False"); }),
      b.size() == 1 ? ",)" : ")");
}

}  // namespace

absl::StatusOr<OpPtr> DimShuffle::Make(std::vector<bool> input_broadcastable,
                                       std::vector<int> new_order, bool inplace) {
  const int ndim = static_cast<int>(input_broadcastable.size());
  std::vector<bool> used(ndim, false);
  for (size_t i = 0; i < new_order.size(); ++i) {
    const int d = new_order[i];
    if (d == kX) continue;
    if (d < 0 || d >= ndim) {
      return absl::InvalidArgumentError(
          absl::StrCat("DimShuffle{", PatternText(new_order), "}: new_order[", i, "] = ", d,
                       " is not a dim of an input with ", ndim, " dims"));
    }
    if (used[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("DimShuffle{", PatternText(new_order), "}: dim ", d, " appears twice"));
    }
    used[d] = true;
  }
  for (int d = 0; d < ndim; ++d) {
    if (!used[d] && !input_broadcastable[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("DimShuffle{", PatternText(new_order), "}: cannot drop dim ", d,
                       ", which is not broadcastable, of an input with broadcastable pattern ",
                       BroadcastableText(input_broadcastable)));
    }
  }
  return OpPtr(
      std::make_shared<DimShuffle>(std::move(input_broadcastable), std::move(new_order), inplace));
}

std::string DimShuffle::Name() const {
  return absl::StrCat(inplace_ ? "InplaceDimShuffle{" : "DimShuffle{", PatternText(new_order_),
                      "}");
}

std::vector<std::pair<int, int>> DimShuffle::view_map() const {
  if (!inplace_) return {};
  return {{0, 0}};
}

absl::StatusOr<ApplyPtr> DimShuffle::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(Name(), ": expects 1 input, got ", inputs.size()));
  }
  const TensorType* in = inputs[0]->tensor_type();
  if (in == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(Name(), ": input 0 has type ",
                                                   inputs[0]->type()->ToString(),
                                                   ", which is not a TensorType"));
  }
  const std::vector<bool> b = in->broadcastable();
  bool compatible = b.size() == input_broadcastable_.size();
  for (size_t d = 0; compatible && d < b.size(); ++d) {
    compatible = b[d] || !input_broadcastable_[d];
  }
  if (!compatible) {
    return absl::InvalidArgumentError(absl::StrCat(
        Name(), ": input 0 has type ", in->ToString(), " but the op expects broadcastable pattern ",
        BroadcastableText(input_broadcastable_), ", got ", BroadcastableText(b)));
  }
  StaticShape shape;
  for (int d : new_order_) shape.push_back(d == kX ? StaticDim(1) : in->shape()[d]);
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(in->dtype(), std::move(shape))});
}

absl::Status DimShuffle::Perform(const Apply& node, std::span<const Tensor> inputs,
                                 std::vector<Tensor>& outputs) const {
  const Tensor& in = inputs[0];
  Shape shape;
  std::vector<int64_t> strides;
  shape.reserve(new_order_.size());
  strides.reserve(new_order_.size());
  for (int d : new_order_) {
    shape.push_back(d == kX ? 1 : in.shape()[d]);
    strides.push_back(d == kX ? 0 : in.strides()[d]);
  }
  for (size_t d = 0; d < input_broadcastable_.size(); ++d) {
    if (std::find(new_order_.begin(), new_order_.end(), static_cast<int>(d)) == new_order_.end() &&
        in.shape()[d] != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          Name(), ": cannot drop dim ", d, " of an input of shape ", ShapeToString(in.shape())));
    }
  }
  outputs[0] = in.View(std::move(shape), std::move(strides));
  return absl::OkStatus();
}

Var dimshuffle(const Var& x, std::vector<int> new_order) {
  if (!x.ok()) return x;
  const TensorType* t = x->tensor_type();
  if (t == nullptr) {
    return Var(absl::InvalidArgumentError(
        absl::StrCat("dimshuffle: ", x->ToString(), " is not a tensor")));
  }
  return ApplyOp(DimShuffle::Make(t->broadcastable(), std::move(new_order)), {x});
}

Var transpose(const Var& x) {
  if (!x.ok()) return x;
  std::vector<int> order(x.ndim());
  std::iota(order.rbegin(), order.rend(), 0);
  return dimshuffle(x, std::move(order));
}

// The kept dims in their new order; 1 for each 'x'.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> DimShuffle::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  ShapeVars out;
  for (int d : new_order_) out.push_back(d == kX ? ConstDim(1) : in[0][d]);
  return std::vector<ShapeVars>{out};
}

// --- Wire attributes ----------------------------------------------------------------------------

KILN_REGISTER_OP_FIELDS(DimShuffle, "input_broadcastable", "new_order", "inplace");

OpAttrs DimShuffle::Attrs() const {
  std::vector<int64_t> broadcastable(input_broadcastable_.begin(), input_broadcastable_.end());
  return {{"input_broadcastable", broadcastable},
          {"new_order", std::vector<int64_t>(new_order_.begin(), new_order_.end())},
          {"inplace", int64_t{inplace_}}};
}

absl::StatusOr<OpPtr> DimShuffle::FromAttrs(const OpAttrs& a) {
  ASSIGN_OR_RETURN(std::vector<int> b, DecodeAttr<std::vector<int>>(a, "input_broadcastable"));
  absl::StatusOr<std::vector<int>> order = DecodeAttr<std::vector<int>>(a, "new_order");
  if (!order.ok()) return order.status();
  absl::StatusOr<std::optional<bool>> inplace = DecodeAttr<std::optional<bool>>(a, "inplace");
  if (!inplace.ok()) return inplace.status();
  return Make(std::vector<bool>(b.begin(), b.end()), *order, inplace->value_or(false));
}

}  // namespace kiln
