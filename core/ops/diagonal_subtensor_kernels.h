// The kernels of DiagonalSubtensor and IncDiagonalSubtensor (core/ops/diagonal_subtensor.h).
#ifndef KILN_CORE_OPS_DIAGONAL_SUBTENSOR_KERNELS_H_
#define KILN_CORE_OPS_DIAGONAL_SUBTENSOR_KERNELS_H_

#include "absl/status/statusor.h"
#include "core/graph/op.h"
#include "core/tensor/tensor.h"

namespace kiln {

// The strided view of x that Aesara's get_diagonal_subtensor_view returns for the axis values in
// the scalars i0 and i1 (negative counts from the end): x's dims with i0 shortened from n0 to
// n0 - n1 + 1, element (a, b) of axes (i0, i1) at x[a + n1 - 1 - b, b]. INVALID_ARGUMENT naming
// `op` for an axis out of range or n0 < n1.
absl::StatusOr<Tensor> DiagonalStripe(const Op& op, const Tensor& x, const Tensor& i0,
                                      const Tensor& i1);

// stripe += amt, amt broadcast to the stripe's shape and cast to its dtype (the stripe's buffer
// is written); INVALID_ARGUMENT naming `op` when the shapes do not broadcast.
absl::Status AddInto(const Op& op, Tensor& stripe, const Tensor& amt);

}  // namespace kiln

#endif  // KILN_CORE_OPS_DIAGONAL_SUBTENSOR_KERNELS_H_
