// Batched kernels of core ops for Blockwise: a kernel registered for an op class computes a whole
// batch at once (the slinalg ops' small-matrix kernels, small_linalg_batch.cc), where Blockwise
// would otherwise run the op's Perform per item. Keyed by op class (OpClassIdOf), not by name.
#ifndef KILN_CORE_OPS_BATCH_KERNEL_H_
#define KILN_CORE_OPS_BATCH_KERNEL_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/op.h"
#include "core/tensor/tensor.h"

namespace kiln {

// The batch of a Blockwise as a batched kernel sees it: item b of input i starts at element offset
// BatchCursor(batch, b).offset(i) of inputs[i]'s data; its core dims are inputs[i]'s last ones.
struct OpBatch {
  std::span<const Tensor> inputs;               // each: its batch dims, then its core dims
  std::span<const int64_t> shape;               // the broadcast batch dims
  std::span<const std::vector<int64_t>> steps;  // [input][batch dim]: element stride, 0 broadcast
  int64_t items = 0;                            // the product of shape
};

// Walks a batch's items from `first` in order (the last batch dim fastest), keeping each input's
// element offset: Next() costs an add per input, not a division.
class BatchCursor {
 public:
  BatchCursor(const OpBatch& batch, int64_t first)
      : batch_(batch), index_(batch.shape.size(), 0), offset_(batch.inputs.size(), 0) {
    for (int d = static_cast<int>(batch.shape.size()) - 1; d >= 0 && first > 0; --d) {
      index_[d] = first % batch.shape[d];
      first /= batch.shape[d];
      for (size_t i = 0; i < offset_.size(); ++i) offset_[i] += index_[d] * batch.steps[i][d];
    }
  }
  // Input i's element offset for the current item.
  int64_t offset(size_t i) const { return offset_[i]; }
  // Moves to the next item.
  void Next() {
    for (int d = static_cast<int>(index_.size()) - 1; d >= 0; --d) {
      ++index_[d];
      for (size_t i = 0; i < offset_.size(); ++i) offset_[i] += batch_.steps[i][d];
      if (index_[d] < batch_.shape[d]) return;
      for (size_t i = 0; i < offset_.size(); ++i) offset_[i] -= batch_.steps[i][d] * index_[d];
      index_[d] = 0;
    }
  }

 private:
  const OpBatch& batch_;
  std::vector<int64_t> index_;
  std::vector<int64_t> offset_;
};

// A batched kernel of `op` (an op of the class it is registered for) on its core node: computes
// every item of `batch` into `outputs` (allocated by Blockwise, contiguous, batch dims first) and
// returns true, listing in `redo` (ascending) the items it leaves to the op's Perform (an error or
// a special case: Blockwise runs Perform on each, in order, and reports the first error). False,
// touching nothing, when it does not take these inputs. An error status only for an interrupt.
using BatchKernel = absl::StatusOr<bool> (*)(const Op& op, const Apply& core_node,
                                             const OpBatch& batch, std::span<Tensor> outputs,
                                             std::vector<int64_t>& redo);

// Registers `kernel` for the ops of class `id` (at static initialization; one per class).
bool RegisterBatchKernel(OpClassId id, BatchKernel kernel);
// The batched kernel of `op`'s class, or null.
BatchKernel FindBatchKernel(const Op& op);

}  // namespace kiln

#endif  // KILN_CORE_OPS_BATCH_KERNEL_H_
