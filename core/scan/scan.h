// aesara.scan: a loop built from a step function, with Aesara's arguments (sequences with taps,
// outputs_info with taps or None, non_sequences, n_steps, truncate_gradient, go_backwards, name,
// strict), shared-variable updates and until conditions; and map, reduce, foldl and foldr.
#ifndef KILN_CORE_SCAN_SCAN_H_
#define KILN_CORE_SCAN_SCAN_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/var.h"
#include "core/scan/scan_op.h"

namespace kiln {

// A tensor iterated over its leading dim; each step reads it at these offsets.
struct ScanSequence {
  Var input;
  std::vector<int64_t> taps = {0};
};
// An output: a state with its initial value, read back at `taps` (negative), or, without an
// initial value, an output that is not fed back (Aesara's None).
struct ScanOutput {
  std::optional<Var> initial;
  std::vector<int64_t> taps = {-1};
};
// Aesara's scan keyword arguments.
struct ScanArgs {
  std::vector<ScanSequence> sequences;
  std::vector<ScanOutput> outputs_info;
  std::vector<Var> non_sequences;
  std::optional<Var> n_steps;
  int64_t truncate_gradient = -1;
  bool go_backwards = false;
  std::string name = "scan_fn";
  // Every variable the step uses from outside must be a non-sequence.
  bool strict = false;
};
// What a step function returns: its outputs (in outputs_info's order), the new values of shared
// variables, and a condition that stops the loop after the step where it is true.
struct ScanStep {
  std::vector<Var> outputs;
  std::vector<std::pair<Var, Var>> updates;
  std::optional<Var> until;
};
// The outputs' values at every step, and the (shared variable, final value) updates.
struct ScanResult {
  std::vector<Var> outputs;
  std::vector<std::pair<Var, Var>> updates;
};

// scan in two phases, for callers whose step function is not C++ (the Python client): Start
// makes the step's arguments, the caller computes its outputs from them, Finish makes the loop.
class ScanBuilder {
 public:
  static absl::StatusOr<ScanBuilder> Start(ScanArgs args);
  // The step function's arguments: each sequence's taps, each state's taps, the non-sequences.
  const std::vector<Var>& step_args() const { return step_args_; }
  absl::StatusOr<ScanResult> Finish(const ScanStep& step) const;

 private:
  ScanArgs args_;
  std::vector<Var> step_args_;
  int n_seq_args_ = 0;
};

using ScanFn = std::function<ScanStep(const std::vector<Var>& args)>;

// aesara.scan(fn, ...).
absl::StatusOr<ScanResult> scan(const ScanFn& fn, ScanArgs args);
// aesara.map: fn over the rows of the sequences.
absl::StatusOr<ScanResult> map(const ScanFn& fn, std::vector<Var> sequences,
                               std::vector<Var> non_sequences = {});
// aesara.reduce / foldl / foldr: fn(rows..., accumulators..., non_sequences...) folded over the
// sequences; the results are the accumulators' final values.
absl::StatusOr<ScanResult> reduce(const ScanFn& fn, std::vector<Var> sequences,
                                  std::vector<Var> initial, std::vector<Var> non_sequences = {},
                                  bool go_backwards = false);
absl::StatusOr<ScanResult> foldl(const ScanFn& fn, std::vector<Var> sequences,
                                 std::vector<Var> initial, std::vector<Var> non_sequences = {});
absl::StatusOr<ScanResult> foldr(const ScanFn& fn, std::vector<Var> sequences,
                                 std::vector<Var> initial, std::vector<Var> non_sequences = {});

// The outputs of a Scan of `attrs` (its inner text is filled in) whose body is the graph between
// inner_inputs and inner_outputs, applied to `outer` (n_steps, sequences, initial states,
// non-sequences).
absl::StatusOr<std::vector<Var>> ApplyScan(ScanAttrs attrs,
                                           const std::vector<VariablePtr>& inner_inputs,
                                           const std::vector<VariablePtr>& inner_outputs,
                                           const std::vector<Var>& outer);

// A loop's inputs by kind, inner and outer, each list in Scan's order of kinds: sequences,
// states (their initial values outside), non-sequences.
struct ScanInputs {
  std::vector<VariablePtr> inner_seqs, inner_states, inner_non_seqs;
  std::vector<Var> seqs, inits, non_seqs;
};
// ApplyScan with the inputs laid out in that order, n_steps first outside.
absl::StatusOr<std::vector<Var>> ApplyScan(ScanAttrs attrs, const ScanInputs& in,
                                           const std::vector<VariablePtr>& inner_outputs,
                                           const Var& n_steps);

}  // namespace kiln

#endif  // KILN_CORE_SCAN_SCAN_H_
