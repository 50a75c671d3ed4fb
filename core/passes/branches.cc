#include "core/passes/branches.h"

#include "core/ops/ifelse.h"
#include "core/ops/op_util.h"
#include "core/passes/rule_util.h"

namespace kiln {
namespace {

// The node's outputs replaced by `values` (one per output), where each has its output's type;
// one output may also be replaced by a value of a more specific type (ReplaceWith).
Replacement ReplaceOutputs(const Apply& node, const std::vector<VariablePtr>& values) {
  if (values.size() == 1) return ReplaceWith(Var(values[0]), node);
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]->type()->Equals(*node.output_ptr(static_cast<int>(i))->type())) {
      return std::nullopt;
    }
  }
  return values;
}

std::vector<VariablePtr> Branch(const Apply& node, bool then) {
  const int n = static_cast<const IfElse&>(node.op()).n_outs();
  const auto first = node.inputs().begin() + (then ? 1 : 1 + n);
  return std::vector<VariablePtr>(first, first + n);
}

// ifelse(constant c, a, b) -> a if c else b.
Replacement ConstantCondition(const FunctionGraph&, Apply& node) {
  if (!node.inputs()[0]->is_constant()) return std::nullopt;
  const Tensor& c = static_cast<const Constant&>(*node.inputs()[0]).data();
  return ReplaceOutputs(node, Branch(node, c.AsType(DType::kBool).data<bool>()[0]));
}

// ifelse(c, a, a) -> a.
Replacement IdenticalBranches(const FunctionGraph&, Apply& node) {
  const std::vector<VariablePtr> then = Branch(node, true);
  if (then != Branch(node, false)) return std::nullopt;
  return ReplaceOutputs(node, then);
}

}  // namespace

std::vector<RewriteRule> BranchRules() {
  const std::vector<OpKind> declared = {OpKind::kDeclared};
  auto only_ifelse = [](auto rule) {
    return [rule](const FunctionGraph& fg, Apply& node) -> Replacement {
      if (node.op().type_name() != IfElse::kTypeName) return std::nullopt;
      return rule(fg, node);
    };
  };
  return {
      PhaseRule("cond_remove_constant", "canonicalize", declared, only_ifelse(ConstantCondition)),
      PhaseRule("cond_merge_identical", "canonicalize", declared, only_ifelse(IdenticalBranches))};
}

}  // namespace kiln
