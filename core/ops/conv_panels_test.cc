// The convolution's panel kernels one by one (conv_panels.h), whichever the dispatcher would
// choose: each gradient kernel that applies to a geometry against a loop over every product, on
// geometries that reach their edge cases (partial vectors and blocks, pads, strides, dilation,
// groups, 3-d, flipped or not, float32 and float64), and the dispatcher's choices for the
// benchmark's layers.
#include "core/ops/conv_panels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ops/conv_kernels.h"
#include "core/tensor/tensor.h"

namespace kiln {
namespace {

#ifdef KILN_CONV_DIRECT

// A geometry: batch, channels, filters, groups, then per axis (z, y, x) image, kernel, stride,
// dilation and low pad; the output follows from a high pad equal to the low one.
ConvGeometry Geometry(int64_t n, int64_t c, int64_t m, int64_t groups, std::array<int64_t, 3> in,
                      std::array<int64_t, 3> k, std::array<int64_t, 3> s,
                      std::array<int64_t, 3> d, std::array<int64_t, 3> pad, bool flip) {
  ConvGeometry g;
  g.batch = n;
  g.channels = c;
  g.filters = m;
  g.groups = groups;
  g.image = in;
  g.kernel = k;
  g.stride = s;
  g.dilation = d;
  g.pad = pad;
  g.flip = flip;
  for (int a = 0; a < 3; ++a) {
    g.output[a] = (in[a] + 2 * pad[a] - ((k[a] - 1) * d[a] + 1)) / s[a] + 1;
  }
  return g;
}

std::vector<double> Values(int64_t count, uint64_t seed) {
  std::vector<double> v(count);
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (double& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<double>(s >> 11) / static_cast<double>(uint64_t{1} << 53) * 2 - 1;
  }
  return v;
}

// Every product of the convolution: fn(image index, weight index, output index), the weight
// index of the (unflipped) kernel as stored.
template <typename Fn>
void ForEachProduct(const ConvGeometry& g, Fn fn) {
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.filters; ++m) {
      const int64_t grp = m / mg;
      for (int64_t oz = 0; oz < g.output[0]; ++oz) {
        for (int64_t oy = 0; oy < g.output[1]; ++oy) {
          for (int64_t ox = 0; ox < g.output[2]; ++ox) {
            const int64_t out = (((n * g.filters + m) * g.output[0] + oz) * g.output[1] + oy) *
                                    g.output[2] + ox;
            for (int64_t c = 0; c < cg; ++c) {
              for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
                for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
                  for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                    const int64_t iz = oz * g.stride[0] + kz * g.dilation[0] - g.pad[0];
                    const int64_t iy = oy * g.stride[1] + ky * g.dilation[1] - g.pad[1];
                    const int64_t ix = ox * g.stride[2] + kx * g.dilation[2] - g.pad[2];
                    if (iz < 0 || iz >= g.image[0] || iy < 0 || iy >= g.image[1] || ix < 0 ||
                        ix >= g.image[2]) {
                      continue;
                    }
                    const int64_t img =
                        (((n * g.channels + grp * cg + c) * g.image[0] + iz) * g.image[1] + iy) *
                            g.image[2] + ix;
                    // The correlation's tap; the stored weight is the reversed one when flipped.
                    int64_t tz = kz, ty = ky, tx = kx;
                    if (g.flip) {
                      tz = g.kernel[0] - 1 - kz;
                      ty = g.kernel[1] - 1 - ky;
                      tx = g.kernel[2] - 1 - kx;
                    }
                    const int64_t w =
                        (((m * cg + c) * g.kernel[0] + tz) * g.kernel[1] + ty) * g.kernel[2] + tx;
                    fn(img, w, out);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

// The correlation's weights (reversed spatially when flipped), as the gradient kernels take
// them.
template <typename T>
std::vector<T> CorrelationWeights(const ConvGeometry& g, const std::vector<T>& w) {
  if (!g.flip) return w;
  const int64_t k = g.KernelSize();
  std::vector<T> out(w.size());
  for (size_t r = 0; r < w.size() / k; ++r) {
    for (int64_t j = 0; j < k; ++j) out[r * k + j] = w[r * k + (k - 1 - j)];
  }
  return out;
}

template <typename T>
void ExpectNear(const std::vector<T>& got, const std::vector<double>& want, const std::string& what,
                double f32_tol) {
  const double tol = sizeof(T) == 4 ? f32_tol : 1e-12;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " element " << i;
  }
}

// Each gradient kernel that applies to g against the loop (with a poisoned output first, so
// that an element left unwritten shows); float32 within f32_tol (relative, past 1).
template <typename T>
void CheckGradients(const ConvGeometry& g, int trial, double f32_tol = 2e-5) {
  SCOPED_TRACE(absl::StrCat("trial ", trial, sizeof(T) == 4 ? " float32" : " float64"));
  const DType dtype = sizeof(T) == 4 ? DType::kFloat32 : DType::kFloat64;
  const int64_t cg = g.channels / g.groups;
  const int64_t isize = g.batch * g.channels * g.ImageSize();
  const int64_t wsize = g.filters * cg * g.KernelSize();
  const int64_t osize = g.batch * g.filters * g.OutputSize();
  const std::vector<double> xd = Values(isize, 10 + trial), wd = Values(wsize, 20 + trial),
                            td = Values(osize, 30 + trial);
  std::vector<double> want_dx(isize), want_dw(wsize);
  ForEachProduct(g, [&](int64_t i, int64_t k, int64_t out) {
    want_dx[i] += td[out] * wd[k];
    want_dw[k] += td[out] * xd[i];
  });
  const std::vector<T> x(xd.begin(), xd.end()), w(wd.begin(), wd.end()), t(td.begin(), td.end());
  const std::vector<T> wc = CorrelationWeights(g, w);
  const T poison = std::nan("");
  int ran = 0;
  if (conv::FusedGradInputsApplies<T>(g)) {
    std::vector<T> dx(isize, poison);
    ASSERT_TRUE(conv::FusedGradInputs<T>(g, wc.data(), t.data(), dx.data(), dtype).ok());
    ExpectNear(dx, want_dx, "FusedGradInputs", f32_tol);
    ++ran;
  }
  if (conv::TransposedGradWeightsApplies<T>(g)) {
    std::vector<T> dw(wsize, poison);
    ASSERT_TRUE(conv::TransposedGradWeights<T>(g, x.data(), t.data(), dw.data(), dtype).ok());
    ExpectNear(dw, want_dw, "TransposedGradWeights", f32_tol);
    ++ran;
  }
  // And the dispatcher's choice.
  Tensor dx = Tensor::Empty(dtype, {isize}), dw = Tensor::Empty(dtype, {wsize});
  Tensor tw = Tensor::Empty(dtype, {wsize}), tx = Tensor::Empty(dtype, {isize}),
         tt = Tensor::Empty(dtype, {osize});
  std::copy(w.begin(), w.end(), tw.data<T>());
  std::copy(x.begin(), x.end(), tx.data<T>());
  std::copy(t.begin(), t.end(), tt.data<T>());
  ASSERT_TRUE(ConvGradInputsKernel(g, tw, tt, dx).ok());
  ASSERT_TRUE(ConvGradWeightsKernel(g, tx, tt, dw).ok());
  ExpectNear(std::vector<T>(dx.data<T>(), dx.data<T>() + isize), want_dx, "GradInputs", f32_tol);
  ExpectNear(std::vector<T>(dw.data<T>(), dw.data<T>() + wsize), want_dw, "GradWeights", f32_tol);
  // (Every case applies to one of them where the CPU runs the panels.)
  if (conv::HasAvx2Fma()) {
    EXPECT_GT(ran, 0) << "no panel kernel applied";
  }
}

TEST(ConvPanelsTest, GradientKernelsMatchALoop) {
  // Partial vectors (widths 3, 10, 13), blocks of rows past 6 and filters past 16 (a second
  // panel of filters), 1 to 3 groups, pads (valid, half, full), strides along y and x, dilation,
  // 3-d, flipped or not.
  const ConvGeometry cases[] = {
      Geometry(1, 6, 16, 1, {1, 12, 12}, {1, 5, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, false),
      Geometry(2, 1, 6, 1, {1, 14, 13}, {1, 5, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
      Geometry(1, 8, 20, 2, {1, 9, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, true),
      Geometry(3, 3, 9, 3, {1, 7, 8}, {1, 3, 2}, {1, 2, 1}, {1, 1, 2}, {0, 2, 1}, false),
      Geometry(1, 4, 5, 1, {1, 6, 3}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 2, 2}, true),
      Geometry(2, 2, 4, 2, {4, 5, 6}, {2, 2, 3}, {2, 1, 1}, {1, 2, 1}, {1, 0, 1}, true),
      Geometry(1, 5, 7, 1, {1, 11, 12}, {1, 3, 3}, {1, 2, 3}, {1, 1, 1}, {0, 1, 0}, false),
      Geometry(1, 13, 18, 1, {1, 8, 16}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, false),
  };
  int trial = 0;
  for (const ConvGeometry& g : cases) {
    for (const bool flip : {false, true}) {
      ConvGeometry h = g;
      h.flip = flip;
      CheckGradients<float>(h, trial);
      CheckGradients<double>(h, trial);
      ++trial;
    }
  }
}

// Images whose transposed topgrad passes the kernel's 4 MiB (256x256 positions of 8 filters):
// taken in blocks of images (2 and 1 in float32, one at a time in float64), on the threads.
TEST(ConvPanelsTest, TransposedGradWeightsInBlocksOfImages) {
  const ConvGeometry g =
      Geometry(3, 1, 8, 1, {1, 258, 258}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, true);
  // (A weight's gradient sums 196,608 products: float32 keeps about 5 digits.)
  CheckGradients<float>(g, 100, 1e-4);
  CheckGradients<double>(g, 101);
}

// The benchmark's layers (tests/bench/conv_vs_torch.py) take the kernels measured fastest
// there: LeNet's second layer at batch 1 the fused and transposed panels, its first layer's 6
// filters the lanes' sums, VGG's block the correlation for the image and the transposed panels
// for the weights.
TEST(ConvPanelsTest, ChoicesForTheBenchmarkLayers) {
  if (!conv::HasAvx2Fma()) GTEST_SKIP() << "no AVX2 and FMA";
  const ConvGeometry lenet2 =
      Geometry(1, 6, 16, 1, {1, 12, 12}, {1, 5, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, false);
  const ConvGeometry lenet1 =
      Geometry(1, 1, 6, 1, {1, 28, 28}, {1, 5, 5}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, false);
  const ConvGeometry vgg =
      Geometry(1, 64, 64, 1, {1, 56, 56}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, false);
  for (const bool f32 : {true, false}) {
    SCOPED_TRACE(f32 ? "float32" : "float64");
    auto fused = [&](const ConvGeometry& g) {
      return f32 ? conv::FusedGradInputsCheaper<float>(g) : conv::FusedGradInputsCheaper<double>(g);
    };
    auto transposed = [&](const ConvGeometry& g) {
      return f32 ? conv::TransposedGradWeightsPreferred<float>(g)
                 : conv::TransposedGradWeightsPreferred<double>(g);
    };
    EXPECT_TRUE(fused(lenet2));
    EXPECT_TRUE(transposed(lenet2));
    EXPECT_FALSE(transposed(lenet1));
    EXPECT_FALSE(fused(vgg));
    EXPECT_TRUE(transposed(vgg));
  }
}

#endif  // KILN_CONV_DIRECT

}  // namespace
}  // namespace kiln
