#include "core/scan/scan_op.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/op_util.h"
#include "core/graph/constructors.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"

namespace kiln {

KILN_REGISTER_OP(Scan);

namespace {

absl::Status CheckTaps(const char* what, const std::vector<int64_t>& taps,
                       const std::vector<int64_t>& counts, bool negative) {
  int64_t total = 0;
  for (int64_t c : counts) {
    if (c < 1 || c > 1024) {
      return absl::InvalidArgumentError(
          absl::StrCat("Scan: each ", what, " needs between 1 and 1024 taps, not ", c));
    }
    total += c;
  }
  if (total != static_cast<int64_t>(taps.size())) {
    return absl::InvalidArgumentError(absl::StrCat("Scan: ", taps.size(), " ", what,
                                                   " taps but their counts add up to ", total));
  }
  size_t at = 0;
  for (int64_t c : counts) {
    absl::flat_hash_set<int64_t> seen;
    for (int64_t i = 0; i < c; ++i, ++at) {
      const int64_t t = taps[at];
      if (t < -(1 << 20) || t > (1 << 20) || (negative && t >= 0) || !seen.insert(t).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Scan: ", what, " tap ", t, negative ? " is not negative" : " is out of range",
            " or repeated (", what, " taps are distinct", negative ? " and negative)" : ")"));
      }
    }
  }
  return absl::OkStatus();
}

// "TensorType(float64, (?,))" of `t` with one leading dim more.
TypePtr WithLeadingDim(const TensorType& t, StaticDim dim) {
  StaticShape shape = {dim};
  shape.insert(shape.end(), t.shape().begin(), t.shape().end());
  return TensorType::Make(t.dtype(), std::move(shape));
}

}  // namespace

int64_t ScanAttrs::StateDepth(int j) const {
  const int64_t start =
      std::accumulate(state_tap_counts.begin(), state_tap_counts.begin() + j, int64_t{0});
  return -*std::min_element(state_taps.begin() + start,
                            state_taps.begin() + start + state_tap_counts[j]);
}

absl::Status ScanAttrs::Check() const {
  RETURN_IF_ERROR(CheckTaps("sequence", seq_taps, seq_tap_counts, false));
  RETURN_IF_ERROR(CheckTaps("state", state_taps, state_tap_counts, true));
  if (state_keep_last.size() != state_tap_counts.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Scan: state_keep_last has ", state_keep_last.size(), " entries for ",
                     state_tap_counts.size(), " states"));
  }
  if (n_nit_sot < 0 || n_nit_sot > 4096 || n_non_seqs < 0 || n_non_seqs > 65536 ||
      seq_tap_counts.size() > 4096 || state_tap_counts.size() > 4096) {
    return absl::InvalidArgumentError("Scan: too many sequences, states or non-sequences");
  }
  if (truncate_gradient < -1 || truncate_gradient == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Scan: truncate_gradient is ", truncate_gradient, ", not -1 or positive"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Scan>> Scan::Make(ScanAttrs attrs) {
  RETURN_IF_ERROR(attrs.Check());
  std::shared_ptr<Scan> op(new Scan(std::move(attrs)));
  const ScanAttrs& a = op->attrs_;
  ASSIGN_OR_RETURN(op->inner_, DecodeInnerGraph(a.inner));
  int at = 0;
  for (int64_t c : a.seq_tap_counts) op->seq_offsets_.push_back(std::exchange(at, at + c));
  for (int64_t c : a.state_tap_counts) op->state_offsets_.push_back(std::exchange(at, at + c));
  op->non_seq_offset_ = at;
  const size_t inner_inputs = at + a.n_non_seqs;
  const size_t inner_outputs = a.n_states() + a.n_nit_sot + (a.as_while ? 1 : 0);
  if (op->inner_.inputs.size() != inner_inputs || op->inner_.outputs.size() != inner_outputs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Scan: the inner graph has ", op->inner_.inputs.size(), " inputs and ",
        op->inner_.outputs.size(), " outputs, but its taps and counts call for ", inner_inputs,
        " and ", inner_outputs));
  }
  for (const VariablePtr& v : op->inner_.outputs) {
    if (v->tensor_type() == nullptr) return Invalid(*op, "an inner output is not a tensor");
  }
  for (int j = 0; j < a.n_states(); ++j) {
    const TensorType* out = op->inner_.outputs[j]->tensor_type();
    for (int i = 0; i < a.state_tap_counts[j]; ++i) {
      const TensorType* in = op->inner_.inputs[op->inner_state(j) + i]->tensor_type();
      if (in->dtype() != out->dtype() || in->ndim() != out->ndim()) {
        return Invalid(*op, absl::StrCat("the inner function's output ", j, " has type ",
                                         out->ToString(), " but the state it updates has type ",
                                         in->ToString(),
                                         ": an output must keep its state's dtype and rank"));
      }
    }
  }
  if (a.as_while) {
    const TensorType* cond = op->inner_.outputs.back()->tensor_type();
    if (cond->ndim() != 0) {
      return Invalid(*op, absl::StrCat("the until condition has type ", cond->ToString(),
                                       " but a scalar is needed"));
    }
  }
  return std::shared_ptr<const Scan>(std::move(op));
}

absl::StatusOr<OpPtr> Scan::FromAttrs(const OpAttrs& wire) {
  ASSIGN_OR_RETURN(ScanAttrs attrs, DecodeAttrs<ScanAttrs>(wire));
  ASSIGN_OR_RETURN(std::shared_ptr<const Scan> op, Make(std::move(attrs)));
  return OpPtr(std::move(op));
}

