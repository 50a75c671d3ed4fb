// A function's graph linked for execution: every value gets a slot and every node a step (its op,
// its input and output slots, its in-place plan, the slots it reads for the last time and the
// IfElse branch it belongs to). Run is a loop over the steps that skips the steps of branches
// not chosen; the optional checks (NaN guard, profile) are observers attached when linking,
// costing nothing when there are none.
#ifndef KILN_CORE_RUNTIME_LINKED_H_
#define KILN_CORE_RUNTIME_LINKED_H_

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/graph/fgraph.h"
#include "core/tensor/call_limits.h"
#include "core/runtime/lazy_schedule.h"
#include "core/tensor/tensor.h"

namespace kiln {

// One node, linked.
struct Step {
  const Apply* node;
  std::vector<int> inputs, outputs;             // slots
  std::vector<const TensorType*> output_types;  // checked against what the kernel returns
  // Input positions the node overwrites (its destroy_map): copied first when the value is a
  // graph input, a constant or read again later, and checked for undeclared sharing otherwise.
  std::vector<int> copy_before, check_before;
  std::vector<int> release;  // slots read for the last time here
  // Input positions lent to the kernel: moved out of their slot and back after it, not copied
  // (every input but a second reading of one slot and one copied before it is overwritten).
  std::vector<int> lend;
  // (i, j): input i reads the value lent at position j (one slot read twice).
  std::vector<std::pair<int, int>> alias;
  // The IfElse branch this node's values are for (LinkedProgram::guards()); -1: always runs.
  int guard = -1;
};

// What one call brings and gets back besides the values.
struct CallContext {
  // Called before each step, and by long kernels (call_limits.h); a non-OK status stops the call
  // (deadline, cancellation). Null: the interrupt already installed on the thread, if any.
  const std::function<absl::Status()>* interrupt = nullptr;
  // The steps to run (an output subset), or all when null.
  const std::vector<bool>* needed = nullptr;
  // Filled by observers: seconds per step (profile).
  std::vector<double> step_seconds;
  int64_t peak_bytes = 0;
};

// Looks at each step's outputs as it completes; a non-OK status stops the call.
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual absl::Status After(int index, const Step& step, std::span<const Tensor> outputs,
                             double seconds, CallContext& ctx) const = 0;
};

// The checks Link attaches.
struct LinkOptions {
  bool nan_guard = false;  // an error naming the node on the first NaN or infinity it outputs
  bool profile = false;    // each step timed into CallContext::step_seconds
};

class LinkedProgram {
 public:
  // The program of `fg`, whose nodes it refers to: fg must outlive it.
  static std::shared_ptr<const LinkedProgram> Link(const FunctionGraph& fg,
                                                   const LinkOptions& options);

  // Slots for one call: the constants in place, the rest empty; the caller fills the inputs'.
  // A set given back by RecycleSlots is reused (no allocation per call).
  std::vector<Tensor> NewSlots() const;
  // Takes back the slots of a call that succeeded (a failed call may have left its constants
  // lent): every value but the constants is dropped, and the set kept for the next NewSlots.
  void RecycleSlots(std::vector<Tensor> slots) const;
  // Runs the steps (those `ctx.needed` marks) on `slots`; afterwards the outputs' slots hold
  // their values.
  absl::Status Run(std::vector<Tensor>& slots, CallContext& ctx) const;

  int num_inputs() const { return num_inputs_; }
  const std::vector<int>& output_slots() const { return output_slots_; }
  const std::vector<Step>& steps() const { return steps_; }
  // The IfElse branches steps belong to (core/runtime/lazy_schedule.h), by step index.
  const std::vector<BranchGuard>& guards() const { return guards_; }
  // The graph's constant values, never handed out to be written to.
  const std::vector<Tensor>& constants() const { return constants_; }

 private:
  int num_inputs_ = 0;
  int num_slots_ = 0;
  std::vector<Step> steps_;
  std::vector<BranchGuard> guards_;
  std::vector<int> guard_cond_slots_;  // the slot of each guard's condition
  std::vector<int> output_slots_;
  std::vector<std::pair<int, Tensor>> constant_slots_;
  std::vector<Tensor> constants_;
  bool timed_ = false;
  bool scans_live_ = false;  // some step checks its in-place input against the live values
  std::vector<std::unique_ptr<StepObserver>> observers_;
  std::vector<int> value_slots_;  // the slots that are not constants
  mutable absl::Mutex spare_mu_;
  mutable std::vector<std::vector<Tensor>> spare_slots_ ABSL_GUARDED_BY(spare_mu_);
};

}  // namespace kiln

#endif  // KILN_CORE_RUNTIME_LINKED_H_
