// The convolution kernels' direct form (x86-64 with AVX2 and FMA, stride 1 along x): panels of
// the output computed from the image's rows, with no im2col buffer (conv_panels.cc says how).
// Internal to the convolution kernels (conv_kernels.cc chooses between these and the tiles).
#ifndef KILN_CORE_OPS_CONV_PANELS_H_
#define KILN_CORE_OPS_CONV_PANELS_H_

#include "absl/status/status.h"
#include "core/ops/conv_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define KILN_CONV_DIRECT 1
#endif

namespace kiln::conv {

// Lets the panels run where they apply (true, the default) or keeps every call to the tiles.
void SetPanelsEnabled(bool enabled);

#ifdef KILN_CONV_DIRECT
inline constexpr int kPanelRows = 6;  // filters (or channels) per block of a panel

// Whether each kernel applies to the geometry on this CPU (T: float or double).
template <typename T>
bool DirectForwardApplies(const ConvGeometry& g);
template <typename T>
bool DirectGradInputsApplies(const ConvGeometry& g);
template <typename T>
bool PanelGradInputsApplies(const ConvGeometry& g);
// Whether PanelGradInputs costs less than DirectGradInputs (both applying).
template <typename T>
bool PanelGradInputsCheaper(const ConvGeometry& g);
template <typename T>
bool DirectGradWeightsApplies(const ConvGeometry& g);

// The correlation of img by the (already flipped) weights w into out.
template <typename T>
absl::Status DirectForward(const ConvGeometry& g, const T* img, const T* w, T* out, DType dtype);
// The image's gradient as the correlation of the padded topgrad by the swapped, reversed
// weights w (strides of 1).
template <typename T>
absl::Status DirectGradInputs(const ConvGeometry& g, const T* w, const T* top, T* dimg,
                              DType dtype);
// The image's gradient as the product of the weights' columns by panels of topgrad, then
// col2im (few channels per group, or strides).
template <typename T>
absl::Status PanelGradInputs(const ConvGeometry& g, const T* w, const T* top, T* dimg, DType dtype);
// The correlation weights' gradient (not flipped) into dw.
template <typename T>
absl::Status DirectGradWeights(const ConvGeometry& g, const T* img, const T* top, T* dw,
                               DType dtype);
#endif  // KILN_CONV_DIRECT

}  // namespace kiln::conv

#endif  // KILN_CORE_OPS_CONV_PANELS_H_
