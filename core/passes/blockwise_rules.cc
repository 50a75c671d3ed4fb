// PyTensor's local_useless_unbatched_blockwise (pytensor/tensor/rewriting/blockwise.py): a
// Blockwise whose inputs have no batch dims is its core op applied directly.
#include "core/passes/blockwise_rules.h"

#include <vector>

#include "core/ops/blockwise.h"
#include "core/passes/passes.h"
#include "core/passes/rule_util.h"

namespace kiln {
namespace {

// Blockwise{op, sig}(x, y) with no batch dims -> op(x, y)
Replacement UselessUnbatchedBlockwise(const FunctionGraph&, Apply& node) {
  const Blockwise* bw = node.op().As<Blockwise>();
  if (bw == nullptr || bw->BatchNdim(node) != 0) return std::nullopt;
  absl::StatusOr<ApplyPtr> core = bw->core_op()->MakeNode(node.inputs());
  if (!core.ok() || (*core)->num_outputs() != node.num_outputs()) return std::nullopt;
  std::vector<VariablePtr> out;
  for (int o = 0; o < node.num_outputs(); ++o) {
    std::optional<VariablePtr> v = FitTo(Var((*core)->output(o)), *node.output_ptr(o));
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

}  // namespace

std::vector<RewriteRule> BlockwiseRules(const std::string& phase) {
  std::vector<RewriteRule> rules = {
      // Blockwise{op, sig}(x, ...) with no batch dims -> op(x, ...)
      PhaseRule("local_useless_unbatched_blockwise", phase, {OpClassIdOf<Blockwise>()},
                UselessUnbatchedBlockwise),
  };
  return rules;
}

}  // namespace kiln
