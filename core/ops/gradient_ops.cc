#include "core/ops/gradient_ops.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/tensor/tensor_format.h"

namespace kiln {

KILN_REGISTER_OP(GradientOp);

absl::Status GradientOpAttrs::Check() const {
  if (mode >= GradientMode::kConsiderConstant && mode <= GradientMode::kScale) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("bad mode");
}

std::string GradientOp::Name() const {
  switch (attrs().mode) {
    case Mode::kConsiderConstant:
      return "ConsiderConstant";
    case Mode::kZeroGrad:
      return "ZeroGrad";
    case Mode::kUndefinedGrad:
      return "UndefinedGrad";
    case Mode::kDisconnectedGrad:
      return "DisconnectedGrad";
    case Mode::kClip:
      return absl::StrCat("GradClip{clip_lower_bound=", FormatPythonFloat(attrs().a),
                          ", clip_upper_bound=", FormatPythonFloat(attrs().b), "}");
    case Mode::kScale:
      return absl::StrCat("GradScale{multiplier=", FormatPythonFloat(attrs().a), "}");
  }
  return "?";
}

absl::StatusOr<ApplyPtr> GradientOp::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input");
  const TypePtr type = inputs[0]->type();
  if (inputs[0]->tensor_type() == nullptr) {
    return Invalid(
        *this, absl::StrCat("input 0 has type ", type->ToString(), ", which is not a TensorType"));
  }
  return Apply::Make(self(), std::move(inputs), {type});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> GradientOp::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& input_shapes) const {
  return input_shapes;
}

absl::Status GradientOp::Perform(const Apply&, std::span<const Tensor> inputs,
                                 std::vector<Tensor>& outputs) const {
  outputs[0] = inputs[0];
  return absl::OkStatus();
}

std::vector<Var> GradientOp::LOp(const Apply& node, const std::vector<Var>& g) const {
  switch (attrs().mode) {
    case Mode::kConsiderConstant:
    case Mode::kZeroGrad:
      return {zeros_like(g[0])};
    case Mode::kUndefinedGrad:
      return {grad_undefined(Name(), 0, node.inputs()[0])};
    case Mode::kDisconnectedGrad:
      return {disconnected_type()};
    case Mode::kClip:
      return {clip(g[0], attrs().a, attrs().b)};
    case Mode::kScale:
      return {g[0] * attrs().a};
  }
  return {};
}

std::vector<std::vector<bool>> GradientOp::ConnectionPattern(const Apply&) const {
  return {{attrs().mode != Mode::kDisconnectedGrad}};
}

namespace {
Var Through(const Var& x, GradientOp::Mode mode, double a = 0, double b = 0) {
  return ApplyOp(OpPtr(std::make_shared<GradientOp>(mode, a, b)), {x});
}
}  // namespace

Var consider_constant(const Var& x) { return Through(x, GradientOp::Mode::kConsiderConstant); }
Var zero_grad(const Var& x) { return Through(x, GradientOp::Mode::kZeroGrad); }
Var undefined_grad(const Var& x) { return Through(x, GradientOp::Mode::kUndefinedGrad); }
Var disconnected_grad(const Var& x) { return Through(x, GradientOp::Mode::kDisconnectedGrad); }

Var grad_clip(const Var& x, double lower, double upper) {
  if (upper < lower) {
    return Var(absl::InvalidArgumentError("`clip_upper_bound` should be >= `clip_lower_bound`"));
  }
  return Through(x, GradientOp::Mode::kClip, lower, upper);
}

Var grad_scale(const Var& x, double multiplier) {
  return Through(x, GradientOp::Mode::kScale, multiplier);
}

}  // namespace kiln
