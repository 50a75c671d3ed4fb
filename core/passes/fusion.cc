// fusion: groups of Elemwise nodes -> one Elemwise{Composite{...}} computing them in one pass
// without intermediates (several outputs when values inside are read outside too).

#include <algorithm>

#include "absl/container/flat_hash_map.h"
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

// The Elemwise nodes fused with a root, the variables they read from outside and the values
// computed inside that are read outside too (outputs of the fused node besides the root's).
struct FusionGroup {
  absl::flat_hash_set<const Apply*> members;
  std::vector<VariablePtr> inputs;
  std::vector<VariablePtr> shared_outputs;
};

// From `roots` (the first is the group's root; the others read a value the group shares),
// absorbs Elemwise producers of the same rank, up to kMaxFusedNodes nodes: only those whose
// value nothing outside the group reads, or, with `share`, any (their value becomes an output of
// the fused node too).
FusionGroup GrowGroup(const FunctionGraph& fg, const std::vector<Apply*>& roots, bool share) {
  FusionGroup g;
  Apply* root = roots[0];
  g.members.insert(roots.begin(), roots.end());
  const int ndim = root->output_ptr(0)->tensor_type()->ndim();
  const std::vector<StaticDim>& root_shape = root->output_ptr(0)->tensor_type()->shape();
  std::vector<Apply*> frontier = roots, absorbed;
  absl::flat_hash_set<const Variable*> seen_inputs;
  while (!frontier.empty()) {
    Apply* node = frontier.back();
    frontier.pop_back();
    for (const VariablePtr& in : node->inputs()) {
      Apply* producer = in->owner();
      // Stop growing before the group is too large or has too many open inputs to fuse.
      bool absorb = producer != nullptr && !g.members.count(producer) && Fusible(*producer) &&
                    in->tensor_type()->ndim() == ndim && g.members.size() < kMaxFusedNodes &&
                    g.inputs.size() + frontier.size() < kMaxFusedInputs;
      if (absorb) {
        // A value read outside too is an output of the fused node, which has the root's shape:
        // shared only when it has that shape itself.
        bool outside = false;
        for (const FunctionGraph::Client& c : fg.clients(in.get())) {
          outside |= c.node == nullptr || !g.members.count(c.node);
        }
        absorb = !outside || (share && in->tensor_type()->shape() == root_shape);
      }
      if (absorb) {
        g.members.insert(producer);
        frontier.push_back(producer);
        absorbed.push_back(producer);
        continue;
      }
      if (producer != nullptr && g.members.count(producer)) continue;
      // A one-element constant goes into the program; anything else is an input.
      const bool inline_constant =
          in->is_constant() && static_cast<const Constant&>(*in).data().size() == 1;
      if (!inline_constant && seen_inputs.insert(in.get()).second) g.inputs.push_back(in);
    }
  }
  // A value taken as an input before its producer was absorbed by another path is computed
  // inside (as an input too, a fused node sharing it would read its own output).
  std::erase_if(g.inputs, [&](const VariablePtr& v) {
    return v->owner() != nullptr && g.members.count(v->owner());
  });
  // Every member but the root whose value is read outside (the other roots, the absorbed).
  absorbed.insert(absorbed.begin(), roots.begin() + 1, roots.end());
  for (const Apply* member : absorbed) {
    for (const FunctionGraph::Client& c : fg.clients(member->output_ptr(0))) {
      if (c.node == nullptr || !g.members.count(c.node)) {
        g.shared_outputs.push_back(member->output(0));
        break;
      }
    }
  }
  return g;
}

