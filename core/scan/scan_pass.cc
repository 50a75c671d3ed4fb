// The optimizer's scan phase (after the first merge, so that what it moves out of loops gets the
// outer graph's rewrites): for each Scan,
//  - scan_push_out_non_seq: nodes of the body that read only non-sequences and constants are
//    computed once, before the loop, and enter it as non-sequences;
//  - scan_save_mem: a state whose every use is its last value (x[-1], as reduce builds) keeps
//    only that value instead of every step's;
//  - the body is optimized by the same mode, once: the runtime links it as it is.
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/graph/status_macros.h"
#include "core/graph/traversal.h"
#include "core/ops/op_util.h"
#include "core/passes/passes.h"
#include "core/scan/scan.h"

namespace kiln {
namespace {

// Moves the body's loop-invariant nodes out: returns the new body and appends the outer values
// of the new non-sequences to `outer`.
absl::StatusOr<InnerGraph> PushOutInvariants(const Scan& op, const Apply& node, InnerGraph body,
                                             ScanAttrs& attrs, std::vector<Var>& outer) {
  const int first_non_seq = op.inner_non_seq(0);
  absl::flat_hash_set<const Variable*> invariant;
  for (size_t i = first_non_seq; i < body.inputs.size(); ++i) invariant.insert(body.inputs[i].get());
  std::vector<Apply*> nodes = IoToposort(body.inputs, body.outputs);
  absl::flat_hash_set<const Apply*> moved;
  for (Apply* n : nodes) {
    bool all = n->num_inputs() > 0;
    for (const VariablePtr& in : n->inputs()) {
      all = all && (in->is_constant() || invariant.contains(in.get()));
    }
    if (!all) continue;
    moved.insert(n);
    for (int o = 0; o < n->num_outputs(); ++o) invariant.insert(n->output_ptr(o));
  }
  // The moved values the loop still reads: by a node left in it, or as an output.
  std::vector<VariablePtr> frontier;
  absl::flat_hash_set<const Variable*> in_frontier;
  auto read = [&](const VariablePtr& v) {
    if (v->owner() != nullptr && moved.contains(v->owner()) && in_frontier.insert(v.get()).second) {
      frontier.push_back(v);
    }
  };
  for (Apply* n : nodes) {
    if (moved.contains(n)) continue;
    for (const VariablePtr& in : n->inputs()) read(in);
  }
  for (const VariablePtr& o : body.outputs) read(o);
  if (frontier.empty()) return body;
  // The moved nodes, cloned onto the outer non-sequences.
  CloneMap memo;
  std::vector<VariablePtr> non_seq_inner(body.inputs.begin() + first_non_seq, body.inputs.end());
  for (int l = 0; l < attrs.n_non_seqs; ++l) {
    memo[non_seq_inner[l].get()] = node.inputs()[op.outer_non_seq(l)];
  }
  const std::vector<VariablePtr> hoisted = Clone(non_seq_inner, frontier, false, &memo);
  std::vector<std::pair<VariablePtr, VariablePtr>> replace;
  for (size_t f = 0; f < frontier.size(); ++f) {
    VariablePtr placeholder = Variable::Make(frontier[f]->type());
    replace.push_back({frontier[f], placeholder});
    body.inputs.push_back(placeholder);
    outer.push_back(Var(hoisted[f]));
  }
  ASSIGN_OR_RETURN(body.outputs, CloneReplace(body.outputs, replace));
  attrs.n_non_seqs += static_cast<int64_t>(frontier.size());
  return body;
}

// True when `v` is read only as v[-1].
bool OnlyLastUsed(const FunctionGraph& fg, const Variable* v) {
  const auto& clients = fg.clients(v);
  if (clients.empty()) return false;
  for (const FunctionGraph::Client& c : clients) {
    if (c.node == nullptr || c.index != 0 || c.node->op().Name() != "Subtensor{int64}" ||
        c.node->num_inputs() != 2 || ConstantInt(c.node->inputs()[1]) != -1) {
      return false;
    }
  }
  return true;
}

absl::Status ScanPass(FunctionGraph& fg, RewriteContext& ctx) {
  // Owned while rewritten: replacing every use of a node's outputs drops it from fg.
  std::vector<ApplyPtr> scans;
  for (Apply* node : fg.Toposort()) {
    if (dynamic_cast<const Scan*>(&node->op()) != nullptr) scans.push_back(node->shared_from_this());
  }
  for (const ApplyPtr& node : scans) {
    if (!fg.Contains(node.get())) continue;
    const auto* op = static_cast<const Scan*>(&node->op());
    ScanAttrs attrs = op->attrs();
    std::vector<Var> outer;
    for (const VariablePtr& in : node->inputs()) outer.push_back(Var(in));
    InnerGraph body = op->inner();
    if (ctx.Enabled("scan_push_out_non_seq", {"scan"})) {
      ASSIGN_OR_RETURN(body, PushOutInvariants(*op, *node, std::move(body), attrs, outer));
    }
    std::vector<bool> now_last(attrs.n_states(), false);
    if (ctx.Enabled("scan_save_mem", {"scan"})) {
      for (int j = 0; j < attrs.n_states(); ++j) {
        if (!attrs.state_keep_last[j] && OnlyLastUsed(fg, node->output_ptr(j))) {
          attrs.state_keep_last[j] = 1;
          now_last[j] = true;
        }
      }
    }
    ASSIGN_OR_RETURN(std::unique_ptr<FunctionGraph> inner,
                     FunctionGraph::Make(body.inputs, body.outputs));
    RewriteOptions inner_options = ctx.options();
    inner_options.trace = false;
    RETURN_IF_ERROR(optimize(*inner, inner_options).status());
    ASSIGN_OR_RETURN(std::vector<Var> outs,
                     ApplyScan(attrs, inner->inputs(), inner->outputs(), outer));
    if (outs[0]->owner()->op() == *op) continue;  // nothing changed
    for (int o = 0; o < node->num_outputs(); ++o) {
      Variable* old = node->output_ptr(o);
      if (o < attrs.n_states() && now_last[o]) {
        const std::vector<FunctionGraph::Client> uses = fg.clients(old);
        for (const FunctionGraph::Client& c : uses) {
          if (!fg.Contains(c.node)) continue;
          RETURN_IF_ERROR(fg.Replace(c.node->output_ptr(0), outs[o].ptr(), "scan_save_mem"));
        }
      } else if (!fg.clients(old).empty()) {
        RETURN_IF_ERROR(fg.Replace(old, outs[o].ptr(), "scan_optimize"));
      }
    }
  }
  return absl::OkStatus();
}

[[maybe_unused]] const bool kRegistered =
    RegisterExtraPhase(Phase{"scan", 0.5, {"scan"}, {}, ScanPass});

}  // namespace
}  // namespace kiln
