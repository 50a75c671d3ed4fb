// The forward convolution by Winograd's F(2x2, 3x3) (conv_winograd.h) against every product
// summed in double: odd and even outputs (partial tiles), pads of 0, 1 and 2, batches whose units
// of tiles cross images, flipped or not, float32 and float64; and where the dispatcher takes it.
#include "core/ops/conv_winograd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ops/conv_kernels.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/tensor.h"

namespace kiln {
namespace {

// A 2-d geometry of 3x3 filters, unit strides and a pad of `pad` on every side.
ConvGeometry Geometry3x3(int64_t n, int64_t c, int64_t m, int64_t h, int64_t w, int64_t pad,
                         bool flip = false) {
  ConvGeometry g;
  g.batch = n;
  g.channels = c;
  g.filters = m;
  g.image = {1, h, w};
  g.kernel = {1, 3, 3};
  g.pad = {0, pad, pad};
  g.output = {1, h + 2 * pad - 2, w + 2 * pad - 2};
  g.flip = flip;
  return g;
}

// Values in [-1, 1) from a seed.
Tensor Random(DType dtype, Shape shape, uint64_t seed) {
  Tensor t = Tensor::Zeros(DType::kFloat64, shape);
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < t.size(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    t.data<double>()[i] =
        static_cast<double>(s >> 11) / static_cast<double>(uint64_t{1} << 53) * 2 - 1;
  }
  return t.AsType(dtype);
}

// The convolution summed product by product in double, and each output's sum of |products|.
void Reference(const ConvGeometry& g, const Tensor& img, const Tensor& kern,
               std::vector<double>* out, std::vector<double>* scale) {
  const Tensor x = img.AsType(DType::kFloat64), k = kern.AsType(DType::kFloat64);
  const int64_t h = g.image[1], w = g.image[2], oh = g.output[1], ow = g.output[2];
  out->assign(g.batch * g.filters * oh * ow, 0.0);
  scale->assign(out->size(), 0.0);
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t m = 0; m < g.filters; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t o = ((n * g.filters + m) * oh + oy) * ow + ox;
          for (int64_t c = 0; c < g.channels; ++c)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t y = oy + ky - g.pad[1], xx = ox + kx - g.pad[2];
                if (y < 0 || y >= h || xx < 0 || xx >= w) continue;
                const int64_t tap = g.flip ? (2 - ky) * 3 + (2 - kx) : ky * 3 + kx;
                const double p = x.data<double>()[((n * g.channels + c) * h + y) * w + xx] *
                                 k.data<double>()[(m * g.channels + c) * 9 + tap];
                (*out)[o] += p;
                (*scale)[o] += std::abs(p);
              }
        }
}

TEST(ConvWinogradTest, MatchesEveryProductSummed) {
  struct Case {
    int64_t n, c, m, h, w, pad;
    bool flip;
  };
  for (const Case& k : {Case{1, 16, 16, 8, 8, 1, false}, Case{2, 17, 19, 7, 9, 0, true},
                        Case{3, 16, 24, 5, 5, 2, false}, Case{1, 32, 16, 13, 6, 1, true},
                        Case{5, 16, 16, 6, 11, 1, false}}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      const ConvGeometry g = Geometry3x3(k.n, k.c, k.m, k.h, k.w, k.pad, k.flip);
      ASSERT_TRUE(conv::WinogradForwardApplies(g));
      const Tensor img = Random(dtype, {k.n, k.c, 1, k.h, k.w}, 1 + k.h);
      const Tensor kern = Random(dtype, {k.m, k.c, 1, 3, 3}, 7 + k.c);
      Tensor out = Tensor::Empty(dtype, {k.n, k.m, 1, g.output[1], g.output[2]});
      ASSERT_TRUE(ConvForwardKernel(g, img, kern, out).ok());
      std::vector<double> want, scale;
      Reference(g, img, kern, &want, &scale);
      const Tensor got = out.AsType(DType::kFloat64);
      const double tol = dtype == DType::kFloat32 ? 2e-6 : 1e-14;
      const std::string name = absl::StrCat(k.n, "x", k.c, "x", k.h, "x", k.w, " by ", k.m, " pad ",
                                            k.pad, " ", DTypeName(dtype));
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got.data<double>()[i], want[i], tol * (scale[i] + 1)) << name << " at " << i;
      }
    }
  }
}

TEST(ConvWinogradTest, TheDispatcherTakesItOnlyWhereItApplies) {
  EXPECT_TRUE(conv::WinogradForwardApplies(Geometry3x3(1, 64, 64, 56, 56, 1)));  // VGG's block
  EXPECT_FALSE(conv::WinogradForwardApplies(Geometry3x3(1, 1, 6, 28, 28, 0)));   // one channel
  EXPECT_FALSE(conv::WinogradForwardApplies(Geometry3x3(1, 64, 8, 28, 28, 1)));  // few filters
  ConvGeometry strided = Geometry3x3(1, 64, 64, 56, 56, 1);
  strided.stride = {1, 2, 2};
  EXPECT_FALSE(conv::WinogradForwardApplies(strided));
  ConvGeometry dilated = Geometry3x3(1, 64, 64, 56, 56, 1);
  dilated.dilation = {1, 2, 2};
  EXPECT_FALSE(conv::WinogradForwardApplies(dilated));
  ConvGeometry grouped = Geometry3x3(1, 64, 64, 56, 56, 1);
  grouped.groups = 2;
  EXPECT_FALSE(conv::WinogradForwardApplies(grouped));
  EXPECT_FALSE(conv::WinogradForwardApplies(Geometry3x3(1, 512, 512, 8, 4096, 1)));  // wide
  {  // a call's budget with little room left: the kernels whose buffers shrink take it
    MemoryBudgetScope scope(std::make_shared<MemoryBudget>("the test's call", int64_t{1} << 20));
    EXPECT_FALSE(conv::WinogradForwardApplies(Geometry3x3(1, 64, 64, 56, 56, 1)));
  }
  ConvGeometry five = Geometry3x3(1, 64, 64, 56, 56, 1);
  five.kernel = {1, 5, 5};
  EXPECT_FALSE(conv::WinogradForwardApplies(five));
  conv::SetWinogradEnabled(false);
  EXPECT_FALSE(conv::WinogradForwardApplies(Geometry3x3(1, 64, 64, 56, 56, 1)));
  conv::SetWinogradEnabled(true);
}

}  // namespace
}  // namespace kiln
