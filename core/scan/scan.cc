#include "core/scan/scan.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/constructors.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"

namespace kiln {
namespace {

// A fresh variable of `x`'s type without its leading dim (the value of one step).
absl::StatusOr<Var> StepVariable(const Var& x, const char* what) {
  RETURN_IF_ERROR(x.status());
  if (x->tensor_type() == nullptr || x.ndim() < 1) {
    return absl::InvalidArgumentError(absl::StrCat("scan: ", what, " ", x->ToString(), " of type ",
                                                   x->type()->ToString(),
                                                   " has no leading dim to iterate over"));
  }
  StaticShape shape(x.type().shape().begin() + 1, x.type().shape().end());
  return Var(Variable::Make(TensorType::Make(x.dtype(), std::move(shape))));
}

int64_t Min(const std::vector<int64_t>& v) { return *std::min_element(v.begin(), v.end()); }
int64_t Max(const std::vector<int64_t>& v) { return *std::max_element(v.begin(), v.end()); }

}  // namespace

absl::StatusOr<std::vector<Var>> ApplyScan(ScanAttrs attrs,
                                           const std::vector<VariablePtr>& inner_inputs,
                                           const std::vector<VariablePtr>& inner_outputs,
                                           const std::vector<Var>& outer) {
  ASSIGN_OR_RETURN(attrs.inner, EncodeInnerGraph(inner_inputs, inner_outputs));
  ASSIGN_OR_RETURN(std::shared_ptr<const Scan> op, Scan::Make(std::move(attrs)));
  std::vector<VariablePtr> inputs;
  for (const Var& v : outer) {
    ASSIGN_OR_RETURN(VariablePtr p, Unwrap(v));
    inputs.push_back(std::move(p));
  }
  ASSIGN_OR_RETURN(ApplyPtr node, op->MakeNode(std::move(inputs)));
  std::vector<Var> out;
  for (int o = 0; o < node->num_outputs(); ++o) out.push_back(Var(node->output(o)));
  return out;
}

absl::StatusOr<std::vector<Var>> ApplyScan(ScanAttrs attrs, const ScanInputs& in,
                                           const std::vector<VariablePtr>& inner_outputs,
                                           const Var& n_steps) {
  std::vector<VariablePtr> inner = in.inner_seqs;
  inner.insert(inner.end(), in.inner_states.begin(), in.inner_states.end());
  inner.insert(inner.end(), in.inner_non_seqs.begin(), in.inner_non_seqs.end());
  std::vector<Var> outer = {n_steps};
  outer.insert(outer.end(), in.seqs.begin(), in.seqs.end());
  outer.insert(outer.end(), in.inits.begin(), in.inits.end());
  outer.insert(outer.end(), in.non_seqs.begin(), in.non_seqs.end());
  return ApplyScan(std::move(attrs), inner, inner_outputs, outer);
}

absl::StatusOr<ScanBuilder> ScanBuilder::Start(ScanArgs args) {
  ScanBuilder b;
  for (const ScanSequence& s : args.sequences) {
    if (s.taps.empty()) return absl::InvalidArgumentError("scan: a sequence has no taps");
    for (size_t i = 0; i < s.taps.size(); ++i) {
      ASSIGN_OR_RETURN(Var arg, StepVariable(s.input, "sequence"));
      b.step_args_.push_back(arg);
    }
  }
  b.n_seq_args_ = static_cast<int>(b.step_args_.size());
  for (const ScanOutput& o : args.outputs_info) {
    if (!o.initial) continue;
    RETURN_IF_ERROR(o.initial->status());
    if (o.taps.empty() || Max(o.taps) >= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scan: the taps of an output must be negative, not [", absl::StrJoin(o.taps, ", "), "]"));
    }
    const bool one_tap = o.taps.size() == 1 && o.taps[0] == -1;
    for (size_t i = 0; i < o.taps.size(); ++i) {
      Var arg;
      if (one_tap) {
        arg = Var(Variable::Make(o.initial->ptr()->type()));
      } else {
        ASSIGN_OR_RETURN(arg, StepVariable(*o.initial, "initial value"));
      }
      b.step_args_.push_back(arg);
    }
  }
  for (const Var& v : args.non_sequences) {
    RETURN_IF_ERROR(v.status());
    b.step_args_.push_back(v);
  }
  b.args_ = std::move(args);
  return b;
}

absl::StatusOr<ScanResult> ScanBuilder::Finish(const ScanStep& step) const {
  const ScanArgs& args = args_;
  const size_t n_out = step.outputs.size();
  if (args.outputs_info.size() > n_out) {
    return absl::InvalidArgumentError(
        absl::StrCat("scan: the step function returned ", n_out, " outputs but outputs_info has ",
                     args.outputs_info.size(), " entries"));
  }
  for (const Var& v : step.outputs) RETURN_IF_ERROR(v.status());
  for (const auto& [s, v] : step.updates) {
    RETURN_IF_ERROR(s.status());
    RETURN_IF_ERROR(v.status());
  }
  if (step.until) RETURN_IF_ERROR(step.until->status());

  ScanAttrs attrs;
  attrs.name = args.name;
  attrs.truncate_gradient = args.truncate_gradient;
  attrs.as_while = step.until.has_value();
  std::vector<VariablePtr> seq_in, state_in, non_seq_in, state_out, nit_out;
  std::vector<Var> outer_seqs, outer_inits, outer_non_seqs;
  std::vector<int> state_of_output, nit_of_output;  // user output -> position
  // Sequences, reversed for go_backwards; n_steps defaults to the shortest.
  std::optional<Var> shortest;
  int at = 0;
  for (const ScanSequence& s : args.sequences) {
    // Reversed, a sequence keeps its taps' forward meaning: they are negated.
    for (int64_t tap : s.taps) attrs.seq_taps.push_back(args.go_backwards ? -tap : tap);
    attrs.seq_tap_counts.push_back(static_cast<int64_t>(s.taps.size()));
    for (size_t i = 0; i < s.taps.size(); ++i) seq_in.push_back(step_args_[at++].ptr());
    Var x = args.go_backwards ? subtensor(s.input, {Slice{std::nullopt, std::nullopt, -1}})
                              : s.input;
    outer_seqs.push_back(x);
    Var steps = shape_i(x, 0) - constant(Max(s.taps) - Min(s.taps));
    shortest = shortest ? minimum(*shortest, steps) : steps;
  }
  // States: the user's outputs with initial values, then the updated shared variables.
  for (size_t i = 0; i < n_out; ++i) {
    const bool state = i < args.outputs_info.size() && args.outputs_info[i].initial;
    if (!state) {
      nit_of_output.push_back(static_cast<int>(i));
      nit_out.push_back(step.outputs[i].ptr());
      continue;
    }
    const ScanOutput& o = args.outputs_info[i];
    const Var& init = *o.initial;
    const Var& out = step.outputs[i];
    if (out->tensor_type() == nullptr || init->tensor_type() == nullptr) {
      return absl::InvalidArgumentError("scan: outputs and initial values must be tensors");
    }
    if (out.dtype() != init.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "When compiling the inner function of scan the following error has been encountered: "
          "The initial state (`outputs_info` in scan nomenclature) of variable ",
          init->ToString(), " (argument number ", i, ") has dtype ", DTypeName(init.dtype()),
          ", while the result of the inner function (`fn`) has dtype ", DTypeName(out.dtype()),
          ". This can happen if the inner function of scan results in an upcast or downcast."));
    }
    state_of_output.push_back(static_cast<int>(i));
    attrs.state_taps.insert(attrs.state_taps.end(), o.taps.begin(), o.taps.end());
    attrs.state_tap_counts.push_back(static_cast<int64_t>(o.taps.size()));
    attrs.state_keep_last.push_back(0);
    for (size_t k = 0; k < o.taps.size(); ++k) state_in.push_back(step_args_[at++].ptr());
    state_out.push_back(out.ptr());
    const bool one_tap = o.taps.size() == 1 && o.taps[0] == -1;
    outer_inits.push_back(one_tap ? expand_dims(init, 0)
                                  : subtensor(init, {Slice{std::nullopt, -Min(o.taps),
                                                           std::nullopt}}));
  }
  const int n_user_states = static_cast<int>(state_out.size());
  for (const auto& [shared, value] : step.updates) {
    if (shared->owner() != nullptr || shared->is_constant()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scan: an update is for ", shared->ToString(), ", which is not a shared variable"));
    }
    if (!shared->type()->Equals(*value->type())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scan: the update of ", shared->ToString(), " has type ", value->type()->ToString(),
          " but the variable has type ", shared->type()->ToString()));
    }
    attrs.state_taps.push_back(-1);
    attrs.state_tap_counts.push_back(1);
    attrs.state_keep_last.push_back(1);
    state_in.push_back(shared.ptr());  // the step reads the value the previous step left
    state_out.push_back(value.ptr());
    outer_inits.push_back(expand_dims(shared, 0));
  }
  // Non-sequences: those given, then every other variable the step reads from outside.
  std::vector<VariablePtr> inner_outputs = state_out;
  inner_outputs.insert(inner_outputs.end(), nit_out.begin(), nit_out.end());
  if (step.until) inner_outputs.push_back(step.until->ptr());
  for (const Var& v : args.non_sequences) {
    non_seq_in.push_back(v.ptr());
    outer_non_seqs.push_back(v);
  }
  std::vector<VariablePtr> known = seq_in;
  known.insert(known.end(), state_in.begin(), state_in.end());
  known.insert(known.end(), non_seq_in.begin(), non_seq_in.end());
  absl::flat_hash_set<const Variable*> known_set;
  for (const VariablePtr& v : known) known_set.insert(v.get());
  std::vector<std::string> missing;
  auto take = [&](const VariablePtr& v) {
    if (v->owner() != nullptr || v->is_constant() || !known_set.insert(v.get()).second) return;
    non_seq_in.push_back(v);
    outer_non_seqs.push_back(Var(v));
    missing.push_back(v->name().empty() ? absl::StrCat("<", v->type()->ToString(), ">")
                                        : v->name());
  };
  for (const VariablePtr& o : inner_outputs) take(o);
  absl::flat_hash_set<const Apply*> seen;
  for (Variable* v : Ancestors(inner_outputs, known)) {
    if (v->owner() == nullptr || !seen.insert(v->owner()).second) continue;
    for (const VariablePtr& in : v->owner()->inputs()) take(in);
  }
  if (args.strict && !missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("MissingInputError: Scan is missing inputs: [",
                                                   absl::StrJoin(missing, ", "), "]"));
  }
  attrs.n_nit_sot = static_cast<int64_t>(nit_out.size());
  attrs.n_non_seqs = static_cast<int64_t>(non_seq_in.size());

  Var n_steps;
  if (args.n_steps) {
    n_steps = cast(*args.n_steps, DType::kInt64);
  } else if (shortest) {
    n_steps = *shortest;
  } else {
    return absl::InvalidArgumentError(
        "scan: no information about the number of steps provided. Either provide a value for "
        "n_steps argument of scan or provide an input sequence");
  }
  ASSIGN_OR_RETURN(std::vector<Var> outs,
                   ApplyScan(attrs,
                             ScanInputs{seq_in, state_in, non_seq_in, outer_seqs, outer_inits,
                                        outer_non_seqs},
                             inner_outputs, n_steps));

  ScanResult result;
  result.outputs.resize(n_out);
  for (int s = 0; s < n_user_states; ++s) result.outputs[state_of_output[s]] = outs[s];
  for (size_t m = 0; m < nit_of_output.size(); ++m) {
    result.outputs[nit_of_output[m]] = outs[state_out.size() + m];
  }
  for (size_t u = 0; u < step.updates.size(); ++u) {
    result.updates.push_back({step.updates[u].first, outs[n_user_states + u]});
  }
  return result;
}

