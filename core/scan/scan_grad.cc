// Scan's gradient: back-propagation through time as a second Scan that runs the steps in
// reverse. Its body is the vector-Jacobian product of the forward body; it carries, per state,
// the gradient still owed to the state's last `depth` values, and per non-sequence the sum of
// its gradients so far. The sequences' gradients come out one row per step.
#include <algorithm>

#include "core/graph/gradient_types.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
#include "core/grad/gradient.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/linalg.h"
#include "core/ops/grad_util.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/scan/scan.h"
#include "core/scan/scan_op.h"

namespace kiln {
namespace {

Var Reversed(const Var& x) { return subtensor(x, {Slice{std::nullopt, std::nullopt, -1}}); }
// x[start : start + length].
Var Rows(const Var& x, const Var& start, const Var& length) {
  return subtensor(x, {Slice{start, start + length, std::nullopt}});
}
Var Placeholder(const Var& like) {
  if (!like.ok()) return like;
  return Var(Variable::Make(like->type()));
}
// Placeholder for one row of x.
Var RowPlaceholder(const Var& x) {
  if (!x.ok()) return x;
  StaticShape shape(x.type().shape().begin() + 1, x.type().shape().end());
  return Var(Variable::Make(TensorType::Make(x.dtype(), std::move(shape))));
}

// (i, q) when g is dot(transpose(seqs[i]), q) for a matrix row seqs[i], else (-1, null).
std::pair<int, VariablePtr> DotOfRowsTransposed(const Var& g, const std::vector<VariablePtr>& seqs) {
  const Apply* dot_node = g.ok() ? g->owner() : nullptr;
  if (dot_node == nullptr || !dot_node->op().Is<Dot>()) return {-1, nullptr};
  const Apply* t = dot_node->inputs()[0]->owner();
  const VariablePtr& q = dot_node->inputs()[1];
  if (t == nullptr || !t->op().Is<DimShuffle>() || q->tensor_type()->ndim() != 2 ||
      static_cast<const DimShuffle&>(t->op()).new_order() != std::vector<int>{1, 0}) {
    return {-1, nullptr};
  }
  const auto it = std::find(seqs.begin(), seqs.end(), t->inputs()[0]);
  if (it == seqs.end()) return {-1, nullptr};
  return {static_cast<int>(it - seqs.begin()), q};
}

// Scan's L_op, built in named phases over the state they share: the forward trajectories, the
// reverse loop's inputs, the body's vector-Jacobian product, the reverse loop's outputs, and
// the outer gradients read from the reverse loop's results.
class ReverseScan {
 public:
  ReverseScan(const Scan& op, const Apply& node, const std::vector<Var>& output_grads)
      : op_(op), a_(op.attrs()), body_(op.inner()), node_(node), output_grads_(output_grads),
        in_(InputVars(node)), n_states_(a_.n_states()) {}

  absl::StatusOr<std::vector<Var>> Run() {
    RETURN_IF_ERROR(ForwardTrajectories());
    RETURN_IF_ERROR(ReverseInputs());
    RETURN_IF_ERROR(BodyGradients());
    RETURN_IF_ERROR(ReadForwardValues());
    RETURN_IF_ERROR(SplitNonSequenceSums());
    RETURN_IF_ERROR(ReverseOutputs());
    ScanAttrs back;
    back.name = "grad_of_" + a_.name;
    back.seq_taps.assign(b_seqs_.size(), 0);
    back.seq_tap_counts.assign(b_seqs_.size(), 1);
    back.state_taps.assign(b_states_.size(), -1);
    back.state_tap_counts.assign(b_states_.size(), 1);
    back.state_keep_last.assign(b_states_.size(), 1);
    back.n_nit_sot = static_cast<int64_t>(seq_grads_.size() + pushed_.size());
    back.n_non_seqs = static_cast<int64_t>(b_non_seqs_.size());
    ASSIGN_OR_RETURN(r_, ApplyScan(back,
                                   ScanInputs{b_seqs_, b_states_, b_non_seqs_, o_seqs_, o_inits_,
                                              o_non_seqs_},
                                   b_outs_, n_back_));
    return OuterGradients();
  }

 private:
  bool Connected(int o) const {
    return o < static_cast<int>(output_grads_.size()) && output_grads_[o].ok() &&
           !IsDisconnected(*output_grads_[o]);
  }
  // A sequence of the reverse loop: `inner` reads, step by step from the last, the rows of
  // `outer_in_step_order` within the truncation window.
  void AddSequence(const VariablePtr& inner, const Var& outer_in_step_order) {
    b_seqs_.push_back(inner);
    o_seqs_.push_back(Reversed(Rows(outer_in_step_order, n_fwd_ - n_back_, n_back_)));
  }
  absl::Status AddOutput(const Var& v) {
    RETURN_IF_ERROR(v.status());
    b_outs_.push_back(v.ptr());
    return absl::OkStatus();
  }

