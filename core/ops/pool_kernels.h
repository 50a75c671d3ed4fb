// The loops behind the pooling ops (core/ops/pool.h): over a batch of images (x's leading dims
// flattened) of `dims.size()` pooled dims, C-contiguous, in float32, float64, int64 or uint64.
// Rows of the last pooled dim are combined with contiguous loops the compiler vectorizes; images
// (or output rows) are split across the threads, and the call's interrupt is polled between rounds.
#ifndef KILN_CORE_OPS_POOL_KERNELS_H_
#define KILN_CORE_OPS_POOL_KERNELS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/tensor/tensor.h"

namespace kiln::pooling {

// What a window computes.
enum class Mode { kMax, kSum, kAverageIncPad, kAverageExcPad };

// One pooled dim, already checked (w >= 1, s >= 1, 0 <= pad < w, n + 2 pad fits an int64):
// x's length, window, stride, padding and the number of windows.
struct Dim {
  int64_t n, w, s, pad, out;
};

// The number of windows along a dim of length n, as Aesara's Pool.out_shape (Python's floor
// division), for n + 2 pad = padded >= 0.
int64_t OutLength(int64_t padded, int64_t w, int64_t s, bool ignore_border);

// True when some window of a dim holds no element of x (only when x's dim is empty).
bool HasEmptyWindow(const Dim& d);

// out (batch, outs...) = the windows of x (batch, ns...) reduced by `mode`.
absl::Status Forward(Mode mode, int64_t batch, const std::vector<Dim>& dims, const Tensor& x,
                     Tensor& out);
// gx (x's shape, any contents) = the sum of gz over the windows where the element equals maxout.
absl::Status MaxGrad(int64_t batch, const std::vector<Dim>& dims, const Tensor& x,
                     const Tensor& maxout, const Tensor& gz, Tensor& gx);
// gx (x's shape, any contents) = the sum of gz (divided by the window's count for the averages)
// over the windows holding each element.
absl::Status AverageGrad(Mode mode, int64_t batch, const std::vector<Dim>& dims, const Tensor& gz,
                         Tensor& gx);
// ggz (maxout's shape) = per window, the sum of ggx over the elements equal to its maxout.
absl::Status MaxGradGrad(int64_t batch, const std::vector<Dim>& dims, const Tensor& x,
                         const Tensor& maxout, const Tensor& ggx, Tensor& ggz);

// argmax (batch * the pooled output's size) = per window, the offset in its image of x's first
// maximum in C order (a NaN counting as the maximum), the padding skipped; every window must
// hold an element.
absl::Status WindowArgmax(int64_t batch, const std::vector<Dim>& dims, const Tensor& x,
                          Tensor& argmax);

}  // namespace kiln::pooling

#endif  // KILN_CORE_OPS_POOL_KERNELS_H_
