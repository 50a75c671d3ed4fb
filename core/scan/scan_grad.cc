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

absl::StatusOr<std::vector<Var>> ScanLOp(const Scan& op, const Apply& node,
                                         const std::vector<Var>& output_grads) {
  const ScanAttrs& a = op.attrs();
  const InnerGraph& body = op.inner();
  std::vector<Var> in = InputVars(node);
  const int n_states = a.n_states();
  // The forward pass with every state's values at every step, which the reverse pass reads.
  std::vector<Var> fwd;
  for (int o = 0; o < node.num_outputs(); ++o) fwd.push_back(Var(node.output(o)));
  bool all_traj = true;
  for (int64_t k : a.state_keep_last) all_traj &= k == 0;
  if (!all_traj) {
    ScanAttrs traj = a;
    traj.state_keep_last.assign(n_states, 0);
    ASSIGN_OR_RETURN(fwd, ApplyScan(traj, body.inputs, body.outputs, in));
  }
  Var n_fwd = cast(in[0], DType::kInt64);
  if (a.as_while && !fwd.empty()) n_fwd = shape_i(fwd[0], 0);
  Var n_back = n_fwd;
  if (a.truncate_gradient > 0) n_back = minimum(n_fwd, constant(a.truncate_gradient));

  // The reverse body's inputs, in Scan's order: sequences (each read at tap 0), states, then
  // non-sequences; and the outer values each is fed from.
  std::vector<VariablePtr> b_seqs, b_states, b_non_seqs;
  std::vector<Var> o_seqs, o_inits, o_non_seqs;
  auto add_seq = [&](const VariablePtr& inner, const Var& outer_in_step_order) {
    b_seqs.push_back(inner);
    o_seqs.push_back(Reversed(Rows(outer_in_step_order, n_fwd - n_back, n_back)));
  };
  auto connected = [&](int o) {
    return o < static_cast<int>(output_grads.size()) && output_grads[o].ok() &&
           !IsDisconnected(*output_grads[o]);
  };
  // Output gradients of whole trajectories arrive row by row.
  std::vector<Var> cot_seq(n_states + a.n_nit_sot);
  for (int o = 0; o < n_states + a.n_nit_sot; ++o) {
    const bool traj = o >= n_states || !a.state_keep_last[o];
    if (!connected(o) || !traj) continue;
    Var row = RowPlaceholder(fwd[o]);
    RETURN_IF_ERROR(row.status());
    cot_seq[o] = row;
    add_seq(row.ptr(), output_grads[o]);
  }
  // The forward body's inputs, fed from the forward values.
  for (int k = 0, at = 0; k < a.n_seqs(); at += a.seq_tap_counts[k++]) {
    int64_t lo = a.seq_taps[at];
    for (int i = 0; i < a.seq_tap_counts[k]; ++i) lo = std::min(lo, a.seq_taps[at + i]);
    for (int i = 0; i < a.seq_tap_counts[k]; ++i) {
      add_seq(body.inputs[op.inner_seq(k) + i],
              subtensor(in[op.outer_seq(k)], {Slice{a.seq_taps[at + i] - lo, std::nullopt,
                                                     std::nullopt}}));
    }
  }
  std::vector<Var> buffers(n_states);
  for (int j = 0, at = 0; j < n_states; at += a.state_tap_counts[j++]) {
    buffers[j] = concatenate({in[op.outer_init(j)], fwd[j]});
    const int64_t depth = a.StateDepth(j);
    for (int i = 0; i < a.state_tap_counts[j]; ++i) {
      add_seq(body.inputs[op.inner_state(j) + i],
              subtensor(buffers[j], {Slice{depth + a.state_taps[at + i], std::nullopt,
                                           std::nullopt}}));
    }
  }
  // Carries: the gradient owed to state j's values at steps t-depth .. t-1 (one value when
  // depth is 1), the last of which is the value step t-1 wrote.
  std::vector<Var> carry(n_states), known_cot(n_states + a.n_nit_sot);
  for (int j = 0; j < n_states; ++j) {
    const Var& init = in[op.outer_init(j)];
    const int64_t depth = a.StateDepth(j);
    Var start = depth == 1 ? zeros_like(subtensor(init, {0})) : zeros_like(init);
    if (connected(j) && a.state_keep_last[j]) {  // the final value's gradient, owed at once
      start = depth == 1 ? start + output_grads[j]
                         : inc_subtensor(subtensor(start, {depth - 1}), output_grads[j]);
    }
    o_inits.push_back(expand_dims(start, 0));
    carry[j] = Placeholder(start);
    RETURN_IF_ERROR(carry[j].status());
    b_states.push_back(carry[j].ptr());
    Var owed = depth == 1 ? carry[j] : subtensor(carry[j], {depth - 1});
    known_cot[j] = cot_seq[j].ok() ? owed + cot_seq[j] : owed;
  }
  for (int m = 0; m < a.n_nit_sot; ++m) known_cot[n_states + m] = cot_seq[n_states + m];
  // The non-sequences whose gradients are summed over the steps (continuous ones only).
  std::vector<int> summed;
  for (int l = 0; l < a.n_non_seqs; ++l) {
    b_non_seqs.push_back(body.inputs[op.inner_non_seq(l)]);
    o_non_seqs.push_back(in[op.outer_non_seq(l)]);
    if (!IsDiscreteVar(in[op.outer_non_seq(l)])) summed.push_back(l);
  }

  // The vector-Jacobian product of the body, as the gradient of sum(output * cotangent) so that
  // an output also read by another output gets both gradients (a known_grad would be final).
  GradOptions options;
  options.disconnected_inputs = DisconnectedInputs::kIgnore;
  options.return_disconnected = ReturnDisconnected::kZero;
  options.add_names = false;
  Var cost;
  for (size_t o = 0; o < known_cot.size(); ++o) {
    if (!known_cot[o].ok()) continue;
    Var term = sum(Var(body.outputs[o]) * known_cot[o]);
    cost = cost.ok() ? cost + term : term;
  }
  std::vector<Var> wrt;
  for (const VariablePtr& v : body.inputs) wrt.push_back(Var(v));
  std::vector<Var> g(wrt.size());
  if (cost.ok()) {
    ASSIGN_OR_RETURN(g, grad(cost, wrt, options));
  } else {
    for (size_t i = 0; i < wrt.size(); ++i) g[i] = FloatZerosLike(wrt[i]);
  }

  // The reverse body reads the forward outputs' values (each a sequence of the forward pass)
  // rather than computing them again: tanh's gradient, for one, reads its output.
  std::vector<std::pair<VariablePtr, VariablePtr>> computed;
  for (int o = 0; o < n_states + a.n_nit_sot; ++o) {
    const VariablePtr& value = body.outputs[o];
    if (value->owner() == nullptr) continue;  // an input or a constant: nothing to save
    Var row = RowPlaceholder(fwd[o]);
    RETURN_IF_ERROR(row.status());
    computed.push_back({value, row.ptr()});
    add_seq(row.ptr(), fwd[o]);
  }
  if (!computed.empty()) {
    std::vector<VariablePtr> ptrs;
    for (const Var& v : g) ptrs.push_back(v.ptr());
    ASSIGN_OR_RETURN(ptrs, CloneReplace(ptrs, computed));
    for (size_t i = 0; i < g.size(); ++i) g[i] = Var(ptrs[i]);
  }

  // A non-sequence's gradient dot(p.T, q), p a sequence of the reverse pass, is summed after
  // the loop as one product of all the rows (Aesara's scan_pushout_dot1): q leaves the loop as
  // a row per step. Any other gradient is summed in a state as the loop runs.
  std::vector<int> accumulated;
  std::vector<std::pair<Var, VariablePtr>> pushed;  // (outer p, q) of each pushed-out sum
  std::vector<int> pushed_of(a.n_non_seqs, -1);
  for (int l : summed) {
    const auto [p, q] = DotOfRowsTransposed(g[op.inner_non_seq(l)], b_seqs);
    if (p < 0) {
      accumulated.push_back(l);
      continue;
    }
    pushed_of[l] = static_cast<int>(pushed.size());
    pushed.push_back({o_seqs[p], q});
  }
  for (int l : accumulated) {
    Var zero = zeros_like(in[op.outer_non_seq(l)]);
    o_inits.push_back(expand_dims(zero, 0));
    Var acc = Placeholder(zero);
    RETURN_IF_ERROR(acc.status());
    b_states.push_back(acc.ptr());
  }

  std::vector<VariablePtr> b_outs;
  auto out = [&](const Var& v) -> absl::Status {
    RETURN_IF_ERROR(v.status());
    b_outs.push_back(v.ptr());
    return absl::OkStatus();
  };
  for (int j = 0, at = 0; j < n_states; at += a.state_tap_counts[j++]) {
    const int64_t depth = a.StateDepth(j);
    if (depth == 1) {
      RETURN_IF_ERROR(out(cast(g[op.inner_state(j)], carry[j].dtype())));
      continue;
    }
    // Shift the window one step back, then add what this step owes each tap.
    Var next = concatenate({zeros_like(subtensor(carry[j], {Slice{0, 1, std::nullopt}})),
                            subtensor(carry[j], {Slice{0, depth - 1, std::nullopt}})});
    for (int i = 0; i < a.state_tap_counts[j]; ++i) {
      next = inc_subtensor(subtensor(next, {depth + a.state_taps[at + i]}),
                           g[op.inner_state(j) + i]);
    }
    RETURN_IF_ERROR(out(next));
  }
  for (size_t s = 0; s < accumulated.size(); ++s) {
    const VariablePtr& acc = b_states[n_states + s];
    RETURN_IF_ERROR(out(Var(acc) + g[op.inner_non_seq(accumulated[s])]));
  }
  std::vector<std::pair<int, int>> seq_grads;  // (sequence, tap index) of each nit-sot
  for (int k = 0, at = 0; k < a.n_seqs(); at += a.seq_tap_counts[k++]) {
    if (IsDiscreteVar(in[op.outer_seq(k)])) continue;
    for (int i = 0; i < a.seq_tap_counts[k]; ++i) {
      seq_grads.push_back({k, at + i});
      RETURN_IF_ERROR(out(g[op.inner_seq(k) + i]));
    }
  }

  ScanAttrs back;
  back.name = "grad_of_" + a.name;
  back.seq_taps.assign(b_seqs.size(), 0);
  back.seq_tap_counts.assign(b_seqs.size(), 1);
  back.state_taps.assign(b_states.size(), -1);
  back.state_tap_counts.assign(b_states.size(), 1);
  back.state_keep_last.assign(b_states.size(), 1);
  for (const auto& [p, q] : pushed) RETURN_IF_ERROR(out(Var(q)));
  back.n_nit_sot = static_cast<int64_t>(seq_grads.size() + pushed.size());
  back.n_non_seqs = static_cast<int64_t>(b_non_seqs.size());
  ASSIGN_OR_RETURN(
      std::vector<Var> r,
      ApplyScan(back, ScanInputs{b_seqs, b_states, b_non_seqs, o_seqs, o_inits, o_non_seqs},
                b_outs, n_back));

  std::vector<Var> grads(node.num_inputs());
  grads[0] = disconnected_type();
  for (int j = 0; j < n_states; ++j) {
    const Var& init = in[op.outer_init(j)];
    if (IsDiscreteVar(init)) {
      grads[op.outer_init(j)] = FloatZerosLike(init);
      continue;
    }
    Var g_init = a.StateDepth(j) == 1 ? expand_dims(r[j], 0) : r[j];
    // Truncated: what is owed to the initial values past the window is dropped.
    if (a.truncate_gradient > 0) g_init = g_init * cast(le(n_fwd, n_back), init.dtype());
    grads[op.outer_init(j)] = g_init;
  }
  for (int l = 0; l < a.n_non_seqs; ++l) {
    grads[op.outer_non_seq(l)] = FloatZerosLike(in[op.outer_non_seq(l)]);
  }
  for (size_t s = 0; s < accumulated.size(); ++s) {
    grads[op.outer_non_seq(accumulated[s])] = r[n_states + s];
  }
  const size_t first_pushed = n_states + accumulated.size() + seq_grads.size();
  for (int l : summed) {
    if (pushed_of[l] < 0) continue;
    // p (steps, rows, m) and q (steps, rows, n), step by step alike, as (steps * rows) x m
    // and x n: m x n is the non-sequence's shape (and sizes a loop of no steps too).
    const Var& p = pushed[pushed_of[l]].first;
    const Var& q = r[first_pushed + pushed_of[l]];
    const Var& w = in[op.outer_non_seq(l)];
    const Var rows = shape_i(p, 0) * shape_i(p, 1);
    grads[op.outer_non_seq(l)] = dot(transpose(reshape(p, stack({rows, shape_i(w, 0)}))),
                                     reshape(q, stack({rows, shape_i(w, 1)})));
  }
  for (int k = 0; k < a.n_seqs(); ++k) grads[op.outer_seq(k)] = FloatZerosLike(in[op.outer_seq(k)]);
  for (size_t s = 0; s < seq_grads.size(); ++s) {
    const auto [k, tap_at] = seq_grads[s];
    int64_t lo = a.seq_taps[tap_at];
    const int first = op.inner_seq(k) - op.inner_seq(0);  // flat index of k's first tap
    for (int i = 0; i < a.seq_tap_counts[k]; ++i) lo = std::min(lo, a.seq_taps[first + i]);
    Var rows = Reversed(r[n_states + accumulated.size() + s]);
    Var start = constant(a.seq_taps[tap_at] - lo) + n_fwd - n_back;
    Var& gx = grads[op.outer_seq(k)];
    gx = inc_subtensor(Rows(gx, start, n_back), rows);
  }
  return grads;
}

}  // namespace

std::vector<Var> Scan::LOp(const Apply& node, const std::vector<Var>& output_grads) const {
  absl::StatusOr<std::vector<Var>> grads = ScanLOp(*this, node, output_grads);
  if (!grads.ok()) return std::vector<Var>(node.num_inputs(), Var(grads.status()));
  return *std::move(grads);
}

}  // namespace kiln
