// Gather and scatter along axis 0 with an integer index vector: the kernels of
// AdvancedSubtensor1 and AdvancedIncSubtensor1, and of AdvancedSubtensor and AdvancedIncSubtensor
// when their index is one such vector. Indices are checked once, in a tight loop, before anything
// is read or written; rows (the trailing dims) move by memcpy or a flat loop when contiguous,
// element by element along their strides otherwise; no index allocates.
#ifndef KILN_CORE_OPS_INDEXING_KERNELS_H_
#define KILN_CORE_OPS_INDEXING_KERNELS_H_

#include "absl/status/statusor.h"
#include "core/tensor/tensor.h"

namespace kiln {

class Op;

// x[idx] along axis 0 (numpy.take): a new contiguous tensor of shape (len(idx),) + x.shape[1:].
// x may have any strides; idx is an integer vector of any integer dtype and stride, negative
// values counting from the end. An index out of range is `op`'s error naming it, axis 0 and its
// size; the output's shape is checked before it is allocated.
absl::StatusOr<Tensor> TakeRows(const Op& op, const Tensor& x, const Tensor& idx);

// For i in order, out[idx[i]] = y[i] (set: the last write of a repeated index is kept) or
// out[idx[i]] += y[i] (numpy.add.at: repeated indices accumulate in index order, so floats round
// exactly as NumPy's). `out` is C-contiguous and written in place; y has out's dtype and shape
// (len(idx),) + out.shape[1:], any strides (broadcast views welcome). Indices are checked as
// TakeRows's before anything is written.
absl::Status ScatterRows(const Op& op, Tensor& out, const Tensor& y, const Tensor& idx, bool set);

}  // namespace kiln

#endif  // KILN_CORE_OPS_INDEXING_KERNELS_H_