absl::StatusOr<ScanResult> scan(const ScanFn& fn, ScanArgs args) {
  ASSIGN_OR_RETURN(ScanBuilder b, ScanBuilder::Start(std::move(args)));
  return b.Finish(fn(b.step_args()));
}

absl::StatusOr<ScanResult> map(const ScanFn& fn, std::vector<Var> sequences,
                               std::vector<Var> non_sequences) {
  ScanArgs args;
  for (Var& s : sequences) args.sequences.push_back({std::move(s)});
  args.non_sequences = std::move(non_sequences);
  return scan(fn, std::move(args));
}

absl::StatusOr<ScanResult> reduce(const ScanFn& fn, std::vector<Var> sequences,
                                  std::vector<Var> initial, std::vector<Var> non_sequences,
                                  bool go_backwards) {
  ScanArgs args;
  for (Var& s : sequences) args.sequences.push_back({std::move(s)});
  for (Var& i : initial) args.outputs_info.push_back({std::move(i)});
  args.non_sequences = std::move(non_sequences);
  args.go_backwards = go_backwards;
  ASSIGN_OR_RETURN(ScanResult r, scan(fn, std::move(args)));
  for (Var& o : r.outputs) o = subtensor(o, {-1});
  return r;
}

absl::StatusOr<ScanResult> foldl(const ScanFn& fn, std::vector<Var> sequences,
                                 std::vector<Var> initial, std::vector<Var> non_sequences) {
  return reduce(fn, std::move(sequences), std::move(initial), std::move(non_sequences), false);
}

absl::StatusOr<ScanResult> foldr(const ScanFn& fn, std::vector<Var> sequences,
                                 std::vector<Var> initial, std::vector<Var> non_sequences) {
  return reduce(fn, std::move(sequences), std::move(initial), std::move(non_sequences), true);
}

}  // namespace kiln
