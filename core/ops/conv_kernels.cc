// The convolution kernels' entry points and their im2col tiles: every geometry and CPU the
// panels (conv_panels.cc, whose comment describes both forms) do not take.
#include "core/ops/conv_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/ops/conv_panels.h"
#include "core/ops/conv_parts.h"
#include "core/ops/conv_winograd.h"

namespace kiln {
namespace conv {
namespace {

// A tile's columns are capped at this many bytes: a tile is unrolled and multiplied while it is
// in the core's L2 cache.
constexpr int64_t kDefaultTileBytes = int64_t{256} << 10;
std::atomic<int64_t> tile_bytes{0};

// The positions per tile: as many as keep a tile's `rows` columns under the cap (at least one)
// times `scale`, evened out over the tiles of an image. Under a call's memory budget the cap is
// also what the budget has left over 4 * `buffers`.
int64_t TileWidth(const ConvGeometry& g, int64_t rows, int64_t elem_size, int64_t buffers,
                  int64_t scale = 1) {
  int64_t cap = tile_bytes.load() > 0 ? tile_bytes.load() : kDefaultTileBytes;
  cap *= scale;
  if (const MemoryBudget* budget = CurrentBudgetPtr(); budget != nullptr && budget->limit() > 0) {
    cap = std::min(cap, std::max<int64_t>(0, budget->limit() - budget->used()) / 4 /
                            std::max<int64_t>(1, buffers));
  }
  const int64_t p = g.OutputSize();
  const int64_t w = std::clamp<int64_t>(cap / std::max<int64_t>(1, rows * elem_size), 1, p);
  const int64_t tiles = (p + w - 1) / w;
  return (p + tiles - 1) / tiles;
}

// The weights as (M, C/groups * K) rows, spatially reversed when `flip` (the correlation's
// weights); `kern` itself when not flipped.
template <typename T>
const T* CorrelationWeights(const ConvGeometry& g, const T* kern, Tensor& storage, DType dtype) {
  if (!g.flip) return kern;
  const int64_t k = g.KernelSize();
  const int64_t rows = g.filters * (g.channels / g.groups);
  storage = Tensor::Empty(dtype, {rows, k});
  T* w = storage.data<T>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < k; ++j) w[r * k + j] = kern[r * k + (k - 1 - j)];
  }
  return w;
}

template <typename T>
absl::Status Forward(const ConvGeometry& g, const T* img, const T* kern, T* out, DType dtype) {
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups;
  const int64_t rows = cg * g.KernelSize(), p = g.OutputSize(), isz = g.ImageSize();
  if (g.batch == 0 || g.filters == 0) return absl::OkStatus();
  Tensor flipped;
  const T* w = CorrelationWeights(g, kern, flipped, dtype);
  if (WinogradForwardApplies(g)) return WinogradForward(g, img, w, out, dtype);
#ifdef KILN_CONV_DIRECT
  if (DirectForwardApplies<T>(g)) return DirectForward(g, img, w, out, dtype);
#endif
  const int64_t width = TileWidth(g, rows, sizeof(T), NumThreads());
  const int64_t tiles = (p + width - 1) / width;
  const Plan plan = MakePlan(g.batch * g.groups * tiles, Work(g.batch * g.filters * p, rows),
                             g.batch * g.groups * tiles);
  Tensor col = Tensor::Empty(dtype, {plan.threads, rows * width});
  return RunPlan(plan, [&](int slot, int64_t, int64_t begin, int64_t end) {
    T* c = col.data<T>() + slot * rows * width;
    for (int64_t u = begin; u < end; ++u) {
      const int64_t image = u / tiles, t = u % tiles;  // image: n * groups + grp
      const int64_t n = image / g.groups, grp = image % g.groups;
      const int64_t p0 = t * width, p1 = std::min(p, p0 + width);
      Im2ColTile(g, cg, img + (n * g.channels + grp * cg) * isz, p0, p1, c, p1 - p0);
      Gemm<T>(false, false, mg, p1 - p0, rows, w + grp * mg * rows, rows, c, p1 - p0, T(0),
              out + (n * g.filters + grp * mg) * p + p0, p);
    }
  });
}

template <typename T>
absl::Status GradInputs(const ConvGeometry& g, const T* kern, const T* top, T* dimg, DType dtype) {
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups, k = g.KernelSize();
  const int64_t rows = cg * k, p = g.OutputSize(), isz = g.ImageSize();
  if (g.batch == 0 || rows == 0) return absl::OkStatus();
  if (mg == 0) {
    std::fill(dimg, dimg + g.batch * g.channels * isz, T(0));
    return absl::OkStatus();
  }
  Tensor flipped;
  const T* w = CorrelationWeights(g, kern, flipped, dtype);
#ifdef KILN_CONV_DIRECT
  // The correlation below multiplies blocks of the image's channels (6 at a time): with fewer
  // channels per group than that, or strides, or where it would mostly multiply the padding,
  // the columns' product and col2im are faster: fused (the columns added from the registers)
  // where the strides along x are 1, else stored and added back by col2im.
  if (FusedGradInputsApplies<T>(g) &&
      (cg < kPanelRows || !DirectGradInputsApplies<T>(g) || FusedGradInputsCheaper<T>(g))) {
    return FusedGradInputs(g, w, top, dimg, dtype);
  }
  if (PanelGradInputsApplies<T>(g) &&
      (cg < kPanelRows || !DirectGradInputsApplies<T>(g) || PanelGradInputsCheaper<T>(g))) {
    return PanelGradInputs(g, w, top, dimg, dtype);
  }
  if (DirectGradInputsApplies<T>(g)) return DirectGradInputs(g, w, top, dimg, dtype);
#endif
  // Blocks of channels, enough of them that the units cover the threads a few times over.
  const int64_t images = g.batch * g.groups;
  const int64_t want = std::max<int64_t>(1, (int64_t{NumThreads()} * 4 + images - 1) / images);
  const int64_t blocks = std::min(cg, want);
  const int64_t cb = (cg + blocks - 1) / blocks;  // channels per block, the last one fewer
  const int64_t nblocks = (cg + cb - 1) / cb;
  const int64_t width = TileWidth(g, cb * k, sizeof(T), NumThreads());
  const Plan plan =
      MakePlan(images * nblocks, Work(g.batch * g.filters * p, rows), images * nblocks);
  Tensor dcol = Tensor::Empty(dtype, {plan.threads, cb * k * width});
  return RunPlan(plan, [&](int slot, int64_t, int64_t begin, int64_t end) {
    T* c = dcol.data<T>() + slot * cb * k * width;
    for (int64_t u = begin; u < end; ++u) {
      const int64_t image = u / nblocks, blk = u % nblocks;
      const int64_t n = image / g.groups, grp = image % g.groups;
      const int64_t c0 = blk * cb, cn = std::min(cg, c0 + cb) - c0;
      T* planes = dimg + (n * g.channels + grp * cg + c0) * isz;
      std::fill(planes, planes + cn * isz, T(0));
      const T* tg = top + (n * g.filters + grp * mg) * p;
      const T* wg = w + grp * mg * rows + c0 * k;
      for (int64_t p0 = 0; p0 < p; p0 += width) {
        const int64_t p1 = std::min(p, p0 + width);
        Gemm<T>(true, false, cn * k, p1 - p0, mg, wg, rows, tg + p0, p, T(0), c, p1 - p0);
        Col2ImTile(g, cn, c, p0, p1, planes);
      }
    }
  });
}

template <typename T>
absl::Status GradWeights(const ConvGeometry& g, const T* img, const T* top, T* dkern, DType dtype) {
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups, k = g.KernelSize();
  const int64_t rows = cg * k, p = g.OutputSize(), isz = g.ImageSize();
  const int64_t wsize = g.filters * rows;
#ifdef KILN_CONV_DIRECT
  // (Writes every weight: no zeros first.)
  if (g.batch > 0 && rows > 0 && mg > 0 && TransposedGradWeightsApplies<T>(g) &&
      TransposedGradWeightsPreferred<T>(g)) {
    return TransposedGradWeights(g, img, top, dkern, dtype);
  }
#endif
  std::fill(dkern, dkern + wsize, T(0));
  if (g.batch == 0 || rows == 0 || mg == 0) return absl::OkStatus();
#ifdef KILN_CONV_DIRECT
  if (DirectGradWeightsApplies<T>(g)) {
    if (!g.flip) return DirectGradWeights(g, img, top, dkern, dtype);
    Tensor corr = Tensor::Empty(dtype, {wsize});
    RETURN_IF_ERROR(DirectGradWeights(g, img, top, corr.data<T>(), dtype));
    const T* c = corr.data<T>();
    for (int64_t r = 0; r < g.filters * cg; ++r) {
      for (int64_t j = 0; j < k; ++j) dkern[r * k + j] = c[r * k + (k - 1 - j)];
    }
    return absl::OkStatus();
  }
#endif
  // A unit is a tile of an image's group or, when an image's columns fill less than a tile,
  // several images of a group side by side (with their topgrad rows gathered likewise), so that
  // each GEMM sums over a tile's worth of positions. The tiles are larger than the other
  // kernels': each GEMM reads and writes the whole (filters x rows) accumulator, which few
  // positions would not repay (VGG's 64x64x3x3 on 56x56: 1.1x the time of one threaded GEMM
  // over the image with 256 KiB tiles, 0.75 to 1.0x with 2 MiB).
  const int64_t width = TileWidth(g, rows + mg, sizeof(T), NumThreads(), 8);
  const int64_t tiles = (p + width - 1) / width;
  const int64_t per_unit = tiles == 1 ? std::max<int64_t>(1, width / p) : 1;  // images
  const int64_t blocks = (g.batch + per_unit - 1) / per_unit;
  const int64_t units = g.groups * blocks * tiles;
  const int64_t span = per_unit * std::min(p, width);  // a unit's columns at most
  const int64_t acc_bytes = wsize * static_cast<int64_t>(sizeof(T));
  const Plan plan = MakePlan(units, Work(g.batch * g.filters * p, rows),
                             std::min<int64_t>(4 * NumThreads(), kAccumulatorBytes / acc_bytes));
  Tensor col = Tensor::Empty(dtype, {plan.threads, (rows + (per_unit > 1 ? mg : 0)) * span});
  // One accumulator per chunk; with one chunk, dkern itself when not flipped.
  const bool direct = plan.chunks == 1 && !g.flip;
  Tensor acc = Tensor::Zeros(dtype, {direct ? 0 : plan.chunks, wsize});
  RETURN_IF_ERROR(RunPlan(plan, [&](int slot, int64_t chunk, int64_t begin, int64_t end) {
    T* c = col.data<T>() + slot * (rows + (per_unit > 1 ? mg : 0)) * span;
    T* dw = direct ? dkern : acc.data<T>() + chunk * wsize;
    for (int64_t u = begin; u < end; ++u) {
      const int64_t grp = u / (blocks * tiles), rest = u % (blocks * tiles);
      const int64_t n0 = rest / tiles * per_unit, t = rest % tiles;
      const int64_t p0 = t * width, p1 = std::min(p, p0 + width);
      if (per_unit == 1) {
        Im2ColTile(g, cg, img + (n0 * g.channels + grp * cg) * isz, p0, p1, c, p1 - p0);
        Gemm<T>(false, true, mg, rows, p1 - p0, top + (n0 * g.filters + grp * mg) * p + p0, p, c,
                p1 - p0, T(1), dw + grp * mg * rows, rows);
        continue;
      }
      const int64_t count = std::min(per_unit, g.batch - n0), ld = count * p;
      T* a = c + rows * ld;  // the gathered topgrad rows, mg x ld
      for (int64_t i = 0; i < count; ++i) {
        const int64_t n = n0 + i;
        Im2ColTile(g, cg, img + (n * g.channels + grp * cg) * isz, 0, p, c + i * p, ld);
        for (int64_t m = 0; m < mg; ++m) {
          const T* from = top + (n * g.filters + grp * mg + m) * p;
          T* to = a + m * ld + i * p;
          for (int64_t j = 0; j < p; ++j) to[j] = from[j];
        }
      }
      Gemm<T>(false, true, mg, rows, ld, a, ld, c, ld, T(1), dw + grp * mg * rows, rows);
    }
  }));
  if (direct) return absl::OkStatus();
  // The chunks' sums in order, reversed spatially into dkern when flipped.
  const T* a = acc.data<T>();
  for (int64_t r = 0; r < g.filters * cg; ++r) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t from = r * k + (g.flip ? k - 1 - j : j);
      T sum = a[from];
      for (int64_t c = 1; c < plan.chunks; ++c) sum += a[c * wsize + from];
      dkern[r * k + j] = sum;
    }
  }
  return absl::OkStatus();
}

