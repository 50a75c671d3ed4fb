#include "core/compile/function.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "core/compile/compile_report.h"
#include "core/graph/op.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
#include "core/passes/passes.h"
#include "core/runtime/linked.h"
#include "core/runtime/shared.h"

namespace kiln {

// What a Function shares between its copies and calls: the shared containers, the updates, the
// liveness of values, the checking mode and the statistics.
struct Function::State {
  std::vector<std::shared_ptr<SharedContainer>> shared;   // one per implicit shared input
  std::vector<std::shared_ptr<SharedContainer>> updated;  // one per update, in output order
  CheckMode check = CheckMode::kNone;
  bool profile = false;
  bool allow_input_downcast = false;
  std::shared_ptr<const Function> reference;  // the unoptimized function (debug mode)
  mutable absl::Mutex mutex;
  FunctionStats stats ABSL_GUARDED_BY(mutex);
};

namespace {

#ifdef NDEBUG
// Debian's Abseil checks every Mutex acquisition against a graph of lock orders (its deadlock
// detector is on unless Abseil itself was built with NDEBUG): about 60 ns per lock, several per
// call. Release builds of Kiln turn it off as they load; debug and sanitizer builds keep it.
const bool kDeadlockDetectionOff = [] {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return true;
}();
#endif

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

absl::StatusOr<std::vector<VariablePtr>> UnwrapAll(const std::vector<Var>& vars) {
  std::vector<VariablePtr> result;
  for (const Var& v : vars) {
    ASSIGN_OR_RETURN(VariablePtr p, Unwrap(v));
    result.push_back(std::move(p));
  }
  return result;
}

// Aesara's TensorType.filter for a value bound to input `index`.
absl::StatusOr<Tensor> FilterInput(const Variable& input, int index, Tensor value,
                                   bool allow_downcast) {
  const TensorType* type = input.tensor_type();
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("Bad input argument ", index, " (", input.ToString(), "): ", why));
  };
  if (type == nullptr) return bad("only tensor inputs are supported");
  if (value.ndim() != type->ndim()) {
    return bad(absl::StrCat("Wrong number of dimensions: expected ", type->ndim(), ", got ",
                            value.ndim(), " with shape ", ShapeToString(value.shape()), "."));
  }
  for (int d = 0; d < type->ndim(); ++d) {
    const StaticDim& dim = type->shape()[d];
    if (dim && *dim != value.shape()[d]) {
      return bad(absl::StrCat("The type's shape (", StaticShapeToString(type->shape()),
                              ") is not compatible with the data's (", ShapeToString(value.shape()),
                              ")"));
    }
  }
  if (value.dtype() == type->dtype()) return value;
  if (!allow_downcast && PromoteTypes(type->dtype(), value.dtype()) != type->dtype()) {
    return bad(absl::StrCat(type->ToString(), " cannot store a value of dtype ",
                            DTypeName(value.dtype()),
                            " without risking loss of precision. Cast the value to ",
                            DTypeName(type->dtype()), " first."));
  }
  return value.AsType(type->dtype());
}

// Calls f with every container locked at once (in address order, so that concurrent calls
// cannot deadlock). Clang's analysis cannot follow a set of mutexes: f is exempted by its caller.
template <typename F>
void WithAllLocked(std::vector<std::shared_ptr<SharedContainer>> containers,
                   F&& f) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  std::sort(containers.begin(), containers.end());
  containers.erase(std::unique(containers.begin(), containers.end()), containers.end());
  for (const auto& c : containers) c->mutex.Lock();
  f();
  for (auto c = containers.rbegin(); c != containers.rend(); ++c) (*c)->mutex.Unlock();
}

}  // namespace