  // The forward pass with every state's values at every step, which the reverse pass reads,
  // and the number of steps to go back.
  absl::Status ForwardTrajectories() {
    for (int o = 0; o < node_.num_outputs(); ++o) fwd_.push_back(Var(node_.output(o)));
    bool all_traj = true;
    for (int64_t k : a_.state_keep_last) all_traj &= k == 0;
    if (!all_traj) {
      ScanAttrs traj = a_;
      traj.state_keep_last.assign(n_states_, 0);
      ASSIGN_OR_RETURN(fwd_, ApplyScan(traj, body_.inputs, body_.outputs, in_));
    }
    n_fwd_ = cast(in_[0], DType::kInt64);
    if (a_.as_while && !fwd_.empty()) n_fwd_ = shape_i(fwd_[0], 0);
    n_back_ = n_fwd_;
    if (a_.truncate_gradient > 0) n_back_ = minimum(n_fwd_, constant(a_.truncate_gradient));
    return absl::OkStatus();
  }

  // The reverse body's inputs, in Scan's order: sequences (each read at tap 0: the output
  // gradients of trajectories, row by row, and the forward body's inputs), states (the carried
  // gradients), then non-sequences; and the outer values each is fed from.
  absl::Status ReverseInputs() {
    cot_seq_.resize(n_states_ + a_.n_nit_sot);
    for (int o = 0; o < n_states_ + a_.n_nit_sot; ++o) {
      const bool traj = o >= n_states_ || !a_.state_keep_last[o];
      if (!Connected(o) || !traj) continue;
      Var row = RowPlaceholder(fwd_[o]);
      RETURN_IF_ERROR(row.status());
      cot_seq_[o] = row;
      AddSequence(row.ptr(), output_grads_[o]);
    }
    for (int k = 0, at = 0; k < a_.n_seqs(); at += a_.seq_tap_counts[k++]) {
      int64_t lo = a_.seq_taps[at];
      for (int i = 0; i < a_.seq_tap_counts[k]; ++i) lo = std::min(lo, a_.seq_taps[at + i]);
      for (int i = 0; i < a_.seq_tap_counts[k]; ++i) {
        AddSequence(body_.inputs[op_.inner_seq(k) + i],
                    subtensor(in_[op_.outer_seq(k)],
                              {Slice{a_.seq_taps[at + i] - lo, std::nullopt, std::nullopt}}));
      }
    }
    for (int j = 0, at = 0; j < n_states_; at += a_.state_tap_counts[j++]) {
      const Var buffer = concatenate({in_[op_.outer_init(j)], fwd_[j]});
      const int64_t depth = a_.StateDepth(j);
      for (int i = 0; i < a_.state_tap_counts[j]; ++i) {
        AddSequence(body_.inputs[op_.inner_state(j) + i],
                    subtensor(buffer, {Slice{depth + a_.state_taps[at + i], std::nullopt,
                                             std::nullopt}}));
      }
    }
    // Carries: the gradient owed to state j's values at steps t-depth .. t-1 (one value when
    // depth is 1), the last of which is the value step t-1 wrote.
    carry_.resize(n_states_);
    known_cot_.resize(n_states_ + a_.n_nit_sot);
    for (int j = 0; j < n_states_; ++j) {
      const Var& init = in_[op_.outer_init(j)];
      const int64_t depth = a_.StateDepth(j);
      Var start = depth == 1 ? zeros_like(subtensor(init, {0})) : zeros_like(init);
      if (Connected(j) && a_.state_keep_last[j]) {  // the final value's gradient, owed at once
        start = depth == 1 ? start + output_grads_[j]
                           : inc_subtensor(subtensor(start, {depth - 1}), output_grads_[j]);
      }
      o_inits_.push_back(expand_dims(start, 0));
      carry_[j] = Placeholder(start);
      RETURN_IF_ERROR(carry_[j].status());
      b_states_.push_back(carry_[j].ptr());
      Var owed = depth == 1 ? carry_[j] : subtensor(carry_[j], {depth - 1});
      known_cot_[j] = cot_seq_[j].ok() ? owed + cot_seq_[j] : owed;
    }
    for (int m = 0; m < a_.n_nit_sot; ++m) known_cot_[n_states_ + m] = cot_seq_[n_states_ + m];
    // The non-sequences whose gradients are summed over the steps (continuous ones only).
    for (int l = 0; l < a_.n_non_seqs; ++l) {
      b_non_seqs_.push_back(body_.inputs[op_.inner_non_seq(l)]);
      o_non_seqs_.push_back(in_[op_.outer_non_seq(l)]);
      if (!IsDiscreteVar(in_[op_.outer_non_seq(l)])) summed_.push_back(l);
    }
    return absl::OkStatus();
  }