// Runs fn(T()) for the dtype's element type T (float or double), or says there is no kernel.
template <typename Fn>
absl::Status ForFloatType(DType dtype, Fn fn) {
  if (dtype == DType::kFloat32) return fn(float());
  if (dtype == DType::kFloat64) return fn(double());
  return absl::InvalidArgumentError(absl::StrCat("no convolution kernel for dtype ",
                                                 DTypeName(dtype), " (float32 and float64 only)"));
}

}  // namespace
}  // namespace conv

void SetConvColumnBytesForTesting(int64_t bytes) { conv::tile_bytes.store(bytes); }

void SetConvPanelsForTesting(bool enabled) { conv::SetPanelsEnabled(enabled); }

absl::Status ConvForwardKernel(const ConvGeometry& g, const Tensor& img, const Tensor& kern,
                               Tensor& out) {
  return conv::ForFloatType(out.dtype(), [&](auto t) {
    using T = decltype(t);
    return conv::Forward<T>(g, img.data<T>(), kern.data<T>(), out.data<T>(), out.dtype());
  });
}

absl::Status ConvGradInputsKernel(const ConvGeometry& g, const Tensor& kern, const Tensor& top,
                                  Tensor& img_grad) {
  return conv::ForFloatType(img_grad.dtype(), [&](auto t) {
    using T = decltype(t);
    return conv::GradInputs<T>(g, kern.data<T>(), top.data<T>(), img_grad.data<T>(),
                               img_grad.dtype());
  });
}

absl::Status ConvGradWeightsKernel(const ConvGeometry& g, const Tensor& img, const Tensor& top,
                                   Tensor& kern_grad) {
  return conv::ForFloatType(kern_grad.dtype(), [&](auto t) {
    using T = decltype(t);
    return conv::GradWeights<T>(g, img.data<T>(), top.data<T>(), kern_grad.data<T>(),
                                kern_grad.dtype());
  });
}

}  // namespace kiln
