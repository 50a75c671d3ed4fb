#include "core/runtime/linked.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/graph/op.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

// A tensor without a buffer, to ask another whether it has one (made once: a Tensor is not free
// to make on every step).
const Tensor kNoBuffer;

// The first element of a float tensor that is NaN or infinite, or -1.
int64_t FirstNonFinite(const Tensor& t) {
  if (!IsFloat(t.dtype()) && !IsComplex(t.dtype())) return -1;
  const Tensor d = t.AsType(IsComplex(t.dtype()) ? t.dtype() : DType::kFloat64);
  for (int64_t i = 0; i < d.size(); ++i) {
    if (!std::isfinite(d.ElementAsDouble(i))) return i;
  }
  return -1;
}

// NanGuardMode: the first non-finite output is an error naming the node and the value.
class NanGuard final : public StepObserver {
 public:
  absl::Status After(int, const Step& step, std::span<const Tensor> outputs, double,
                     CallContext&) const override {
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (const int64_t bad = FirstNonFinite(outputs[i]); bad >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "NanGuardMode: output ", i, " of ", step.node->ToString(), " holds ",
            outputs[i].AsType(DType::kFloat64).ElementAsDouble(bad), " at flat index ", bad));
      }
    }
    return absl::OkStatus();
  }
};

// ProfileMode: each step's seconds.
class Profiler final : public StepObserver {
 public:
  absl::Status After(int index, const Step&, std::span<const Tensor>, double seconds,
                     CallContext& ctx) const override {
    ctx.step_seconds[index] = seconds;
    return absl::OkStatus();
  }
};

}  // namespace

std::shared_ptr<const LinkedProgram> LinkedProgram::Link(const FunctionGraph& fg,
                                                         const LinkOptions& options) {
  auto p = std::make_shared<LinkedProgram>();
  absl::flat_hash_map<const Variable*, int> slot;
  std::vector<bool> is_constant;
  auto slot_of = [&](const VariablePtr& v) {
    auto [it, inserted] = slot.emplace(v.get(), p->num_slots_);
    if (inserted) {
      ++p->num_slots_;
      is_constant.push_back(v->is_constant());
      if (v->is_constant()) {
        const Tensor& data = static_cast<const Constant&>(*v).data();
        p->constant_slots_.push_back({it->second, data});
        p->constants_.push_back(data);
      }
    }
    return it->second;
  };
  for (const VariablePtr& in : fg.inputs()) slot_of(in);
  p->num_inputs_ = static_cast<int>(fg.inputs().size());
  LazySchedule schedule = ScheduleLazily(fg);
  p->guards_ = std::move(schedule.guards);
  for (size_t k = 0; k < schedule.order.size(); ++k) {
    const Apply* node = schedule.order[k];
    Step step{node};
    step.guard = schedule.guard[k];
    for (const VariablePtr& in : node->inputs()) step.inputs.push_back(slot_of(in));
    for (int o = 0; o < node->num_outputs(); ++o) {
      step.outputs.push_back(slot_of(node->outputs()[o]));
      step.output_types.push_back(node->output_ptr(o)->tensor_type());
    }
    p->steps_.push_back(std::move(step));
  }
  for (const VariablePtr& out : fg.outputs()) p->output_slots_.push_back(slot_of(out));
  for (const BranchGuard& g : p->guards_) p->guard_cond_slots_.push_back(slot.at(g.cond));
  // The step that reads each slot last; outputs are read after every step.
  std::vector<int> last_use(p->num_slots_, -1);
  for (size_t n = 0; n < p->steps_.size(); ++n) {
    for (int s : p->steps_[n].inputs) last_use[s] = static_cast<int>(n);
  }
  for (int s : p->output_slots_) last_use[s] = INT_MAX;
  for (size_t n = 0; n < p->steps_.size(); ++n) {
    Step& step = p->steps_[n];
    for (const auto& [o, i] : step.node->op().destroy_map()) {
      const int victim = step.inputs[i];
      const bool always =
          is_constant[victim] || victim < p->num_inputs_ || last_use[victim] != static_cast<int>(n);
      (always ? step.copy_before : step.check_before).push_back(i);
    }
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const int s = step.inputs[i];
      const bool copied = std::find(step.copy_before.begin(), step.copy_before.end(),
                                    static_cast<int>(i)) != step.copy_before.end();
      if (!copied) {
        const auto lent = std::find_if(step.lend.begin(), step.lend.end(),
                                       [&](int j) { return step.inputs[j] == s; });
        if (lent == step.lend.end()) {
          step.lend.push_back(static_cast<int>(i));
        } else {
          step.alias.push_back({static_cast<int>(i), *lent});
        }
      }
      if (s < p->num_inputs_ || is_constant[s] || last_use[s] != static_cast<int>(n)) continue;
      if (std::find(step.release.begin(), step.release.end(), s) == step.release.end()) {
        step.release.push_back(s);
      }
    }
  }
  // A copied input whose slot is also lent reads the lent value.
  for (Step& step : p->steps_) {
    for (int i : step.copy_before) {
      for (int j : step.lend) {
        if (step.inputs[j] == step.inputs[i]) step.alias.push_back({i, j});
      }
    }
  }
  for (int s = 0; s < p->num_slots_; ++s) {
    if (!is_constant[s]) p->value_slots_.push_back(s);
  }
  if (options.nan_guard) p->observers_.push_back(std::make_unique<NanGuard>());
  if (options.profile) p->observers_.push_back(std::make_unique<Profiler>());
  p->timed_ = options.profile;
  for (const Step& step : p->steps_) p->scans_live_ |= !step.check_before.empty();
  return p;
}