  // The vector-Jacobian product of the body, as the gradient of sum(output * cotangent) so that
  // an output also read by another output gets both gradients (a known_grad would be final).
  absl::Status BodyGradients() {
    GradOptions options;
    options.disconnected_inputs = DisconnectedInputs::kIgnore;
    options.return_disconnected = ReturnDisconnected::kZero;
    options.add_names = false;
    Var cost;
    for (size_t o = 0; o < known_cot_.size(); ++o) {
      if (!known_cot_[o].ok()) continue;
      Var term = sum(Var(body_.outputs[o]) * known_cot_[o]);
      cost = cost.ok() ? cost + term : term;
    }
    std::vector<Var> wrt;
    for (const VariablePtr& v : body_.inputs) wrt.push_back(Var(v));
    g_.resize(wrt.size());
    if (cost.ok()) {
      ASSIGN_OR_RETURN(g_, grad(cost, wrt, options));
    } else {
      for (size_t i = 0; i < wrt.size(); ++i) g_[i] = FloatZerosLike(wrt[i]);
    }
    return absl::OkStatus();
  }

  // The reverse body reads the forward outputs' values (each a sequence of the forward pass)
  // rather than computing them again: tanh's gradient, for one, reads its output.
  absl::Status ReadForwardValues() {
    std::vector<std::pair<VariablePtr, VariablePtr>> computed;
    for (int o = 0; o < n_states_ + a_.n_nit_sot; ++o) {
      const VariablePtr& value = body_.outputs[o];
      if (value->owner() == nullptr) continue;  // an input or a constant: nothing to save
      Var row = RowPlaceholder(fwd_[o]);
      RETURN_IF_ERROR(row.status());
      computed.push_back({value, row.ptr()});
      AddSequence(row.ptr(), fwd_[o]);
    }
    if (computed.empty()) return absl::OkStatus();
    std::vector<VariablePtr> ptrs;
    for (const Var& v : g_) ptrs.push_back(v.ptr());
    ASSIGN_OR_RETURN(ptrs, CloneReplace(ptrs, computed));
    for (size_t i = 0; i < g_.size(); ++i) g_[i] = Var(ptrs[i]);
    return absl::OkStatus();
  }

  // A non-sequence's gradient dot(p.T, q), p a sequence of the reverse pass, is summed after
  // the loop as one product of all the rows (Aesara's scan_pushout_dot1): q leaves the loop as
  // a row per step. Any other gradient is summed in a state as the loop runs.
  absl::Status SplitNonSequenceSums() {
    pushed_of_.assign(a_.n_non_seqs, -1);
    for (int l : summed_) {
      const auto [p, q] = DotOfRowsTransposed(g_[op_.inner_non_seq(l)], b_seqs_);
      if (p < 0) {
        accumulated_.push_back(l);
        continue;
      }
      pushed_of_[l] = static_cast<int>(pushed_.size());
      pushed_.push_back({o_seqs_[p], q});
    }
    for (int l : accumulated_) {
      Var zero = zeros_like(in_[op_.outer_non_seq(l)]);
      o_inits_.push_back(expand_dims(zero, 0));
      Var acc = Placeholder(zero);
      RETURN_IF_ERROR(acc.status());
      b_states_.push_back(acc.ptr());
    }
    return absl::OkStatus();
  }

  // The reverse body's outputs: each carry's next value, each accumulator's, then a row per
  // step for each continuous sequence's gradient and each pushed-out product.
  absl::Status ReverseOutputs() {
    for (int j = 0, at = 0; j < n_states_; at += a_.state_tap_counts[j++]) {
      const int64_t depth = a_.StateDepth(j);
      if (depth == 1) {
        RETURN_IF_ERROR(AddOutput(cast(g_[op_.inner_state(j)], carry_[j].dtype())));
        continue;
      }
      // Shift the window one step back, then add what this step owes each tap.
      Var next = concatenate({zeros_like(subtensor(carry_[j], {Slice{0, 1, std::nullopt}})),
                              subtensor(carry_[j], {Slice{0, depth - 1, std::nullopt}})});
      for (int i = 0; i < a_.state_tap_counts[j]; ++i) {
        next = inc_subtensor(subtensor(next, {depth + a_.state_taps[at + i]}),
                             g_[op_.inner_state(j) + i]);
      }
      RETURN_IF_ERROR(AddOutput(next));
    }
    for (size_t s = 0; s < accumulated_.size(); ++s) {
      const VariablePtr& acc = b_states_[n_states_ + s];
      RETURN_IF_ERROR(AddOutput(Var(acc) + g_[op_.inner_non_seq(accumulated_[s])]));
    }
    for (int k = 0, at = 0; k < a_.n_seqs(); at += a_.seq_tap_counts[k++]) {
      if (IsDiscreteVar(in_[op_.outer_seq(k)])) continue;
      for (int i = 0; i < a_.seq_tap_counts[k]; ++i) {
        seq_grads_.push_back({k, at + i});
        RETURN_IF_ERROR(AddOutput(g_[op_.inner_seq(k) + i]));
      }
    }
    for (const auto& [p, q] : pushed_) RETURN_IF_ERROR(AddOutput(Var(q)));
    return absl::OkStatus();
  }

