// The forward convolution by Winograd's minimal filtering F(2x2, 3x3): 3x3 filters, unit strides
// and dilations, one group. Each 4x4 tile of the (padded) image and each filter are transformed
// (B^T d B, G g G^T), the 16 elementwise products over the channels become 16 GEMMs of (filters x
// channels) by (channels x tiles), and each product's 4x4 tile becomes a 2x2 block of the output
// (A^T m A): 16 multiply-adds where the direct correlation has 36, for 4 outputs. Internal to the
// convolution kernels (conv_kernels.cc chooses it where it applies and pays).
#ifndef KILN_CORE_OPS_CONV_WINOGRAD_H_
#define KILN_CORE_OPS_CONV_WINOGRAD_H_

#include "absl/status/status.h"
#include "core/ops/conv_kernels.h"

namespace kiln::conv {

// Whether WinogradForward applies to the geometry and is expected to beat the direct forms (2-d,
// 3x3, unit strides and dilations, one group, enough channels and filters for its GEMMs).
bool WinogradForwardApplies(const ConvGeometry& g);

// The correlation of img by the (already flipped) weights w into out (T: float or double).
template <typename T>
absl::Status WinogradForward(const ConvGeometry& g, const T* img, const T* w, T* out, DType dtype);

// For tests and benchmarks: false keeps the forward convolution off the Winograd path.
void SetWinogradEnabled(bool enabled);

}  // namespace kiln::conv

#endif  // KILN_CORE_OPS_CONV_WINOGRAD_H_
