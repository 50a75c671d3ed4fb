// function(inputs, outputs): a callable graph. The graph is optimized (FAST_RUN unless the mode
// says otherwise) and then run node by node, fused Elemwise{Composite} nodes in blocks; values
// are released as soon as their last reader has run.
#ifndef KILN_CORE_COMPILE_FUNCTION_H_
#define KILN_CORE_COMPILE_FUNCTION_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/fgraph.h"
#include "core/graph/var.h"
#include "core/rewrite/mode.h"
#include "core/tensor/tensor.h"

namespace kiln {

// Run-time checks, as Aesara's NanGuardMode and DebugMode.
enum class CheckMode {
  kNone,
  // Fails naming the first node whose output holds a NaN or an infinity.
  kNanGuard,
  // Also runs the unoptimized graph and fails naming the first output (and the node computing
  // it) whose values differ beyond rounding.
  kDebug,
};

// What function() does with an input the outputs do not need.
enum class OnUnusedInput { kRaise, kWarn, kIgnore };

// How function() compiles and runs.
struct FunctionOptions {
  OptimizerMode mode = OptimizerMode::kFastRun;
  // (shared variable, new value) pairs, applied together after every output is computed.
  std::vector<std::pair<Var, Var>> updates;
  // (variable, replacement) pairs substituted into the outputs and updates before compiling.
  std::vector<std::pair<Var, Var>> givens;
  OnUnusedInput on_unused_input = OnUnusedInput::kRaise;
  // Inputs (by position) whose new values the caller takes from the outputs and writes back
  // itself (the server's session updates): used even if nothing reads them, as in Aesara.
  std::vector<int> updated_inputs;
  // Accept argument values of any dtype, cast to the input's even when that loses precision.
  bool allow_input_downcast = false;
  CheckMode check = CheckMode::kNone;
  // Record per-node calls and times (Function::ProfileSummary).
  bool profile = false;
  // Polled while optimizing (RewriteOptions::interrupt): a non-OK status stops Make with it.
  std::function<absl::Status()> interrupt;
};

// Per-call statistics of a function.
struct FunctionStats {
  int64_t calls = 0;
  double call_seconds = 0, thunk_seconds = 0;
  double optimize_seconds = 0, link_seconds = 0;
  // Per node of the schedule: calls and seconds (profile mode).
  std::vector<int64_t> node_calls;
  std::vector<double> node_seconds;
  // The largest number of bytes held by live intermediate values and outputs in one call.
  int64_t peak_bytes = 0;
};

class LinkedProgram;

class Function {
 public:
  // Clones the graph between inputs and outputs into a FunctionGraph (shared variables become
  // implicit inputs), optimizes it and schedules it.
  static absl::StatusOr<Function> Make(const std::vector<Var>& inputs,
                                       const std::vector<Var>& outputs,
                                       const FunctionOptions& options = {});

  // Runs the graph on one value per input. A value whose dtype differs is upcast when that is
  // lossless (int64 into float64) and rejected otherwise, as Aesara's TensorType.filter does;
  // its rank and any static dims must match the input's type. The results never share memory
  // with the arguments, the graph's constants or each other. Updates are applied after all
  // outputs are computed, all at once.
  absl::StatusOr<std::vector<Tensor>> operator()(std::vector<Tensor> args) const;
  // Computes only the outputs at `output_subset` (indices into the outputs, in that order), and
  // only the nodes they need; updates are not applied.
  absl::StatusOr<std::vector<Tensor>> operator()(std::vector<Tensor> args,
                                                 const std::vector<int>& output_subset) const;

  // Runs as operator() does, calling `interrupt` before each node: a non-OK status it returns
  // (a deadline passed, the caller went away) stops the call with that status.
  absl::StatusOr<std::vector<Tensor>> Call(std::vector<Tensor> args,
                                           const std::function<absl::Status()>& interrupt) const;

  const FunctionGraph& fgraph() const { return *fgraph_; }
  // True when the function holds shared variables or updates: state of its own, which a stored
  // function cannot carry.
  bool HoldsSharedState() const;
  // A function of a graph optimized already (as the function cache stores it), linked as it is:
  // `options` may set check and profile; the mode is NONE and unused inputs are allowed (the
  // optimizer may have dropped a use).
  static absl::StatusOr<Function> FromOptimized(const std::vector<Var>& inputs,
                                                const std::vector<Var>& outputs,
                                                const FunctionOptions& options = {});
  // Calls, times and peak memory so far.
  FunctionStats stats() const;
  // Seconds per call so far, on average (infinity before the first): stats() without copying
  // its per-node lists, for a caller that asks on every call.
  double mean_call_seconds() const;
  // Aesara's "Function profiling" summary: calls, time in calls and in thunks, compile time
  // (optimize and link), peak memory and the ops by time (per-node times need profile mode).
  std::string ProfileSummary() const;

 private:
  struct State;
  std::shared_ptr<const FunctionGraph> fgraph_;
  std::shared_ptr<const LinkedProgram> program_;
  int num_user_inputs_ = 0;   // then the shared variables' values
  int num_user_outputs_ = 0;  // then the updates' new values
  std::shared_ptr<State> state_;
  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> args,
                                          const std::vector<int>* output_subset,
                                          const std::function<absl::Status()>* interrupt) const;
};

// Aesara's function(inputs, outputs).
inline absl::StatusOr<Function> function(const std::vector<Var>& inputs,
                                         const std::vector<Var>& outputs,
                                         const FunctionOptions& options = {}) {
  return Function::Make(inputs, outputs, options);
}

}  // namespace kiln

#endif  // KILN_CORE_COMPILE_FUNCTION_H_