  // Each outer input's gradient from the reverse loop's results r_.
  std::vector<Var> OuterGradients() const {
    std::vector<Var> grads(node_.num_inputs());
    grads[0] = disconnected_type();
    for (int j = 0; j < n_states_; ++j) {
      const Var& init = in_[op_.outer_init(j)];
      if (IsDiscreteVar(init)) {
        grads[op_.outer_init(j)] = FloatZerosLike(init);
        continue;
      }
      Var g_init = a_.StateDepth(j) == 1 ? expand_dims(r_[j], 0) : r_[j];
      // Truncated: what is owed to the initial values past the window is dropped.
      if (a_.truncate_gradient > 0) g_init = g_init * cast(le(n_fwd_, n_back_), init.dtype());
      grads[op_.outer_init(j)] = g_init;
    }
    for (int l = 0; l < a_.n_non_seqs; ++l) {
      grads[op_.outer_non_seq(l)] = FloatZerosLike(in_[op_.outer_non_seq(l)]);
    }
    for (size_t s = 0; s < accumulated_.size(); ++s) {
      grads[op_.outer_non_seq(accumulated_[s])] = r_[n_states_ + s];
    }
    const size_t first_pushed = n_states_ + accumulated_.size() + seq_grads_.size();
    for (int l : summed_) {
      if (pushed_of_[l] < 0) continue;
      // p (steps, rows, m) and q (steps, rows, n), step by step alike, as (steps * rows) x m
      // and x n: m x n is the non-sequence's shape (and sizes a loop of no steps too).
      const Var& p = pushed_[pushed_of_[l]].first;
      const Var& q = r_[first_pushed + pushed_of_[l]];
      const Var& w = in_[op_.outer_non_seq(l)];
      const Var rows = shape_i(p, 0) * shape_i(p, 1);
      grads[op_.outer_non_seq(l)] = dot(transpose(reshape(p, stack({rows, shape_i(w, 0)}))),
                                        reshape(q, stack({rows, shape_i(w, 1)})));
    }
    for (int k = 0; k < a_.n_seqs(); ++k) {
      grads[op_.outer_seq(k)] = FloatZerosLike(in_[op_.outer_seq(k)]);
    }
    for (size_t s = 0; s < seq_grads_.size(); ++s) {
      const auto [k, tap_at] = seq_grads_[s];
      int64_t lo = a_.seq_taps[tap_at];
      const int first = op_.inner_seq(k) - op_.inner_seq(0);  // flat index of k's first tap
      for (int i = 0; i < a_.seq_tap_counts[k]; ++i) lo = std::min(lo, a_.seq_taps[first + i]);
      Var rows = Reversed(r_[n_states_ + accumulated_.size() + s]);
      Var start = constant(a_.seq_taps[tap_at] - lo) + n_fwd_ - n_back_;
      Var& gx = grads[op_.outer_seq(k)];
      gx = inc_subtensor(Rows(gx, start, n_back_), rows);
    }
    return grads;
  }

  const Scan& op_;
  const ScanAttrs& a_;
  const InnerGraph& body_;
  const Apply& node_;
  const std::vector<Var>& output_grads_;
  const std::vector<Var> in_;
  const int n_states_;
  std::vector<Var> fwd_;
  Var n_fwd_, n_back_;
  // The reverse loop's inner inputs, the outer values they are fed from, and its outputs.
  std::vector<VariablePtr> b_seqs_, b_states_, b_non_seqs_, b_outs_;
  std::vector<Var> o_seqs_, o_inits_, o_non_seqs_;
  std::vector<Var> cot_seq_, carry_, known_cot_;  // per forward output / state
  std::vector<Var> g_;                            // the body's gradient per inner input
  std::vector<int> summed_, accumulated_, pushed_of_;
  std::vector<std::pair<Var, VariablePtr>> pushed_;  // (outer p, q) of each pushed-out sum
  std::vector<std::pair<int, int>> seq_grads_;       // (sequence, tap index) of each nit-sot
  std::vector<Var> r_;                               // the reverse loop's results
};

}  // namespace

std::vector<Var> Scan::LOp(const Apply& node, const std::vector<Var>& output_grads) const {
  absl::StatusOr<std::vector<Var>> grads = ReverseScan(*this, node, output_grads).Run();
  if (!grads.ok()) return std::vector<Var>(node.num_inputs(), Var(grads.status()));
  return *std::move(grads);
}

}  // namespace kiln
