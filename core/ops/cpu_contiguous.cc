#include "core/ops/cpu_contiguous.h"

#include "absl/strings/str_cat.h"
#include "core/graph/op_registry.h"
#include "core/ops/op_util.h"

namespace kiln {

KILN_REGISTER_OP(CpuContiguous);

absl::StatusOr<ApplyPtr> CpuContiguous::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) {
    return Invalid(*this, absl::StrCat("expects 1 input (x), got ", inputs.size()));
  }
  if (inputs[0]->tensor_type() == nullptr) {
    return Invalid(*this, absl::StrCat("input 0 has type ", inputs[0]->type()->ToString(),
                                       ", which is not a TensorType"));
  }
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> CpuContiguous::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<std::vector<VariablePtr>>{in[0]};
}

// The copy is charged to the call's memory budget like any output (Tensor::Contiguous).
absl::Status CpuContiguous::Perform(const Apply&, std::span<const Tensor> inputs,
                                    std::vector<Tensor>& outputs) const {
  outputs[0] = inputs[0].Contiguous();
  return absl::OkStatus();
}

// Aesara's grad: the output gradient itself.
std::vector<Var> CpuContiguous::LOp(const Apply&, const std::vector<Var>& g) const {
  return {g[0]};
}

Var cpu_contiguous(const Var& x) { return ApplyOp(std::make_shared<CpuContiguous>(), {x}); }

}  // namespace kiln