int Scan::OuterInputOf(int i) const {
  if (i >= non_seq_offset_) return outer_non_seq(i - non_seq_offset_);
  for (int j = attrs_.n_states() - 1; j >= 0; --j) {
    if (i >= state_offsets_[j]) return outer_init(j);
  }
  for (int k = attrs_.n_seqs() - 1; k >= 0; --k) {
    if (i >= seq_offsets_[k]) return outer_seq(k);
  }
  return -1;
}

std::string Scan::Name() const {
  return absl::StrCat(attrs_.as_while ? "while" : "for", "{cpu,", attrs_.name, "}");
}

absl::StatusOr<ApplyPtr> Scan::MakeNode(std::vector<VariablePtr> inputs) const {
  const ScanAttrs& a = attrs_;
  const size_t expected = 1 + a.n_seqs() + a.n_states() + a.n_non_seqs;
  if (inputs.size() != expected) {
    return Invalid(*this, absl::StrCat("expects ", expected, " inputs (n_steps, ", a.n_seqs(),
                                       " sequences, ", a.n_states(), " initial states and ",
                                       a.n_non_seqs, " non-sequences), got ", inputs.size()));
  }
  RETURN_IF_ERROR(ExpectTensor(*this, inputs, 0, 0, true, "an integer scalar n_steps").status());
  // An outer input of `what` must have the inner input's dtype and its rank plus `extra`.
  auto expect = [&](int outer, int inner, int extra, const char* what) -> absl::Status {
    const TensorType* o = inputs[outer]->tensor_type();
    const TensorType* i = inner_.inputs[inner]->tensor_type();
    if (o == nullptr || o->dtype() != i->dtype() || o->ndim() != i->ndim() + extra) {
      return Invalid(*this, absl::StrCat("input ", outer, " (", what, ") has type ",
                                         inputs[outer]->type()->ToString(),
                                         " but the inner graph reads it as ", i->ToString(),
                                         extra ? " with one leading dim more" : ""));
    }
    return absl::OkStatus();
  };
  for (int k = 0; k < a.n_seqs(); ++k) {
    RETURN_IF_ERROR(expect(outer_seq(k), inner_seq(k), 1, "a sequence"));
  }
  std::vector<TypePtr> outputs;
  for (int j = 0; j < a.n_states(); ++j) {
    RETURN_IF_ERROR(expect(outer_init(j), inner_state(j), 1, "an initial state"));
    const TensorType& init = *inputs[outer_init(j)]->tensor_type();
    StaticShape shape(init.shape().begin() + 1, init.shape().end());
    const TensorType state(init.dtype(), std::move(shape));
    outputs.push_back(a.state_keep_last[j] ? TensorType::Make(state.dtype(), state.shape())
                                           : WithLeadingDim(state, std::nullopt));
  }
  for (int l = 0; l < a.n_non_seqs; ++l) {
    RETURN_IF_ERROR(expect(outer_non_seq(l), inner_non_seq(l), 0, "a non-sequence"));
  }
  for (int m = 0; m < a.n_nit_sot; ++m) {
    outputs.push_back(
        WithLeadingDim(*inner_.outputs[a.n_states() + m]->tensor_type(), std::nullopt));
  }
  return Apply::Make(self(), std::move(inputs), outputs);
}

// A state's dims are its initial value's; the step dim is n_steps (a while loop's, and any dim
// of a nit-sot not known statically, are read off the output once computed).
absl::StatusOr<std::vector<std::vector<VariablePtr>>> Scan::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const ScanAttrs& a = attrs_;
  std::vector<std::vector<VariablePtr>> out;
  auto steps = [&](int o) -> absl::StatusOr<VariablePtr> {
    if (a.as_while) return Unwrap(shape_i(Var(node.output(o)), 0));
    return Unwrap(cast(Var(node.inputs()[0]), DType::kInt64));
  };
  for (int j = 0; j < a.n_states(); ++j) {
    std::vector<VariablePtr> dims(in[outer_init(j)].begin() + 1, in[outer_init(j)].end());
    if (!a.state_keep_last[j]) {
      ASSIGN_OR_RETURN(VariablePtr n, steps(j));
      dims.insert(dims.begin(), n);
    }
    out.push_back(std::move(dims));
  }
  for (int m = 0; m < a.n_nit_sot; ++m) {
    const int o = a.n_states() + m;
    const TensorType& t = *node.output_ptr(o)->tensor_type();
    std::vector<VariablePtr> dims;
    ASSIGN_OR_RETURN(VariablePtr n, steps(o));
    dims.push_back(n);
    for (int d = 1; d < t.ndim(); ++d) {
      Var dim = t.shape()[d] ? constant(*t.shape()[d]) : shape_i(Var(node.output(o)), d);
      ASSIGN_OR_RETURN(VariablePtr v, Unwrap(dim));
      dims.push_back(std::move(v));
    }
    out.push_back(std::move(dims));
  }
  return out;
}

std::vector<std::vector<bool>> Scan::ConnectionPattern(const Apply& node) const {
  std::vector<std::vector<bool>> pattern(node.num_inputs(),
                                         std::vector<bool>(node.num_outputs(), true));
  pattern[0].assign(node.num_outputs(), false);  // n_steps only sizes the outputs
  return pattern;
}

}  // namespace kiln
