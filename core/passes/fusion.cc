// fusion: chains of Elemwise nodes -> one Elemwise{Composite{...}} computing them in one pass
// without intermediates.

#include "absl/container/flat_hash_set.h"
#include "core/ops/composite.h"
#include "core/ops/elemwise.h"
#include "core/passes/passes.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

// Most inputs one fused node takes (a kernel argument list, as Aesara caps it).
constexpr size_t kMaxFusedInputs = 32;
// Most Elemwise nodes one Composite absorbs: a longer chain becomes several Composites, so that
// fusing, naming, merging and serializing stay linear in the graph's size.
constexpr size_t kMaxFusedNodes = 256;

bool Fusible(const Apply& node) {
  if (!node.op().Is<Elemwise>() || node.num_outputs() != 1) return false;
  const auto& op = static_cast<const Elemwise&>(node.op());
  return op.inplace_pattern().empty() && !IsComplex(node.output_ptr(0)->tensor_type()->dtype());
}

}  // namespace

// a + a**10 (add(a, pow(a, 10)) -> Elemwise{Composite{(i0 + (i0 ** 10.0))}}(a): starting from
// each Elemwise, absorb every Elemwise producer whose result is used only inside the group, up to
// kMaxFusedNodes nodes; the producers left out start groups of their own.
absl::StatusOr<bool> FusionPass(FunctionGraph& fg, RewriteContext& ctx) {
  std::vector<Apply*> order = fg.Toposort();
  bool changed = false;
  absl::flat_hash_set<const Apply*> done;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Apply* root = *it;
    if (done.count(root) || !fg.Contains(root) || !Fusible(*root)) continue;
    const int ndim = root->output_ptr(0)->tensor_type()->ndim();
    absl::flat_hash_set<const Apply*> group = {root};
    std::vector<Apply*> frontier = {root};
    std::vector<VariablePtr> inputs;
    absl::flat_hash_set<const Variable*> seen_inputs;
    while (!frontier.empty()) {
      Apply* node = frontier.back();
      frontier.pop_back();
      for (const VariablePtr& in : node->inputs()) {
        Apply* producer = in->owner();
        // Stop growing before the group is too large or has too many open inputs to fuse.
        bool absorb = producer != nullptr && !group.count(producer) && Fusible(*producer) &&
                      in->tensor_type()->ndim() == ndim && group.size() < kMaxFusedNodes &&
                      inputs.size() + frontier.size() < kMaxFusedInputs;
        if (absorb) {
          for (const FunctionGraph::Client& c : fg.clients(in.get())) {
            absorb &= c.node != nullptr && group.count(c.node);
          }
        }
        if (absorb) {
          group.insert(producer);
          frontier.push_back(producer);
          continue;
        }
        if (producer != nullptr && group.count(producer)) continue;
        // A one-element constant goes into the program; anything else is an input.
        const bool inline_constant =
            in->is_constant() && static_cast<const Constant&>(*in).data().size() == 1;
        if (!inline_constant && seen_inputs.insert(in.get()).second) inputs.push_back(in);
      }
    }
    for (const Apply* n : group) done.insert(n);
    if (group.size() < 2 || inputs.size() > kMaxFusedInputs) continue;
    std::vector<Var> in_vars(inputs.begin(), inputs.end());
    absl::StatusOr<std::shared_ptr<const ScalarProgram>> program =
        ScalarProgram::FromGraph(in_vars, {Var(root->output(0))});
    if (!program.ok()) continue;  // something the program cannot express: leave the chain
    std::vector<Var> fused = apply_composite(*program, in_vars);
    if (fused.size() != 1 || !fused[0].ok()) continue;
    RETURN_IF_ERROR(ctx.Apply(fg, "elemwise_fusion", *root, {fused[0].ptr()}));
    changed = true;
  }
  return changed;
}

}  // namespace kiln
