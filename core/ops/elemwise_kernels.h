// The kernels of the scalar ops over tensors, one instantiation per op (see
// elemwise_kernels_impl.h and elemwise_kernels_*.cc).
#ifndef KILN_CORE_OPS_ELEMWISE_KERNELS_H_
#define KILN_CORE_OPS_ELEMWISE_KERNELS_H_

#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/ops/scalar_op.h"
#include "core/tensor/tensor.h"

namespace kiln {

// Applies op K elementwise to inputs already converted to `compute`, broadcast to `shape`;
// `name` prefixes errors (integer division by zero, negative integer powers).
template <ScalarOpKind K>
absl::Status RunScalarKind(const std::string& name, DType compute, std::span<const Tensor> in,
                           const Shape& shape, Tensor& out);

}  // namespace kiln

#endif  // KILN_CORE_OPS_ELEMWISE_KERNELS_H_
