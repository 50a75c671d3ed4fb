// The optimizer's scan phase (after the first merge, so that what it moves out of loops gets the
// outer graph's rewrites): for each Scan,
//  - scan_push_out_non_seq: nodes of the body that read only non-sequences and constants are
//    computed once, before the loop, and enter it as non-sequences;
//  - scan_pushout_seq_dot: dot(x[t], w) of a sequence and a loop-invariant matrix is one product
//    of all of x's steps before the loop, read by the loop as a new sequence;
//  - scan_save_mem: a state whose every use is its last value (x[-1], as reduce builds) keeps
//    only that value instead of every step's, and a per-step output nothing reads is dropped;
//  - scan_merge_nit_sot: per-step outputs the optimized body computes as one value are one;
//  - the body is optimized by the same mode, once: the runtime links it as it is.
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
#include "core/ops/alloc.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape.h"
#include "core/passes/passes.h"
#include "core/scan/scan.h"
#include "core/scan/scan_op.h"

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

// Moves dot(x[t], w) out of the loop, for x a sequence read at one tap and w a non-sequence
// matrix: the products of all of x's steps are one matrix product (over x reshaped to rows, so
// that a loop of no steps works too), which enters the loop as a new sequence at x's tap.
absl::StatusOr<InnerGraph> PushOutSequenceDots(InnerGraph body, ScanAttrs& attrs,
                                               std::vector<Var>& outer) {
  const size_t n_seq_inputs = attrs.seq_taps.size();
  const size_t first_non_seq = body.inputs.size() - attrs.n_non_seqs;
  // The inner input of each sequence read at one tap: the sequence and that tap.
  absl::flat_hash_map<const Variable*, std::pair<int, int64_t>> single_tap_seq;
  absl::flat_hash_map<const Variable*, int> non_seq;
  for (int k = 0, at = 0; k < attrs.n_seqs(); at += attrs.seq_tap_counts[k++]) {
    if (attrs.seq_tap_counts[k] == 1) {
      single_tap_seq[body.inputs[at].get()] = {k, attrs.seq_taps[at]};
    }
  }
  for (size_t i = first_non_seq; i < body.inputs.size(); ++i) {
    non_seq[body.inputs[i].get()] = static_cast<int>(i - first_non_seq);
  }
  std::vector<std::pair<VariablePtr, VariablePtr>> replace;
  std::vector<VariablePtr> new_inner;
  std::vector<Var> new_outer;
  std::vector<int64_t> new_taps;
  for (Apply* n : IoToposort(body.inputs, body.outputs)) {
    if (!n->op().Is<Dot>()) continue;
    const auto seq = single_tap_seq.find(n->inputs()[0].get());
    const auto w = non_seq.find(n->inputs()[1].get());
    if (seq == single_tap_seq.end() || w == non_seq.end() || Var(n->inputs()[1]).ndim() != 2) {
      continue;
    }
    const auto [k, tap] = seq->second;
    const Var& x = outer[1 + k];
    const Var& m = outer[1 + attrs.n_seqs() + attrs.n_states() + w->second];
    Var all;
    if (x.ndim() == 2) {
      all = dot(x, m);
    } else if (x.ndim() == 3) {
      const Var rows = shape_i(x, 0) * shape_i(x, 1);
      all = reshape(dot(reshape(x, stack({rows, shape_i(x, 2)})), m),
                    stack({shape_i(x, 0), shape_i(x, 1), shape_i(m, 1)}));
    } else {
      continue;
    }
    if (!all.ok()) continue;  // (an outer product core refuses: the loop keeps its own)
    VariablePtr placeholder = Variable::Make(n->output_ptr(0)->type());
    replace.push_back({n->output(0), placeholder});
    new_inner.push_back(std::move(placeholder));
    new_outer.push_back(all);
    new_taps.push_back(tap);
  }
  if (replace.empty()) return body;
  ASSIGN_OR_RETURN(body.outputs, CloneReplace(body.outputs, replace));
  body.inputs.insert(body.inputs.begin() + n_seq_inputs, new_inner.begin(), new_inner.end());
  outer.insert(outer.begin() + 1 + attrs.n_seqs(), new_outer.begin(), new_outer.end());
  attrs.seq_taps.insert(attrs.seq_taps.end(), new_taps.begin(), new_taps.end());
  attrs.seq_tap_counts.insert(attrs.seq_tap_counts.end(), new_taps.size(), 1);
  return body;
}

