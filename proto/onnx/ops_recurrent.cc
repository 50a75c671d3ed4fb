// ONNX's recurrent operators (RNN, GRU, LSTM) as Kiln Scans, one per direction: the input's
// projection computed for every step at once, the recurrence in the loop (default activations,
// layout 0, no clip; sequence_lens is refused).
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "core/scan/scan.h"
#include "core/tensor/status_macros.h"
#include "proto/onnx/import_node.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

enum class Cell { kRnn, kGru, kLstm };

// Rows [k * h, (k + 1) * h) of a gate-stacked matrix or the columns of a gate-stacked row block.
Var Gate(const Var& x, int k, int64_t h, int axis) {
  std::vector<Index> idx(axis, Index(kiln::Slice{}));
  idx.push_back(Index(kiln::Slice{k * h, (k + 1) * h, 1}));
  return subtensor(x, idx);
}

// Input d of a per-direction stack (its first dim).
Var Direction(const Var& x, int64_t d) { return subtensor(x, {Index(d)}); }

struct Recurrence {
  Cell cell;
  int64_t h;
  bool linear_before_reset;
};

// One direction's loop: its outputs at every step (T, N, h) in time order, its last hidden and
// (LSTM) cell state.
absl::StatusOr<std::vector<Var>> RunDirection(const Recurrence& r, const Var& xw, const Var& rt,
                                              const Var& rb, const Var& h0, const Var& c0,
                                              const Var& peep, bool backwards) {
  const int64_t h = r.h;
  ScanFn step = [&](const std::vector<Var>& a) {
    const Var& x_t = a[0];
    const Var& h_prev = a[1];
    const Var& rt_in = a[r.cell == Cell::kLstm ? 3 : 2];
    const Var& rb_in = a[r.cell == Cell::kLstm ? 4 : 3];
    if (r.cell == Cell::kRnn) {
      return ScanStep{{tanh(x_t + dot(h_prev, rt_in) + rb_in)}};
    }
    if (r.cell == Cell::kGru) {  // gates z, r, h
      const Var hr = dot(h_prev, rt_in) + rb_in;
      const Var z = sigmoid(Gate(x_t, 0, h, 1) + Gate(hr, 0, h, 1));
      const Var reset = sigmoid(Gate(x_t, 1, h, 1) + Gate(hr, 1, h, 1));
      const Var rh = Gate(rt_in, 2, h, 1), rbh = Gate(rb_in, 2, h, 0);
      const Var cand =
          r.linear_before_reset ? reset * (dot(h_prev, rh) + rbh) : dot(reset * h_prev, rh) + rbh;
      const Var hh = tanh(Gate(x_t, 2, h, 1) + cand);
      return ScanStep{{(scalar_constant(1.0, hh.dtype()) - z) * hh + z * h_prev}};
    }
    // LSTM: gates i, o, f, c; peepholes i, o, f.
    const Var& c_prev = a[2];
    const Var& p = a[5];
    const Var g = x_t + dot(h_prev, rt_in) + rb_in;
    const Var i = sigmoid(Gate(g, 0, h, 1) + Gate(p, 0, h, 0) * c_prev);
    const Var f = sigmoid(Gate(g, 2, h, 1) + Gate(p, 2, h, 0) * c_prev);
    const Var c = f * c_prev + i * tanh(Gate(g, 3, h, 1));
    const Var o = sigmoid(Gate(g, 1, h, 1) + Gate(p, 1, h, 0) * c);
    return ScanStep{{o * tanh(c), c}};
  };
  ScanArgs args;
  args.sequences.push_back({xw});
  args.outputs_info.push_back({h0});
  if (r.cell == Cell::kLstm) args.outputs_info.push_back({c0});
  args.non_sequences = {rt, rb};
  if (r.cell == Cell::kLstm) args.non_sequences.push_back(peep);
  args.go_backwards = backwards;
  args.name = "onnx_recurrence";
  ASSIGN_OR_RETURN(ScanResult result, scan(step, std::move(args)));
  std::vector<Var> out;
  for (const Var& seq : result.outputs) {
    const Var last = subtensor(seq, {Index(int64_t{-1})});
    out.push_back(backwards ? subtensor(seq, {Index(kiln::Slice{std::nullopt, std::nullopt, -1})})
                            : seq);
    out.push_back(last);
  }
  return out;  // Y, Y_h (then for LSTM: C's sequence, Y_c)
}

