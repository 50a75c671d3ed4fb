// The kernels of the abstract batch-normalization ops (core/ops/batchnorm.h), on float64 values:
// x is contiguous of shape `shape`; every other operand is read at x's positions (or at those of
// the statistics' shape) through element strides, 0 along its broadcast dims.
#ifndef KILN_CORE_OPS_BATCHNORM_KERNELS_H_
#define KILN_CORE_OPS_BATCHNORM_KERNELS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/tensor/tensor.h"

namespace kiln::batchnorm {

// An operand of a kernel: its values and its element strides over the walked shape.
struct Operand {
  const double* data;
  std::vector<int64_t> strides;
};

// The element strides of a contiguous tensor of shape `t` read at the positions of `target`
// (same rank, each dim of t 1 or target's): 0 along t's dims of length 1.
std::vector<int64_t> BroadcastStrides(const Shape& t, const Shape& target);

// `shape` with 1 along `axes`: the shape of the statistics.
Shape ReducedShape(const Shape& shape, const std::vector<int>& axes);

// mean and var (numpy's, ddof 0) of x over the axes whose stats have shape `reduced`, into
// `mean` and `var` (each of reduced's size); count is the number of values per statistic.
absl::Status MeanVar(const Shape& shape, const double* x, const Shape& reduced, double count,
                     double* mean, double* var);

// out = (x - mean) * (scale * invstd) + bias over x's shape; mean and invstd of the reduced
// shape, scale and bias read through their strides over x's shape.
absl::Status Normalize(const Shape& shape, const double* x, const Shape& reduced,
                       const double* mean, const double* invstd, const Operand& scale,
                       const Operand& bias, double* out);

// out = (x - mean) * (scale / sqrt(var + epsilon)) + bias, each operand through its strides.
absl::Status Infer(const Shape& shape, const double* x, const Operand& scale, const Operand& bias,
                   const Operand& mean, const Operand& var, double epsilon, double* out);

// AbstractBatchNormTrainGrad's values: d x (x's shape), d scale and d bias (the reduced shape),
// for the cotangent dy, scale, x_mean and x_invstd read through their strides over x's shape.
absl::Status TrainGrad(const Shape& shape, const double* x, const Shape& reduced, double count,
                       const Operand& dy, const Operand& scale, const Operand& x_mean,
                       const Operand& x_invstd, double* g_x, double* g_scale, double* g_bias);

}  // namespace kiln::batchnorm

#endif  // KILN_CORE_OPS_BATCHNORM_KERNELS_H_