// Drops the per-step (nit-sot) outputs that nothing reads from the body; returns each old outer
// output's new index, -1 for those dropped.
std::vector<int> DropUnusedNitSots(const FunctionGraph& fg, const Apply& node, ScanAttrs& attrs,
                                   InnerGraph& body) {
  const int n_states = attrs.n_states();
  std::vector<int> new_index(node.num_outputs());
  std::vector<VariablePtr> outputs(body.outputs.begin(), body.outputs.begin() + n_states);
  for (int o = 0; o < node.num_outputs(); ++o) {
    if (o < n_states) {
      new_index[o] = o;
    } else if (fg.clients(node.output_ptr(o)).empty()) {
      new_index[o] = -1;
    } else {
      new_index[o] = static_cast<int>(outputs.size());
      outputs.push_back(body.outputs[o]);
    }
  }
  attrs.n_nit_sot = static_cast<int64_t>(outputs.size()) - n_states;
  if (attrs.as_while) outputs.push_back(body.outputs.back());
  body.outputs = std::move(outputs);
  return new_index;
}

// Per-step outputs that the optimized body computes as one value become one outer output:
// compacts `outputs` and maps `new_index` (as DropUnusedNitSots returns it) onto what is kept.
void MergeEqualNitSots(ScanAttrs& attrs, std::vector<VariablePtr>& outputs,
                       std::vector<int>& new_index) {
  const int n_states = attrs.n_states();
  std::vector<VariablePtr> kept(outputs.begin(), outputs.begin() + n_states);
  std::vector<int> kept_at(outputs.size(), -1);
  absl::flat_hash_map<const Variable*, int> first;
  for (int o = n_states; o < n_states + attrs.n_nit_sot; ++o) {
    const auto [it, fresh] = first.try_emplace(outputs[o].get(), static_cast<int>(kept.size()));
    if (fresh) kept.push_back(outputs[o]);
    kept_at[o] = it->second;
  }
  attrs.n_nit_sot = static_cast<int64_t>(kept.size()) - n_states;
  if (attrs.as_while) kept.push_back(outputs.back());
  for (int& i : new_index) {
    if (i >= n_states) i = kept_at[i];
  }
  outputs = std::move(kept);
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

absl::StatusOr<bool> ScanPass(FunctionGraph& fg, RewriteContext& ctx) {
  // Owned while rewritten: replacing every use of a node's outputs drops it from fg.
  std::vector<ApplyPtr> scans;
  bool changed = false;
  for (Apply* node : fg.Toposort()) {
    if (node->op().Is<Scan>()) scans.push_back(node->shared_from_this());
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
    if (ctx.Enabled("scan_pushout_seq_dot", {"scan"})) {
      ASSIGN_OR_RETURN(body, PushOutSequenceDots(std::move(body), attrs, outer));
    }
    std::vector<bool> now_last(attrs.n_states(), false);
    std::vector<int> new_index(node->num_outputs());
    std::iota(new_index.begin(), new_index.end(), 0);
    if (ctx.Enabled("scan_save_mem", {"scan"})) {
      for (int j = 0; j < attrs.n_states(); ++j) {
        if (!attrs.state_keep_last[j] && OnlyLastUsed(fg, node->output_ptr(j))) {
          attrs.state_keep_last[j] = 1;
          now_last[j] = true;
        }
      }
      new_index = DropUnusedNitSots(fg, *node, attrs, body);
    }
    ASSIGN_OR_RETURN(std::unique_ptr<FunctionGraph> inner,
                     FunctionGraph::Make(body.inputs, body.outputs));
    RewriteOptions inner_options = ctx.options();
    inner_options.trace = false;
    RETURN_IF_ERROR(optimize(*inner, inner_options).status());
    std::vector<VariablePtr> inner_outputs = inner->outputs();
    if (ctx.Enabled("scan_merge_nit_sot", {"scan"})) {
      MergeEqualNitSots(attrs, inner_outputs, new_index);
    }
    ASSIGN_OR_RETURN(std::vector<Var> outs,
                     ApplyScan(attrs, inner->inputs(), inner_outputs, outer));
    if (outs[0]->owner()->op() == *op) continue;  // nothing changed
    changed = true;
    for (int o = 0; o < node->num_outputs(); ++o) {
      Variable* old = node->output_ptr(o);
      if (new_index[o] < 0) continue;
      const Var& now = outs[new_index[o]];
      if (o < attrs.n_states() && now_last[o]) {
        const std::vector<FunctionGraph::Client> uses = fg.clients(old);
        for (const FunctionGraph::Client& c : uses) {
          if (!fg.Contains(c.node)) continue;
          RETURN_IF_ERROR(fg.Replace(c.node->output_ptr(0), now.ptr(), "scan_save_mem"));
        }
      } else if (!fg.clients(old).empty()) {
        RETURN_IF_ERROR(fg.Replace(old, now.ptr(), "scan_optimize"));
      }
    }
  }
  return changed;
}

[[maybe_unused]] const bool kRegistered =
    RegisterExtraPhase(Phase{"scan", 0.5, {"scan"}, {}, ScanPass});

}  // namespace
}  // namespace kiln
