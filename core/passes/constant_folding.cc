// Constant folding: a node whose inputs are all constants is computed once, by its own kernel
// (not Alloc, whose output may be large, nor Print, which shows its value at each call).
#include "core/graph/basic.h"
#include "core/graph/op.h"
#include "core/ops/print.h"
#include "core/passes/passes.h"
#include "core/passes/rule_util.h"
#include "core/tensor/call_limits.h"
#include "core/ops/gradient_ops.h"
#include "core/ops/alloc.h"

namespace kiln {
namespace {

// Outputs of more elements, or more bytes, stay computed at run time (as Aesara keeps Alloc
// unfolded): 2^16 float64 at most (2^15 complex128).
constexpr int64_t kMaxFoldedElements = 1 << 16;
constexpr int64_t kMaxFoldedBytes = kMaxFoldedElements * 8;
// The memory one folded kernel may take (its outputs and scratch): a kernel that needs more is
// left to run time, where the call's own budget and interrupt bound it. It is kept under the
// allocator's large buffers (1 MiB and up, each charged as whole 2 MiB pages), so that a kernel
// whose output is too large to keep fails at its allocation, before it computes anything (a
// model's 500x500 Tri was computed, then thrown away, at every pass).
constexpr int64_t kMaxFoldingBytes = kMaxFoldedBytes * 3;

// The node's kernel on constant inputs under the folding budget; false when it fails or needs
// more memory than folding allows.
bool PerformBounded(const Apply& node, std::span<const Tensor> inputs,
                    std::vector<Tensor>& outputs) {
  MemoryBudgetScope scope(std::make_shared<MemoryBudget>("constant folding's budget per node",
                                                         kMaxFoldingBytes, CurrentBudget()));
  try {
    return node.op().Perform(node, inputs, outputs).ok();
  } catch (const std::bad_alloc&) {
    return false;
  }
}

Replacement Fold(const FunctionGraph&, Apply& node) {
  const Op& op = node.op();
  if (op.Is<Alloc>() || op.Is<GradientOp>() || op.Is<Print>() || node.num_inputs() == 0) {
    return std::nullopt;
  }
  std::vector<Tensor> inputs;
  for (const VariablePtr& in : node.inputs()) {
    if (!in->is_constant()) return std::nullopt;
    inputs.push_back(static_cast<const Constant&>(*in).data());
  }
  std::vector<Tensor> outputs(node.num_outputs());
  if (!PerformBounded(node, inputs, outputs)) return std::nullopt;  // fails at run time
  std::vector<VariablePtr> folded;
  for (int o = 0; o < node.num_outputs(); ++o) {
    if (outputs[o].size() > kMaxFoldedElements || outputs[o].nbytes() > kMaxFoldedBytes) {
      return std::nullopt;
    }
    folded.push_back(Constant::Make(node.output_ptr(o)->type(), outputs[o].Contiguous()));
  }
  return folded;
}

}  // namespace

// f(constants) -> TensorConstant{f(constants)}.
RewriteRule ConstantFoldingRule() {
  return RewriteRule{"constant_folding", {"fast_compile", "canonicalize"}, {}, Fold};
}

}  // namespace kiln
