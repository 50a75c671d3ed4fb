#include "core/rewrite/rewriter.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/tensor/status_macros.h"
#include "core/ops/elemwise.h"

namespace kiln {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool Tagged(const std::vector<std::string>& tags, const std::string& tag) {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

}  // namespace

void RewriteDB::Register(Phase phase) {
  auto at = std::upper_bound(phases_.begin(), phases_.end(), phase.position,
                             [](double p, const Phase& x) { return p < x.position; });
  phases_.insert(at, std::move(phase));
}

void RewriteDB::AddRule(const std::string& phase, RewriteRule rule) {
  for (Phase& p : phases_) {
    if (p.name == phase) {
      p.rules.push_back(std::move(rule));
      return;
    }
  }
}

bool RewriteContext::Enabled(const std::string& name, const std::vector<std::string>& tags) const {
  auto named = [&](const std::set<std::string>& set) {
    if (set.count(name)) return true;
    for (const std::string& t : tags) {
      if (set.count(t)) return true;
    }
    return false;
  };
  if (named(options_.exclude)) return false;
  if (named(options_.include)) return true;
  if (options_.mode == OptimizerMode::kNone) return false;
  if (options_.mode == OptimizerMode::kFastCompile) return Tagged(tags, "fast_compile");
  return true;
}

absl::Status RewriteContext::Apply(FunctionGraph& fg, const std::string& rule, kiln::Apply& node,
                                   const std::vector<VariablePtr>& replacements) {
  if (static_cast<int>(replacements.size()) != node.num_outputs()) {
    return absl::InternalError(absl::StrCat(rule, " returned ", replacements.size(),
                                            " replacements for ", node.ToString()));
  }
  ++report_.rules[rule].count;
  if (options_.trace) report_.trace.push_back({rule, node.ToString()});
  const std::vector<VariablePtr> outputs = node.outputs();  // node may die during the loop
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (replacements[i] == nullptr || replacements[i] == outputs[i]) continue;
    RETURN_IF_ERROR(fg.Replace(outputs[i].get(), replacements[i], rule));
  }
  return absl::OkStatus();
}

namespace {

// The enabled rules of an equilibrium by what they track, each list in registration order: by
// op class, by the scalar op of an Elemwise, and those tracking nothing (offered every node).
class RuleIndex {
 public:
  RuleIndex(const std::vector<RewriteRule>& rules, const RewriteContext& ctx)
      : by_scalar_op_(NumScalarOps()) {
    for (const RewriteRule& r : rules) {
      if (!ctx.Enabled(r.name, r.tags)) continue;
      if (r.tracks.empty()) any_.push_back(&r);
      for (OpClassId k : r.tracks) {
        if (k != OpClassIdOf<Elemwise>()) {
          by_class_[k].push_back(&r);
          continue;
        }
        for (int s = 0; s < NumScalarOps(); ++s) {
          if (r.scalar_ops.empty() || absl::c_linear_search(r.scalar_ops, ScalarOpKind(s))) {
            by_scalar_op_[s].push_back(&r);
          }
        }
      }
    }
  }

  // The lists to offer `node`, most specific first.
  std::array<const std::vector<const RewriteRule*>*, 2> For(const Apply& node) const {
    if (node.op().Is<Elemwise>()) {
      const auto& op = static_cast<const Elemwise&>(node.op());
      return {&by_scalar_op_[static_cast<int>(op.scalar_op().kind)], &any_};
    }
    auto it = by_class_.find(node.op().class_id());
    return {it == by_class_.end() ? &none_ : &it->second, &any_};
  }

 private:
  absl::flat_hash_map<OpClassId, std::vector<const RewriteRule*>> by_class_;
  std::vector<std::vector<const RewriteRule*>> by_scalar_op_;
  std::vector<const RewriteRule*> any_, none_;
};

}  // namespace

