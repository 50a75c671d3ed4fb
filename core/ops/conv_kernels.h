// The kernels of the abstract convolution ops (conv.h), for float32 and float64, over 3 spatial
// axes (a 2-d convolution has a leading axis of 1): Winograd's F(2x2, 3x3) for the forward pass
// of 3x3 filters (conv_winograd.cc), panels that read the image directly (AVX2; conv_panels.cc,
// conv_panels_grad.cc), or tiles of im2col (and col2im) with OpenBLAS GEMM (conv_kernels.cc
// says which runs when).
#ifndef KILN_CORE_OPS_CONV_KERNELS_H_
#define KILN_CORE_OPS_CONV_KERNELS_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "core/tensor/tensor.h"

namespace kiln {

// The sizes of one convolution, every one checked (ResolveConvGeometry in conv.cc): the
// correlation out[n, m, o] = sum over c, j of img_padded[n, c, o * stride + j * dilation] *
// w[m, c, j] (w flipped on its spatial axes when `flip`), within each group.
struct ConvGeometry {
  int64_t batch = 0, channels = 0, filters = 0, groups = 1;  // N, C, M and the groups
  std::array<int64_t, 3> image{1, 1, 1}, kernel{1, 1, 1}, output{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1}, pad{0, 0, 0};  // pad: low side
  bool flip = true;
  int64_t ImageSize() const { return image[0] * image[1] * image[2]; }
  int64_t KernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t OutputSize() const { return output[0] * output[1] * output[2]; }
};

// out (N, M, output...) from img (N, C, image...) and kern (M, C / groups, kernel...); all
// contiguous, of one dtype (float32 or float64), out allocated.
absl::Status ConvForwardKernel(const ConvGeometry& g, const Tensor& img, const Tensor& kern,
                               Tensor& out);
// The gradient wrt the image (N, C, image...), from kern and topgrad (N, M, output...).
absl::Status ConvGradInputsKernel(const ConvGeometry& g, const Tensor& kern, const Tensor& top,
                                  Tensor& img_grad);
// The gradient wrt the kernel (M, C / groups, kernel...), from img and topgrad.
absl::Status ConvGradWeightsKernel(const ConvGeometry& g, const Tensor& img, const Tensor& top,
                                   Tensor& kern_grad);

// For benchmarks and tests: the columns of an im2col tile are capped at this many bytes (1: a
// tile per output position); 0 restores the default (256 KiB).
void SetConvColumnBytesForTesting(int64_t bytes);
// For benchmarks and tests: false keeps the kernels to the im2col tiles; true (the default) lets
// the panels run where they apply.
void SetConvPanelsForTesting(bool enabled);

}  // namespace kiln

#endif  // KILN_CORE_OPS_CONV_KERNELS_H_