template <Cell kCell>
Outs Recurrent(const ImportNode& n) {
  const Var x = n.in(0), w = n.in(1), rw = n.in(2);
  if (!x.ok() || !w.ok() || !rw.ok()) return n.Invalid("X, W and R are required");
  if (n.has(4)) return n.Unimplemented("sequence_lens");
  if (n.Int("layout", 0) != 0) return n.Unimplemented("layout 1");
  if (n.has_attr("clip")) return n.Unimplemented("clip");
  if (n.has_attr("activations") || n.has_attr("activation_alpha")) {
    return n.Unimplemented("activations other than the defaults");
  }
  if (kCell == Cell::kLstm && n.Int("input_forget", 0) != 0) return n.Unimplemented("input_forget");
  const int64_t h = n.Int("hidden_size", 0);
  if (absl::Status s = CheckSizes(n, "hidden_size", {h}, 1, 1); !s.ok()) return s;
  const std::string direction = n.String("direction", "forward");
  const int gates = kCell == Cell::kLstm ? 4 : kCell == Cell::kGru ? 3 : 1;
  const int dirs = direction == "bidirectional" ? 2 : 1;
  const Recurrence r{kCell, h, n.Int("linear_before_reset", 0) != 0};
  const DType dtype = x.dtype();
  const Var batch = shape_i(x, 1);
  std::vector<std::vector<Var>> per_dir;
  for (int d = 0; d < dirs; ++d) {
    const bool backwards = direction == "reverse" || d == 1;
    const Var wd = Direction(w, d), rd = Direction(rw, d);
    Var wb = zeros({scalar_constant(gates * h, DType::kInt64)}, dtype), rb = wb;
    if (n.has(3)) {
      const Var b = Direction(n.in(3), d);
      wb = subtensor(b, {Index(kiln::Slice{int64_t{0}, gates * h, 1})});
      rb = subtensor(b, {Index(kiln::Slice{gates * h, 2 * gates * h, 1})});
    }
    const Var xw = matmul(x, transpose(wd)) + wb;  // (T, N, gates h)
    const std::vector<Var> state_dims = {batch, scalar_constant(h, DType::kInt64)};
    const Var h0 = n.has(5) ? Direction(n.in(5), d) : zeros(state_dims, dtype);
    const Var c0 =
        kCell == Cell::kLstm && n.has(6) ? Direction(n.in(6), d) : zeros(state_dims, dtype);
    const Var peep = kCell == Cell::kLstm && n.has(7)
                         ? Direction(n.in(7), d)
                         : zeros({scalar_constant(3 * h, DType::kInt64)}, dtype);
    ASSIGN_OR_RETURN(std::vector<Var> out,
                     RunDirection(r, xw, transpose(rd), rb, h0, c0, peep, backwards));
    per_dir.push_back(std::move(out));
  }
  // Y (T, dirs, N, h), Y_h (dirs, N, h), and for LSTM Y_c (dirs, N, h).
  std::vector<Var> ys, hs, cs;
  for (const auto& out : per_dir) {
    ys.push_back(dimshuffle(out[0], {0, -1, 1, 2}));
    hs.push_back(dimshuffle(out[1], {-1, 0, 1}));
    if (kCell == Cell::kLstm) cs.push_back(dimshuffle(out[3], {-1, 0, 1}));
  }
  std::vector<Var> result = {concatenate(ys, 1), concatenate(hs, 0)};
  if (kCell == Cell::kLstm) result.push_back(concatenate(cs, 0));
  return result;
}

}  // namespace

void AddRecurrentImporters(OpTable& t) {
  t["RNN"] = Recurrent<Cell::kRnn>;
  t["GRU"] = Recurrent<Cell::kGru>;
  t["LSTM"] = Recurrent<Cell::kLstm>;
}

}  // namespace kiln::onnx