std::vector<Tensor> LinkedProgram::NewSlots() const {
  {
    absl::MutexLock lock(&spare_mu_);
    if (!spare_slots_.empty()) {
      std::vector<Tensor> slots = std::move(spare_slots_.back());
      spare_slots_.pop_back();
      return slots;
    }
  }
  std::vector<Tensor> slots(num_slots_);
  for (const auto& [s, value] : constant_slots_) slots[s] = value;
  return slots;
}

void LinkedProgram::RecycleSlots(std::vector<Tensor> slots) const {
  constexpr size_t kSpareSets = 4;  // enough for the threads that call one function at once
  // (A slot without a buffer already holds no value: Run released it, or never wrote it; every
  // value it writes has a buffer.)
  for (int s : value_slots_) {
    if (!slots[s].SharesBufferWith(kNoBuffer)) slots[s] = Tensor();
  }
  absl::MutexLock lock(&spare_mu_);
  if (spare_slots_.size() < kSpareSets) spare_slots_.push_back(std::move(slots));
}

absl::Status LinkedProgram::Run(std::vector<Tensor>& slots, CallContext& ctx) const {
  InterruptScope interrupt_scope(ctx.interrupt);
  // The interrupt polled before each step, looked up once (a thread-local read per step costs a
  // __tls_get_addr call in a shared library); kernels that install their own restore it.
  const std::function<absl::Status()>* const interrupt = CurrentInterrupt();
  if (timed_) ctx.step_seconds.assign(steps_.size(), 0.0);
  int64_t live_bytes = 0;
  // The slots holding a value (graph inputs and outputs not yet released), kept only when some
  // in-place step must look among them for an undeclared sharer: linear, not slots x steps.
  std::vector<int> live, live_at;
  auto hold = [&](int s) {
    if (live_at[s] >= 0) return;
    live_at[s] = static_cast<int>(live.size());
    live.push_back(s);
  };
  auto drop = [&](int s) {
    const int at = live_at[s];
    if (at < 0) return;
    live[at] = live.back();
    live_at[live[at]] = at;
    live.pop_back();
    live_at[s] = -1;
  };
  if (scans_live_) {
    live_at.assign(slots.size(), -1);
    for (int s = 0; s < num_inputs_; ++s) hold(s);
  }
  // Whether each guard's branch was chosen (-1: not known yet): a guard holds when its parent
  // holds and its IfElse's condition, computed before every step it guards, picks it.
  std::vector<int8_t> chosen(guards_.size(), -1);
  std::vector<int> chain;
  auto holds = [&](int g) {
    chain.clear();
    for (int k = g; k >= 0 && chosen[k] < 0; k = guards_[k].parent) chain.push_back(k);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const BranchGuard& b = guards_[*it];
      const bool parent = b.parent < 0 || chosen[b.parent] == 1;
      const Tensor& cond = slots[guard_cond_slots_[*it]];
      chosen[*it] = parent && IsTrue(cond) == b.then;
    }
    return chosen[g] == 1;
  };
  // Values read for the last time at a step are released; the buffer lives on when another
  // input or one of the step's outputs shares it.
  auto release = [&](const Step& step) {
    for (int s : step.release) {
      // (No buffer: the value of a branch not chosen, never counted.)
      bool view = slots[s].SharesBufferWith(kNoBuffer);
      for (int other : step.inputs) view |= other != s && slots[other].SharesBufferWith(slots[s]);
      for (int o : step.outputs) view |= slots[o].SharesBufferWith(slots[s]);
      if (!view) live_bytes -= slots[s].nbytes();
      slots[s] = Tensor();
      if (scans_live_) drop(s);
    }
  };
  // The inputs of the step running (its first step.inputs.size(): the vector only grows, so
  // that no step constructs or destroys its slots).
  absl::InlinedVector<Tensor, 4> held;
  std::vector<Tensor> out;
  for (size_t n = 0; n < steps_.size(); ++n) {
    const Step& step = steps_[n];
    if (ctx.needed != nullptr && !(*ctx.needed)[n]) continue;
    if (step.guard >= 0 && !holds(step.guard)) {  // a branch not chosen
      release(step);
      continue;
    }
    if (interrupt != nullptr) RETURN_IF_ERROR((*interrupt)());
    if (held.size() < step.inputs.size()) held.resize(step.inputs.size());
    const std::span<Tensor> in(held.data(), step.inputs.size());
    for (int i : step.lend) in[i] = std::move(slots[step.inputs[i]]);
    for (int i : step.copy_before) in[i] = slots[step.inputs[i]];  // (unless lent: below)
    for (const auto& [i, j] : step.alias) in[i] = in[j];
    // An input the node overwrites must not share its buffer with a constant or another live
    // value (a view the graph does not declare); if it does, the node gets a copy.
    for (int i : step.copy_before) in[i] = in[i].AsType(in[i].dtype());
    for (int i : step.check_before) {
      bool shared = false;
      for (const Tensor& c : constants_) shared |= c.SharesBufferWith(in[i]);
      for (int s : live) shared |= s != step.inputs[i] && slots[s].SharesBufferWith(in[i]);
      for (size_t j = 0; j < in.size(); ++j) {
        if (static_cast<int>(j) != i && in[j].SharesBufferWith(in[i])) shared = true;
      }
      if (shared) in[i] = in[i].AsType(in[i].dtype());
    }
    out.clear();  // (its tensors were moved into their slots: nothing to copy)
    out.resize(step.outputs.size());
    const auto start =
        timed_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    RETURN_IF_ERROR(step.node->op().Perform(*step.node, in, out));
    const double seconds =
        timed_ ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
               : 0.0;
    for (size_t i = 0; i < out.size(); ++i) {
      const TensorType* t = step.output_types[i];
      if (t != nullptr && (out[i].dtype() != t->dtype() || out[i].ndim() != t->ndim())) {
        return absl::InternalError(absl::StrCat(
            step.node->ToString(), ": output ", i, " has dtype ", DTypeName(out[i].dtype()),
            " and shape ", ShapeToString(out[i].shape()), " but its type is ", t->ToString()));
      }
    }
    for (const auto& observer : observers_) {
      RETURN_IF_ERROR(observer->After(static_cast<int>(n), step, out, seconds, ctx));
    }
    for (size_t i = 0; i < out.size(); ++i) {
      // A new buffer counts towards the live bytes; a view of an input does not.
      bool view = false;
      for (const Tensor& x : in) view |= x.SharesBufferWith(out[i]);
      if (!view) live_bytes += out[i].nbytes();
      slots[step.outputs[i]] = std::move(out[i]);
      if (scans_live_) hold(step.outputs[i]);
    }
    ctx.peak_bytes = std::max(ctx.peak_bytes, live_bytes);
    for (int i : step.lend) slots[step.inputs[i]] = std::move(in[i]);
    for (const auto& [i, j] : step.alias) in[i] = Tensor();
    for (int i : step.copy_before) in[i] = Tensor();
    release(step);
  }
  return absl::OkStatus();
}

}  // namespace kiln
