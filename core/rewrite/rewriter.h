// The rewrite engine: named node rewriters, equilibrium and whole-graph phases in a database
// with positions and tags, modes, a trace and a per-rule profile (Aesara's rewriter profile).
#ifndef KILN_CORE_REWRITE_REWRITER_H_
#define KILN_CORE_REWRITE_REWRITER_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/graph/fgraph.h"
#include "core/graph/op.h"
#include "core/ops/scalar_op.h"
#include "core/rewrite/mode.h"

namespace kiln {

// A node rewriter: replacements for the node's outputs (one per output), or nullopt when the
// rule does not apply. `tracks` lists the op kinds it looks at (empty: every node) and, for
// Elemwise, `scalar_ops` the scalar ops (empty: every one); the engine offers a node only the
// rules that track it.
struct RewriteRule {
  std::string name;
  std::vector<std::string> tags;
  std::vector<OpClassId> tracks;
  std::function<std::optional<std::vector<VariablePtr>>(const FunctionGraph&, Apply&)> apply;
  std::vector<ScalarOpKind> scalar_ops;
};

class RewriteContext;

// A whole-graph pass (merge, fusion, in-place...): whether it changed fg, or the error that
// stopped it. Passes are named by their Phase, as XLA's HloPass::Run is by its name().
using GraphPass = std::function<absl::StatusOr<bool>(FunctionGraph&, RewriteContext&)>;

// A phase: an equilibrium of node rewriters run to a fixpoint, or a whole-graph pass.
struct Phase {
  std::string name;
  double position = 0;
  std::vector<std::string> tags;
  std::vector<RewriteRule> rules;  // equilibrium phases
  GraphPass pass;                  // whole-graph phases
};

// The phases in position order.
class RewriteDB {
 public:
  void Register(Phase phase);
  // Adds a rule to the equilibrium phase `phase` (which must exist).
  void AddRule(const std::string& phase, RewriteRule rule);
  const std::vector<Phase>& phases() const { return phases_; }

 private:
  std::vector<Phase> phases_;
};

// Which rewrites run: the mode, then rules or phases included or excluded by name or tag.
struct RewriteOptions {
  OptimizerMode mode = OptimizerMode::kFastRun;
  std::set<std::string> include, exclude;
  // Times one rule may fire in one equilibrium phase (a guard against rules that undo each other).
  int max_uses_per_rule = 100000;
  // Run the verifier after every phase.
  bool verify = false;
  // Record each firing with the node's text in RewriteReport::trace (counts are always kept).
  bool trace = true;
  // Time each rule, phase and the whole run (RewriteReport's seconds); without it the driver
  // reads no clock.
  bool profile = false;
  // Polled before each phase and every 256 nodes an equilibrium visits: a non-OK status (a
  // deadline, a cancelled call, a memory budget) stops the optimizer with that status.
  std::function<absl::Status()> interrupt;
};

// What happened: each firing in order and, per rule, its count and time.
struct RewriteReport {
  struct Firing {
    std::string rule, node;
  };
  struct RuleStats {
    int count = 0;
    int tried = 0;
    double seconds = 0;
  };
  std::vector<Firing> trace;
  std::map<std::string, RuleStats> rules;
  std::map<std::string, double> phase_seconds;
  // The phases that changed the graph, in the order they ran (the verifier checks only after
  // these).
  std::vector<std::string> changed_phases;
  double seconds = 0;
  // The profile as a table (phase times, then rules by time).
  std::string ToString() const;
};

class RewriteContext {
 public:
  RewriteContext(const RewriteOptions& options, RewriteReport& report)
      : options_(options), report_(report) {}
  bool Enabled(const std::string& name, const std::vector<std::string>& tags) const;
  // Replaces node's outputs by `replacements`, recording the firing of `rule` (its count, and
  // the trace).
  absl::Status Apply(FunctionGraph& fg, const std::string& rule, Apply& node,
                     const std::vector<VariablePtr>& replacements);
  const RewriteOptions& options() const { return options_; }
  RewriteReport& report() { return report_; }

 private:
  const RewriteOptions& options_;
  RewriteReport& report_;
};

// Runs the enabled phases of db on fg in position order.
absl::StatusOr<RewriteReport> RunPhases(FunctionGraph& fg, const RewriteDB& db,
                                        const RewriteOptions& options = {});

// Runs node rules over fg to a fixpoint (in-to-out order each sweep); whether any fired.
absl::StatusOr<bool> RunEquilibrium(FunctionGraph& fg, const std::vector<RewriteRule>& rules,
                            RewriteContext& ctx);

// The verifier: fg's integrity plus every node's output types re-inferred from its inputs.
absl::Status VerifyGraph(const FunctionGraph& fg);

}  // namespace kiln

#endif  // KILN_CORE_REWRITE_REWRITER_H_