absl::StatusOr<bool> RunEquilibrium(FunctionGraph& fg, const std::vector<RewriteRule>& rules,
                                    RewriteContext& ctx) {
  const RuleIndex index(rules, ctx);
  absl::flat_hash_map<const RewriteRule*, int> uses;
  // A worklist in topological order: every node once, then whatever a firing may have made
  // rewritable (the replacements' new nodes and the nodes that use the replacements).
  std::deque<Apply*> work;
  absl::flat_hash_set<const Apply*> queued;
  for (Apply* node : fg.Toposort()) {
    work.push_back(node);
    queued.insert(node);
  }
  auto enqueue = [&](Apply* node) {
    if (node != nullptr && queued.insert(node).second) work.push_back(node);
  };
  const auto& interrupt = ctx.options().interrupt;
  const bool profile = ctx.options().profile;
  bool fired_any = false;
  for (uint64_t visits = 1; !work.empty(); ++visits) {
    if (interrupt && visits % 256 == 0) {
      RETURN_IF_ERROR(interrupt());
    }
    Apply* node = work.front();
    work.pop_front();
    queued.erase(node);
    if (!fg.Contains(node)) continue;
    const RewriteRule* fired = nullptr;
    std::optional<std::vector<VariablePtr>> out;
    for (const std::vector<const RewriteRule*>* list : index.For(*node)) {
      for (const RewriteRule* r : *list) {
        if (uses[r] >= ctx.options().max_uses_per_rule) continue;
        const double start = profile ? Now() : 0;
        out = r->apply(fg, *node);
        RewriteReport::RuleStats& stats = ctx.report().rules[r->name];
        ++stats.tried;
        if (profile) stats.seconds += Now() - start;
        if (!out) continue;
        ++uses[r];
        fired = r;
        break;
      }
      if (fired != nullptr) break;
    }
    if (fired == nullptr) continue;
    // The nodes the rule made: above its replacements, down to nodes the graph already holds
    // (found before the replacement imports them).
    std::vector<Apply*> made;
    {
      absl::flat_hash_set<const Apply*> seen;
      std::vector<Apply*> stack;
      for (const VariablePtr& v : *out) {
        if (v != nullptr) stack.push_back(v->owner());
      }
      while (!stack.empty()) {
        Apply* n = stack.back();
        stack.pop_back();
        if (n == nullptr || fg.Contains(n) || !seen.insert(n).second) continue;
        made.push_back(n);
        for (const VariablePtr& in : n->inputs()) stack.push_back(in->owner());
      }
    }
    // The replaced node's producers lose a use, which may let rules that need a single use fire.
    std::vector<Apply*> producers;
    for (const VariablePtr& in : node->inputs()) producers.push_back(in->owner());
    RETURN_IF_ERROR(ctx.Apply(fg, fired->name, *node, *out));
    fired_any = true;
    for (Apply* n : made) enqueue(n);
    for (Apply* n : producers) {
      if (n != nullptr && fg.Contains(n)) enqueue(n);
    }
    for (const VariablePtr& v : *out) {
      if (v == nullptr) continue;
      for (const FunctionGraph::Client& c : fg.clients(v.get())) enqueue(c.node);
    }
  }
  return fired_any;
}

absl::StatusOr<RewriteReport> RunPhases(FunctionGraph& fg, const RewriteDB& db,
                                        const RewriteOptions& options) {
  RewriteReport report;
  RewriteContext ctx(options, report);
  const bool profile = options.profile;
  const double start = profile ? Now() : 0;
  for (const Phase& phase : db.phases()) {
    // A phase runs when enabled itself or, in FAST_COMPILE, for its fast_compile rules.
    const bool whole = ctx.Enabled(phase.name, phase.tags);
    if (!whole && !phase.pass && options.mode != OptimizerMode::kFastCompile && options.include.empty()) {
      continue;
    }
    if (options.interrupt) {
      RETURN_IF_ERROR(options.interrupt());
    }
    if (phase.pass && !whole) continue;
    const double phase_start = profile ? Now() : 0;
    ASSIGN_OR_RETURN(const bool changed, phase.pass ? phase.pass(fg, ctx)
                                                    : RunEquilibrium(fg, phase.rules, ctx));
    if (profile) report.phase_seconds[phase.name] += Now() - phase_start;
    if (!changed) continue;
    report.changed_phases.push_back(phase.name);
    if (options.verify) {
      if (absl::Status s = VerifyGraph(fg); !s.ok()) {
        return absl::InternalError(absl::StrCat("after phase ", phase.name, ": ", s.message()));
      }
    }
  }
  if (profile) report.seconds = Now() - start;
  return report;
}

absl::Status VerifyGraph(const FunctionGraph& fg) {
  RETURN_IF_ERROR(fg.CheckIntegrity());
  for (Apply* node : fg.Toposort()) {
    absl::StatusOr<ApplyPtr> again = node->op().MakeNode(node->inputs());
    if (!again.ok()) {
      return absl::InternalError(
          absl::StrCat(node->ToString(), " no longer type-checks: ", again.status().message()));
    }
    for (int o = 0; o < node->num_outputs(); ++o) {
      const Type& inferred = *(*again)->output_ptr(o)->type();
      const Type& held = *node->output_ptr(o)->type();
      const auto* ti = dynamic_cast<const TensorType*>(&inferred);
      const auto* th = dynamic_cast<const TensorType*>(&held);
      const bool compatible = inferred.Equals(held) ||
                              (ti && th && ti->dtype() == th->dtype() && ti->ndim() == th->ndim());
      if (!compatible) {
        return absl::InternalError(absl::StrCat(node->ToString(), " output ", o, " has type ",
                                                held.ToString(), " but its inputs give ",
                                                inferred.ToString()));
      }
    }
  }
  return absl::OkStatus();
}

std::string RewriteReport::ToString() const {
  std::string out = absl::StrFormat("Rewriter profile: %.3f ms in total\n", seconds * 1e3);
  for (const auto& [name, s] : phase_seconds) {
    absl::StrAppendFormat(&out, "  phase %-24s %9.3f ms\n", name, s * 1e3);
  }
  std::vector<std::pair<std::string, RuleStats>> sorted(rules.begin(), rules.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  absl::StrAppend(&out, "  rule                             applied     tried   time (ms)\n");
  for (const auto& [name, s] : sorted) {
    absl::StrAppendFormat(&out, "  %-32s %7d %9d %11.3f\n", name, s.count, s.tried,
                          s.seconds * 1e3);
  }
  return out;
}

}  // namespace kiln
