// Scan's kernel: the inner graph linked once, then run per step on views of the sequences and
// of the states' buffers; each step's outputs are copied once, into their buffers.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/fgraph.h"
#include "core/tensor/status_macros.h"
#include "core/ops/ifelse.h"
#include "core/ops/op_util.h"
#include "core/runtime/linked.h"
#include "core/scan/scan_op.h"

namespace kiln {

namespace {

// x[i] as a view.
Tensor Row(const Tensor& x, int64_t i) {
  return x.View(Shape(x.shape().begin() + 1, x.shape().end()),
                std::vector<int64_t>(x.strides().begin() + 1, x.strides().end()),
                i * x.strides()[0]);
}

// Copies `src` into the contiguous row `dst` (same dtype and shape).
void CopyInto(Tensor dst, const Tensor& src) {
  if (dst.SharesBufferWith(src) && dst.raw_data() == src.raw_data()) return;
  const Tensor c = src.is_contiguous() ? src : src.Contiguous();
  std::memmove(dst.raw_data(), c.raw_data(), c.nbytes());
}

std::string TapsText(const std::vector<int64_t>& taps, int64_t start, int64_t count) {
  return absl::StrCat("[", absl::StrJoin(taps.begin() + start, taps.begin() + start + count, ", "),
                      "]");
}

}  // namespace

absl::Status RunScan(const Scan& op, const Apply& node, std::span<const Tensor> inputs,
                     std::vector<Tensor>& outputs) {
  const ScanAttrs& a = op.attrs();
  ASSIGN_OR_RETURN(const LinkedProgram* linked, op.program_.Get(op.inner_, false));
  const LinkedProgram& program = *linked;
  const int64_t n_steps = ScalarInt(inputs[0]);
  if (n_steps < 0) {
    return Invalid(op, absl::StrCat("n_steps is ", n_steps, ", but it cannot be negative"));
  }
  // Sequences: step t reads x[t + tap - min_tap].
  std::vector<int64_t> seq_min(a.n_seqs());
  for (int k = 0, at = 0; k < a.n_seqs(); at += a.seq_tap_counts[k++]) {
    const auto taps = std::span(a.seq_taps).subspan(at, a.seq_tap_counts[k]);
    seq_min[k] = *std::min_element(taps.begin(), taps.end());
    const int64_t span = *std::max_element(taps.begin(), taps.end()) - seq_min[k];
    const int64_t length = inputs[op.outer_seq(k)].shape()[0];
    // Compared without a sum that could wrap: length >= 0 and 0 <= span <= 2^21.
    if (n_steps > length - span) {
      return Invalid(
          op, absl::StrCat("sequence ", k, " has ", length, " entries, but ", n_steps,
                           " steps with taps ", TapsText(a.seq_taps, at, a.seq_tap_counts[k]),
                           " need ", static_cast<uint64_t>(n_steps) + static_cast<uint64_t>(span)));
    }
  }
  // States: a buffer of depth + n_steps rows (the initial rows, then one per step), or of depth
  // rows used as a ring when only the last value is kept.
  std::vector<Tensor> buffers(a.n_states());
  std::vector<int64_t> depth(a.n_states());
  for (int j = 0; j < a.n_states(); ++j) {
    const Tensor& init = inputs[op.outer_init(j)];
    depth[j] = a.StateDepth(j);
    if (init.shape()[0] != depth[j]) {
      return Invalid(
          op, absl::StrCat("the initial value of state ", j, " has shape ",
                           ShapeToString(init.shape()), " but its taps need ", depth[j], " rows"));
    }
    Shape shape = init.shape();
    if (!a.state_keep_last[j] && __builtin_add_overflow(shape[0], n_steps, &shape[0])) {
      return Invalid(op, absl::StrCat("n_steps is ", n_steps,
                                      ": too many steps for the rows of "
                                      "state ",
                                      j));
    }
    RETURN_IF_ERROR(CheckShape(absl::StrCat(op.Name(), " state ", j), shape, init.dtype()));
    buffers[j] = Tensor::Empty(init.dtype(), shape);
    for (int64_t r = 0; r < depth[j]; ++r) CopyInto(Row(buffers[j], r), Row(init, r));
  }
  auto state_row = [&](int j, int64_t position) {  // position: depth + step
    return Row(buffers[j], a.state_keep_last[j] ? position % depth[j] : position);
  };
  std::vector<Tensor> nit(a.n_nit_sot);
  std::vector<Tensor> slots = program.NewSlots();
  for (int l = 0; l < a.n_non_seqs; ++l) {
    slots[op.inner_non_seq(l)] = inputs[op.outer_non_seq(l)];
  }
  CallContext ctx;  // the inner program polls the call's interrupt, installed on this thread
  const std::vector<int>& out_slots = program.output_slots();
  int64_t steps_done = 0;
  for (int64_t t = 0; t < n_steps; ++t) {
    // Polled at every step, so that a loop whose body has no nodes still stops in time.
    RETURN_IF_ERROR(PollInterrupt());
    for (int k = 0, at = 0; k < a.n_seqs(); at += a.seq_tap_counts[k++]) {
      const Tensor& x = inputs[op.outer_seq(k)];
      for (int i = 0; i < a.seq_tap_counts[k]; ++i) {
        slots[op.inner_seq(k) + i] = Row(x, t + a.seq_taps[at + i] - seq_min[k]);
      }
    }
    for (int j = 0, at = 0; j < a.n_states(); at += a.state_tap_counts[j++]) {
      for (int i = 0; i < a.state_tap_counts[j]; ++i) {
        slots[op.inner_state(j) + i] = state_row(j, depth[j] + t + a.state_taps[at + i]);
      }
    }
    RETURN_IF_ERROR(program.Run(slots, ctx));
    for (int j = 0; j < a.n_states(); ++j) {
      const Tensor& y = slots[out_slots[j]];
      Tensor row = state_row(j, depth[j] + t);
      if (y.shape() != row.shape()) {
        return Invalid(op, absl::StrCat("the inner function's output ", j, " has shape ",
                                        ShapeToString(y.shape()), " at step ", t,
                                        " but its state has shape ", ShapeToString(row.shape())));
      }
      CopyInto(row, y);
    }
    for (int m = 0; m < a.n_nit_sot; ++m) {
      const Tensor& z = slots[out_slots[a.n_states() + m]];
      if (t == 0) {
        Shape shape = z.shape();
        shape.insert(shape.begin(), n_steps);
        RETURN_IF_ERROR(
            CheckShape(absl::StrCat(op.Name(), " output ", a.n_states() + m), shape, z.dtype()));
        nit[m] = Tensor::Empty(z.dtype(), shape);
      }
      Tensor row = Row(nit[m], t);
      if (z.shape() != row.shape()) {
        return Invalid(op, absl::StrCat("the inner function's output ", a.n_states() + m,
                                        " has shape ", ShapeToString(z.shape()), " at step ", t,
                                        " but ", ShapeToString(row.shape()), " at step 0"));
      }
      CopyInto(row, z);
    }
    steps_done = t + 1;
    if (a.as_while && IsTrue(slots[out_slots.back()])) break;
  }
  outputs.assign(node.num_outputs(), Tensor());
  for (int j = 0; j < a.n_states(); ++j) {
    const Tensor& b = buffers[j];
    if (a.state_keep_last[j]) {
      outputs[j] = state_row(j, depth[j] + steps_done - 1);
    } else {
      Shape shape = b.shape();
      shape[0] = steps_done;
      outputs[j] = b.View(shape, b.strides(), depth[j] * b.strides()[0]);
    }
  }
  for (int m = 0; m < a.n_nit_sot; ++m) {
    Tensor& z = nit[m];
    if (steps_done == 0) {  // never run: no step gave the shape; its static dims or 0
      const TensorType& t = *node.output_ptr(a.n_states() + m)->tensor_type();
      Shape shape = {0};
      for (int d = 1; d < t.ndim(); ++d) shape.push_back(t.shape()[d].value_or(0));
      z = Tensor::Empty(t.dtype(), shape);
    } else if (steps_done < z.shape()[0]) {
      Shape shape = z.shape();
      shape[0] = steps_done;
      z = z.View(shape, z.strides());
    }
    outputs[a.n_states() + m] = std::move(z);
  }
  return absl::OkStatus();
}

absl::Status Scan::Perform(const Apply& node, std::span<const Tensor> inputs,
                           std::vector<Tensor>& outputs) const {
  return RunScan(*this, node, inputs, outputs);
}

}  // namespace kiln
