#include "core/passes/branches.h"

#include "core/ops/ifelse.h"
#include "core/ops/op_util.h"
#include "core/passes/rule_util.h"
#include "core/ops/shape.h"
#include "core/ops/linalg.h"
#include "core/ops/indexing.h"
#include "core/ops/elemwise.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/alloc.h"

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
  return ReplaceOutputs(
      node, Branch(node, IsTrue(static_cast<const Constant&>(*node.inputs()[0]).data())));
}

// ifelse(c, a, a) -> a.
Replacement IdenticalBranches(const FunctionGraph&, Apply& node) {
  const std::vector<VariablePtr> then = Branch(node, true);
  if (then != Branch(node, false)) return std::nullopt;
  return ReplaceOutputs(node, then);
}

bool IsIfElse(const VariablePtr& v) {
  return v->owner() != nullptr && v->owner()->op().Is<IfElse>();
}

// The ops cheap enough to compute in each branch (Aesara's acceptable_ops).
bool Liftable(const Op& op) {
  return op.Is<Elemwise>() || op.Is<DimShuffle>() || op.Is<ShapeOp>() || op.Is<Reshape>() ||
         op.Is<SpecifyShape>() || op.Is<Subtensor>() || op.Is<IncSubtensor>() || op.Is<Alloc>() ||
         op.Is<Dot>();
}

// op(ifelse(c, x, y)) -> ifelse(c, op(x), op(y)) for a cheap single-output op whose only IfElse
// input has no other use: op then runs only for the branch chosen.
Replacement LiftThroughIfElse(const FunctionGraph& fg, Apply& node) {
  if (!Liftable(node.op()) || node.num_outputs() != 1) return std::nullopt;
  const Apply* cond_node = nullptr;
  for (const VariablePtr& in : node.inputs()) {
    if (!IsIfElse(in)) continue;
    if (cond_node != nullptr && cond_node != in->owner()) return std::nullopt;  // two IfElses
    cond_node = in->owner();
  }
  if (cond_node == nullptr) return std::nullopt;
  for (const VariablePtr& out : cond_node->outputs()) {
    for (const FunctionGraph::Client& c : fg.clients(out.get())) {
      if (c.node != &node) return std::nullopt;
    }
  }
  const int n = static_cast<const IfElse&>(cond_node->op()).n_outs();
  std::vector<VariablePtr> then_in, else_in;
  for (const VariablePtr& in : node.inputs()) {
    const bool chosen = in->owner() == cond_node;
    then_in.push_back(chosen ? cond_node->inputs()[1 + in->index()] : in);
    else_in.push_back(chosen ? cond_node->inputs()[1 + n + in->index()] : in);
  }
  absl::StatusOr<ApplyPtr> then_node = node.op().MakeNode(std::move(then_in));
  absl::StatusOr<ApplyPtr> else_node = node.op().MakeNode(std::move(else_in));
  if (!then_node.ok() || !else_node.ok()) return std::nullopt;
  return ReplaceWith(ifelse(Var(cond_node->inputs()[0]), Var((*then_node)->outputs()[0]),
                            Var((*else_node)->outputs()[0])),
                     node);
}

// ifelse(c, ifelse(c, a, b), d) -> ifelse(c, a, d), and ifelse(c, d, ifelse(c, a, b)) ->
// ifelse(c, d, b): an inner IfElse on the same condition is decided already.
Replacement SameConditionInside(const FunctionGraph&, Apply& node) {
  const int n = static_cast<const IfElse&>(node.op()).n_outs();
  std::vector<VariablePtr> inputs = node.inputs();
  bool changed = false;
  for (int k = 1; k < 1 + 2 * n; ++k) {
    const VariablePtr& v = inputs[k];
    if (!IsIfElse(v) || v->owner()->inputs()[0] != inputs[0]) continue;
    const int inner_n = static_cast<const IfElse&>(v->owner()->op()).n_outs();
    inputs[k] = v->owner()->inputs()[k <= n ? 1 + v->index() : 1 + inner_n + v->index()];
    changed = true;
  }
  if (!changed) return std::nullopt;
  absl::StatusOr<ApplyPtr> merged = node.op().MakeNode(std::move(inputs));
  if (!merged.ok()) return std::nullopt;
  return ReplaceOutputs(node, (*merged)->outputs());
}

}  // namespace

std::vector<RewriteRule> BranchRules() {
  const std::vector<OpClassId> ifelse = {OpClassIdOf<IfElse>()};
  return {
      PhaseRule("cond_remove_constant", "canonicalize", ifelse, ConstantCondition),
      PhaseRule("cond_merge_identical", "canonicalize", ifelse, IdenticalBranches),
      PhaseRule("cond_merge_ifs", "canonicalize", ifelse, SameConditionInside),
      // Every kind it lifts through, Elemwise included (whose rules are indexed by scalar op).
      PhaseRule("ifelse_lift_single_if_through_acceptable_ops", "canonicalize", {},
                LiftThroughIfElse)};
}

}  // namespace kiln