// True when a node outside the group that reads one of its shared values feeds the group (the
// fused node would then depend on itself), or when the walk that would tell passes kBudget
// nodes. (The walk cannot stop at the nodes placed after the root in the pass's order: the
// groups fused before have moved values across that order.)
bool FeedsItself(const FunctionGraph& fg, const FusionGroup& g) {
  constexpr int kBudget = 256;
  std::vector<const Apply*> stack;
  absl::flat_hash_set<const Apply*> seen;
  for (const VariablePtr& v : g.shared_outputs) {
    for (const FunctionGraph::Client& c : fg.clients(v.get())) {
      if (c.node != nullptr && !g.members.count(c.node)) stack.push_back(c.node);
    }
  }
  while (!stack.empty()) {
    const Apply* node = stack.back();
    stack.pop_back();
    if (g.members.count(node)) return true;
    if (!seen.insert(node).second) continue;
    if (static_cast<int>(seen.size()) > kBudget) return true;
    for (int o = 0; o < node->num_outputs(); ++o) {
      for (const FunctionGraph::Client& c : fg.clients(node->output_ptr(o))) {
        if (c.node != nullptr) stack.push_back(c.node);
      }
    }
  }
  return false;
}

}  // namespace

// a + a**10 (add(a, pow(a, 10)) -> Elemwise{Composite{(i0 + (i0 ** 10.0))}}(a): starting from
// each Elemwise, absorb the Elemwise producers of the same rank, up to kMaxFusedNodes nodes;
// a producer whose value is read outside the group too becomes one more output of the fused
// node (one pass computes both), and its other Elemwise readers join as roots, unless that
// would make the fused node feed itself. The producers left out start groups of their own.
absl::StatusOr<bool> FusionPass(FunctionGraph& fg, RewriteContext& ctx) {
  std::vector<Apply*> order = fg.Toposort();
  absl::flat_hash_map<const Apply*, int> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
  bool changed = false;
  absl::flat_hash_set<const Apply*> done;
  for (int k = static_cast<int>(order.size()) - 1; k >= 0; --k) {
    Apply* root = order[k];
    if (done.count(root) || !fg.Contains(root) || !Fusible(*root)) continue;
    // The Elemwise readers of a shared value (of the root's shape, not fused yet) join the
    // group as roots of their own: exp(x) * y and sin(exp(x)) + y become one node.
    std::vector<Apply*> roots = {root};
    FusionGroup group = GrowGroup(fg, roots, /*share=*/true);
    for (bool grew = true; grew && group.members.size() < kMaxFusedNodes;) {
      grew = false;
      for (const VariablePtr& v : group.shared_outputs) {
        for (const FunctionGraph::Client& c : fg.clients(v.get())) {
          Apply* reader = c.node;
          if (reader == nullptr || group.members.count(reader) || done.count(reader) ||
              !Fusible(*reader) || position.find(reader) == position.end() ||
              position.at(reader) >= k ||
              reader->output_ptr(0)->tensor_type()->shape() !=
                  root->output_ptr(0)->tensor_type()->shape()) {
            continue;
          }
          if (std::find(roots.begin(), roots.end(), reader) != roots.end()) continue;
          roots.push_back(reader);
          grew = true;
        }
      }
      if (grew) group = GrowGroup(fg, roots, /*share=*/true);
    }
    if (!group.shared_outputs.empty() && FeedsItself(fg, group)) {
      group = GrowGroup(fg, {root}, /*share=*/false);
    }
    for (const Apply* n : group.members) done.insert(n);
    if (group.members.size() < 2 || group.inputs.size() > kMaxFusedInputs) continue;
    std::vector<Var> in_vars(group.inputs.begin(), group.inputs.end());
    std::vector<Var> out_vars = {Var(root->output(0))};
    out_vars.insert(out_vars.end(), group.shared_outputs.begin(), group.shared_outputs.end());
    absl::StatusOr<std::shared_ptr<const ScalarProgram>> program =
        ScalarProgram::FromGraph(in_vars, out_vars);
    if (!program.ok()) continue;  // something the program cannot express: leave the chain
    std::vector<Var> fused = apply_composite(*program, in_vars);
    if (fused.size() != out_vars.size() ||
        !std::all_of(fused.begin(), fused.end(), [](const Var& v) { return v.ok(); })) {
      continue;
    }
    RETURN_IF_ERROR(ctx.Apply(fg, "elemwise_fusion", *root, {fused[0].ptr()}));
    for (size_t i = 0; i < group.shared_outputs.size(); ++i) {
      RETURN_IF_ERROR(fg.Replace(group.shared_outputs[i].get(), fused[i + 1].ptr(),
                                 "elemwise_fusion"));
    }
    changed = true;
  }
  return changed;
}

}  // namespace kiln