absl::StatusOr<Function> Function::Make(const std::vector<Var>& inputs,
                                        const std::vector<Var>& outputs,
                                        const FunctionOptions& options) {
  CompileReport* const report = CompileReportCapture::Take();
  ASSIGN_OR_RETURN(std::vector<VariablePtr> ins, UnwrapAll(inputs));
  absl::StatusOr<std::vector<VariablePtr>> outs = UnwrapAll(outputs);
  if (!outs.ok()) return outs.status();
  auto state = std::make_shared<State>();
  state->check = options.check;
  state->profile = options.profile;
  state->allow_input_downcast = options.allow_input_downcast;
  std::vector<std::pair<Var, Var>> updates = options.updates;
  if (!options.givens.empty()) {
    // givens: substituted into the outputs and the updates' new values.
    std::vector<std::pair<VariablePtr, VariablePtr>> replace;
    for (const auto& [from, to] : options.givens) {
      if (!from.ok()) return from.status();
      if (!to.ok()) return to.status();
      replace.push_back({from.ptr(), to.ptr()});
    }
    std::vector<VariablePtr> all = *outs;
    for (const auto& u : updates) {
      if (!u.second.ok()) return u.second.status();
      all.push_back(u.second.ptr());
    }
    absl::StatusOr<std::vector<VariablePtr>> replaced = CloneReplace(all, replace);
    if (!replaced.ok()) return replaced.status();
    outs->assign(replaced->begin(), replaced->begin() + outs->size());
    for (size_t u = 0; u < updates.size(); ++u) {
      updates[u].second = Var((*replaced)[outs->size() + u]);
    }
  }
  const int num_user_outputs = static_cast<int>(outs->size());
  // Updates are extra outputs; their targets must be shared variables of the new value's type.
  for (const auto& [target, value] : updates) {
    if (!target.ok()) return target.status();
    if (!value.ok()) return value.status();
    const SharedVariable* s = AsShared(*target);
    if (s == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("update of ", target->ToString(), ": only shared variables can be updated"));
    }
    if (!target->type()->Equals(*value->type())) {
      const TensorType* tv = value->tensor_type();
      if (tv == nullptr || tv->dtype() != target.dtype() || tv->ndim() != target.ndim()) {
        return absl::InvalidArgumentError(
            absl::StrCat("update of ", target->ToString(), ": the new value ", value->ToString(),
                         " has type ", value->type()->ToString(), " but the shared variable has ",
                         target->type()->ToString()));
      }
    }
    state->updated.push_back(s->container());
    outs->push_back(value.ptr());
  }
  // Shared variables the outputs depend on become implicit inputs, after the user's.
  const int num_user_inputs = static_cast<int>(ins.size());
  absl::flat_hash_set<const Variable*> listed;
  for (const VariablePtr& v : ins) listed.insert(v.get());
  auto add_shared = [&](const VariablePtr& v) {
    const SharedVariable* s = AsShared(*v);
    if (s == nullptr || !listed.insert(v.get()).second) return;
    state->shared.push_back(s->container());
    ins.push_back(v);
  };
  for (const VariablePtr& out : *outs) add_shared(out);
  absl::flat_hash_set<const Variable*> used;
  for (const VariablePtr& out : *outs) used.insert(out.get());
  for (Apply* node : IoToposort(ins, *outs)) {
    for (const VariablePtr& in : node->inputs()) {
      add_shared(in);
      used.insert(in.get());
    }
  }
  // An input an update writes is used, even if nothing reads it (an accumulator such as
  // adadelta's running averages that the outputs never read), as in Aesara.
  absl::flat_hash_set<const Variable*> updated;
  for (const auto& [target, value] : updates) updated.insert(target.ptr().get());
  for (int i : options.updated_inputs) {
    if (i >= 0 && i < num_user_inputs) updated.insert(ins[i].get());
  }
  for (int i = 0; i < num_user_inputs; ++i) {
    if (used.count(ins[i].get()) || updated.count(ins[i].get()) ||
        options.on_unused_input == OnUnusedInput::kIgnore) {
      continue;
    }
    const std::string message = absl::StrCat(
        "function was asked to create a function computing outputs given certain inputs, but "
        "the provided input variable at index ",
        i, " is not part of the computational graph needed to compute the outputs: ",
        ins[i]->ToString(),
        ".\nTo make this error into a warning, you can pass the parameter on_unused_input='warn' "
        "to aesara.function. To disable it completely, use on_unused_input='ignore'.");
    if (options.on_unused_input == OnUnusedInput::kRaise) {
      return absl::InvalidArgumentError(absl::StrCat("UnusedInputError: ", message));
    }
    std::cerr << "UserWarning: " << message << "\n";
  }
  const auto compile_start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<FunctionGraph>> fg =
      FunctionGraph::Make(std::move(ins), *std::move(outs));
  if (!fg.ok()) return fg.status();
  RewriteOptions rewrite;
  rewrite.mode = options.mode;
  rewrite.trace = false;
  rewrite.profile = options.profile;
  rewrite.interrupt = options.interrupt;
  if (report != nullptr) report->nodes_before = (*fg)->num_nodes();
  {
    // Kernels that constant folding runs poll the compile's interrupt too.
    InterruptScope folding(&options.interrupt);
    absl::StatusOr<RewriteReport> r = optimize(**fg, rewrite);
    if (!r.ok()) return r.status();
    if (report != nullptr) {
      report->nodes_after = (*fg)->num_nodes();
      for (const auto& [rule, stats] : r->rules) {
        if (stats.count > 0) report->rule_counts[rule] = stats.count;
      }
    }
  }
  const double optimize_seconds = Seconds(compile_start);
  const auto link_start = std::chrono::steady_clock::now();
  Function f;
  f.num_user_inputs_ = num_user_inputs;
  f.num_user_outputs_ = num_user_outputs;
  LinkOptions link;
  link.nan_guard = options.check != CheckMode::kNone;
  link.profile = options.profile;
  f.program_ = LinkedProgram::Link(**fg, link);
  f.fgraph_ = *std::move(fg);
  if (options.check == CheckMode::kDebug) {
    FunctionOptions plain;
    plain.mode = OptimizerMode::kNone;
    plain.updates = options.updates;
    plain.givens = options.givens;
    plain.on_unused_input = options.on_unused_input;
    plain.allow_input_downcast = options.allow_input_downcast;
    absl::StatusOr<Function> reference = Make(inputs, outputs, plain);
    if (!reference.ok()) return reference.status();
    state->reference = std::make_shared<Function>(*std::move(reference));
  }
  {
    absl::MutexLock lock(&state->mutex);
    state->stats.optimize_seconds = optimize_seconds;
    state->stats.link_seconds = Seconds(link_start);
    state->stats.node_calls.assign(f.program_->steps().size(), 0);
    state->stats.node_seconds.assign(f.program_->steps().size(), 0.0);
  }
  f.state_ = std::move(state);
  return f;
}

