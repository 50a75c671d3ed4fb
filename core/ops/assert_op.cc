#include "core/ops/assert_op.h"

#include "absl/strings/str_cat.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/op_util.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(Assert);

namespace {
// Longer messages are refused: a message is a sentence, and it travels in every error.
constexpr size_t kMaxMessageBytes = 4096;
}  // namespace

absl::Status AssertAttrs::Check() const {
  if (msg.size() > kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "attribute 'msg' has ", msg.size(), " bytes; at most ", kMaxMessageBytes, " are allowed"));
  }
  return absl::OkStatus();
}

std::string Assert::Name() const { return absl::StrCat("Assert{msg=", attrs().msg, "}"); }

absl::StatusOr<ApplyPtr> Assert::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.empty()) return Invalid(*this, "expects a value and its conditions, got no input");
  RETURN_IF_ERROR(attrs().Check());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType* t = inputs[i]->tensor_type();
    if (t == nullptr) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                         ", which is not a TensorType"));
    }
    if (i > 0 && (t->ndim() != 0 || IsComplex(t->dtype()))) {
      return Invalid(*this, absl::StrCat("input ", i, " (a condition) has type ", t->ToString(),
                                         " but a real or boolean scalar is needed"));
    }
  }
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Assert::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<std::vector<VariablePtr>>{in[0]};
}

absl::Status Assert::Perform(const Apply&, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].size() != 1) {
      return Invalid(*this, absl::StrCat("condition ", i, " has ", inputs[i].size(),
                                         " elements; a scalar is needed"));
    }
    // NumPy's truth: zero is false, anything else (NaN too) is true.
    if (inputs[i].ElementAsDouble(0) == 0) return Invalid(*this, attrs().msg);
  }
  outputs[0] = inputs[0];
  return absl::OkStatus();
}

std::vector<std::vector<bool>> Assert::ConnectionPattern(const Apply& node) const {
  std::vector<std::vector<bool>> pattern(node.num_inputs(), {false});
  pattern[0] = {true};
  return pattern;
}

// Aesara's CheckAndRaise.grad: the output gradient for x, disconnected conditions.
std::vector<Var> Assert::LOp(const Apply& node, const std::vector<Var>& g) const {
  std::vector<Var> grads = {g[0]};
  for (int i = 1; i < node.num_inputs(); ++i) grads.push_back(disconnected_type());
  return grads;
}

Var assert_op(const Var& x, const std::vector<Var>& conds, const std::string& msg) {
  std::vector<Var> inputs = {x};
  inputs.insert(inputs.end(), conds.begin(), conds.end());
  return ApplyOp(std::make_shared<Assert>(AssertAttrs{.msg = msg}), inputs);
}

}  // namespace kiln
