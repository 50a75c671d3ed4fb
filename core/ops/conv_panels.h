// The convolution kernels' direct form (x86-64 with AVX2 and FMA): panels of the output (or of
// a gradient) computed from the image's rows, with no im2col buffer (conv_panels.cc and
// conv_panels_grad.cc say how). Internal to the convolution kernels (conv_kernels.cc chooses
// between these and the tiles).
#ifndef KILN_CORE_OPS_CONV_PANELS_H_
#define KILN_CORE_OPS_CONV_PANELS_H_

#include <array>
#include <cstdint>
#include <vector>

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
template <typename T>
bool FusedGradInputsApplies(const ConvGeometry& g);
// Whether FusedGradInputs costs less than DirectGradInputs (both applying).
template <typename T>
bool FusedGradInputsCheaper(const ConvGeometry& g);
template <typename T>
bool TransposedGradWeightsApplies(const ConvGeometry& g);
// Whether TransposedGradWeights is the faster of the weights' gradients here.
template <typename T>
bool TransposedGradWeightsPreferred(const ConvGeometry& g);

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
// The image's gradient with col2im in the registers (stride 1 along x, pads of 0 or more): each
// block of 6 columns' rows times a panel of topgrad is added straight onto the image's planes.
template <typename T>
absl::Status FusedGradInputs(const ConvGeometry& g, const T* w, const T* top, T* dimg,
                             DType dtype);
// The weights' gradient (spatially reversed when g.flip) into dkern, as blocks of 6 columns'
// rows by 16 floats (8 doubles) of filters summed over the positions (any strides).
template <typename T>
absl::Status TransposedGradWeights(const ConvGeometry& g, const T* img, const T* top, T* dkern,
                                   DType dtype);

// Shared by the panels' files: whether the panels may run (AVX2 and FMA, not turned off).
bool HasAvx2Fma();
// The extents of the images' planes as the panels read them (padded on either side).
std::array<int64_t, 3> PanelExtents(const ConvGeometry& g);
// Whether the images' zero-padded copy stays within a few times the image and output planes.
bool PaddingFits(const ConvGeometry& g);
// The images as the panels read them (conv_panels.cc says when a padded copy is made).
template <typename T>
const T* PanelImages(const ConvGeometry& g, const T* img, DType dtype, Tensor& storage,
                     std::array<int64_t, 3>& in, bool whole_vectors, int64_t slack);
// The offset in a group's (padded, extents `in`) planes of each row (c, kz, ky, kx) of the
// columns, from the input of a position's first kernel tap.
std::vector<int64_t> RowOffsets(const ConvGeometry& g, const std::array<int64_t, 3>& in);
#endif  // KILN_CONV_DIRECT

}  // namespace kiln::conv

#endif  // KILN_CORE_OPS_CONV_PANELS_H_