absl::StatusOr<std::vector<Tensor>> Function::operator()(std::vector<Tensor> args) const {
  return Run(std::move(args), nullptr, nullptr);
}

absl::StatusOr<std::vector<Tensor>> Function::Call(
    std::vector<Tensor> args, const std::function<absl::Status()>& interrupt) const {
  return Run(std::move(args), nullptr, &interrupt);
}

absl::StatusOr<std::vector<Tensor>> Function::operator()(
    std::vector<Tensor> args, const std::vector<int>& output_subset) const {
  for (int o : output_subset) {
    if (o < 0 || o >= num_user_outputs_) {
      return absl::InvalidArgumentError(
          absl::StrCat("output_subset: index ", o, " of ", num_user_outputs_, " outputs"));
    }
  }
  return Run(std::move(args), &output_subset, nullptr);
}

absl::StatusOr<std::vector<Tensor>> Function::Run(
    std::vector<Tensor> args, const std::vector<int>* output_subset,
    const std::function<absl::Status()>* interrupt) const {
  const auto call_start = std::chrono::steady_clock::now();
  const std::vector<VariablePtr>& inputs = fgraph_->inputs();
  if (static_cast<int>(args.size()) != num_user_inputs_) {
    return absl::InvalidArgumentError(absl::StrCat("the function takes ", num_user_inputs_,
                                                   " inputs but was called with ", args.size()));
  }
  std::vector<Tensor> debug_args =
      state_->check == CheckMode::kDebug ? args : std::vector<Tensor>{};
  // The shared values, read together.
  if (!state_->shared.empty()) {
    WithAllLocked(state_->shared, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      for (const auto& c : state_->shared) args.push_back(c->value);
    });
  }
  std::vector<Tensor> slots = program_->NewSlots();
  for (size_t i = 0; i < args.size(); ++i) {
    absl::StatusOr<Tensor> v = FilterInput(*inputs[i], static_cast<int>(i), std::move(args[i]),
                                           state_->allow_input_downcast);
    if (!v.ok()) return v.status();
    slots[i] = *std::move(v);
  }
  CallContext ctx;
  ctx.interrupt = interrupt;
  // With an output subset, only the steps those outputs need run.
  std::vector<bool> needed;
  const std::vector<int>& output_slots = program_->output_slots();
  if (output_subset != nullptr) {
    std::vector<VariablePtr> wanted;
    for (int o : *output_subset) wanted.push_back(fgraph_->outputs()[o]);
    const std::vector<Apply*> nodes = IoToposort(inputs, wanted);
    const absl::flat_hash_set<const Apply*> wanted_nodes(nodes.begin(), nodes.end());
    for (const Step& step : program_->steps()) needed.push_back(wanted_nodes.count(step.node) > 0);
    ctx.needed = &needed;
  }
  RETURN_IF_ERROR(program_->Run(slots, ctx));
  // Profiled: the steps' own times. Otherwise counted from the call's start (one clock read
  // fewer per call; the input checks included).
  const double thunk_seconds =
      ctx.step_seconds.empty()
          ? Seconds(call_start)
          : std::accumulate(ctx.step_seconds.begin(), ctx.step_seconds.end(), 0.0);
  // Outputs never alias the caller's arguments, the graph's constants or each other (as
  // Aesara's deep copy of outputs): a caller may write to what it gets back.
  if (output_subset != nullptr) {
    std::vector<Tensor> results;
    for (int o : *output_subset) {
      const Tensor& value = slots[output_slots[o]];
      results.push_back(value.AsType(value.dtype()));
    }
    program_->RecycleSlots(std::move(slots));
    return results;
  }
  std::vector<Tensor> results;
  results.reserve(output_slots.size());
  for (int out : output_slots) {
    Tensor value = slots[out];
    bool shared = false;
    for (int in = 0; in < program_->num_inputs(); ++in) shared |= slots[in].SharesBufferWith(value);
    for (const Tensor& c : program_->constants()) shared |= c.SharesBufferWith(value);
    for (const Tensor& previous : results) shared |= previous.SharesBufferWith(value);
    results.push_back(shared ? value.AsType(value.dtype()) : std::move(value));
  }
  program_->RecycleSlots(std::move(slots));
  const std::vector<VariablePtr>& outs = fgraph_->outputs();
  if (state_->reference != nullptr) {
    ASSIGN_OR_RETURN(std::vector<Tensor> expected, (*state_->reference)(debug_args));
    for (int o = 0; o < num_user_outputs_; ++o) {
      const Tensor a = results[o].AsType(DType::kFloat64),
                   b = (expected)[o].AsType(DType::kFloat64);
      bool same = a.shape() == b.shape();
      for (int64_t i = 0; same && i < a.size(); ++i) {
        const double x = a.ElementAsDouble(i), y = b.ElementAsDouble(i);
        same = x == y || (std::isnan(x) && std::isnan(y)) ||
               std::fabs(x - y) <= 1e-6 * (1 + std::fabs(y));
      }
      if (!same) {
        const Apply* owner = outs[o]->owner();
        return absl::InternalError(
            absl::StrCat("DebugMode: output ", o, " of the optimized graph (computed by ",
                         owner ? owner->ToString() : outs[o]->ToString(),
                         ") differs from the unoptimized graph's: ", results[o].ToString(), " vs ",
                         (expected)[o].ToString()));
      }
    }
  }
  // The updates, all at once.
  if (!state_->updated.empty()) {
    WithAllLocked(state_->updated, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      for (size_t u = 0; u < state_->updated.size(); ++u) {
        state_->updated[u]->value = std::move(results[num_user_outputs_ + u]);
      }
    });
  }
  results.resize(num_user_outputs_);
  {
    absl::MutexLock lock(&state_->mutex);
    FunctionStats& s = state_->stats;
    ++s.calls;
    s.call_seconds += Seconds(call_start);
    s.thunk_seconds += thunk_seconds;
    s.peak_bytes = std::max(s.peak_bytes, ctx.peak_bytes);
    for (size_t n = 0; n < ctx.step_seconds.size(); ++n) {
      ++s.node_calls[n];
      s.node_seconds[n] += ctx.step_seconds[n];
    }
  }
  return results;
}

bool Function::HoldsSharedState() const {
  return !state_->shared.empty() || !state_->updated.empty();
}

absl::StatusOr<Function> Function::FromOptimized(const std::vector<Var>& inputs,
                                                 const std::vector<Var>& outputs,
                                                 const FunctionOptions& options) {
  FunctionOptions stored;
  stored.mode = OptimizerMode::kNone;
  stored.check = options.check == CheckMode::kDebug ? CheckMode::kNanGuard : options.check;
  stored.profile = options.profile;
  stored.on_unused_input = OnUnusedInput::kIgnore;
  return Make(inputs, outputs, stored);
}

FunctionStats Function::stats() const {
  absl::MutexLock lock(&state_->mutex);
  return state_->stats;
}

double Function::mean_call_seconds() const {
  absl::MutexLock lock(&state_->mutex);
  const int64_t calls = state_->stats.calls;
  return calls > 0 ? state_->stats.call_seconds / static_cast<double>(calls)
                   : std::numeric_limits<double>::infinity();
}

std::string Function::ProfileSummary() const {
  const FunctionStats s = stats();
  std::string out = "Function profiling\n==================\n";
  absl::StrAppendFormat(&out, "  Time in %d calls to Function.__call__: %es\n", s.calls,
                        s.call_seconds);
  absl::StrAppendFormat(&out, "  Time in thunks: %es (%.3f%%)\n", s.thunk_seconds,
                        s.call_seconds > 0 ? 100 * s.thunk_seconds / s.call_seconds : 0.0);
  absl::StrAppendFormat(&out, "  Total compilation time: %es\n    Rewriter time: %es\n",
                        s.optimize_seconds + s.link_seconds, s.optimize_seconds);
  absl::StrAppendFormat(&out, "    Linker time: %es\n", s.link_seconds);
  absl::StrAppendFormat(&out, "  Peak memory of intermediates and outputs: %d bytes\n",
                        s.peak_bytes);
  if (!state_->profile) return out;
  // Ops by total time.
  std::map<std::string, std::pair<double, int64_t>> by_op;
  for (size_t n = 0; n < program_->steps().size(); ++n) {
    auto& entry = by_op[program_->steps()[n].node->op().Name()];
    entry.first += s.node_seconds[n];
    entry.second += s.node_calls[n];
  }
  std::vector<std::pair<std::string, std::pair<double, int64_t>>> sorted(by_op.begin(),
                                                                         by_op.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  out += "\nOps\n---\n  <% time> <sum %> <time (s)> <#call> <Op name>\n";
  double cumulative = 0;
  for (const auto& [name, t] : sorted) {
    const double pct = s.thunk_seconds > 0 ? 100 * t.first / s.thunk_seconds : 0;
    cumulative += pct;
    absl::StrAppendFormat(&out, "  %6.1f%%  %6.1f%%  %10.6fs  %6d  %s\n", pct, cumulative, t.first,
                          t.second, name);
  }
  return out;
}

}  // namespace kiln
