#include "core/ops/conv_winograd.h"

#include <algorithm>
#include <atomic>

#include "core/ops/conv_parts.h"

namespace kiln::conv {
namespace {

std::atomic<bool> winograd_enabled{true};

// A unit of work is whole rows of tiles, about this many bytes of transformed tiles (inputs and
// products: 16 * (channels + filters) values a tile): GEMMs wide enough to run near their peak
// (VGG's 64-channel block at batch 1: 1 MiB units took 10-20% longer).
constexpr int64_t kUnitBytes = int64_t{4} << 20;

// The transformed filters: u[(xi * M + m) * C + c] = (G g G^T)[xi] of filter m's channel c, with
// G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
template <typename T>
void TransformFilters(const ConvGeometry& g, const T* w, T* u) {
  const int64_t nm = g.filters, nc = g.channels;
  for (int64_t m = 0; m < nm; ++m) {
    for (int64_t c = 0; c < nc; ++c) {
      const T* k = w + (m * nc + c) * 9;
      T gk[4][3];  // G g
      for (int j = 0; j < 3; ++j) {
        gk[0][j] = k[j];
        gk[1][j] = (k[j] + k[3 + j] + k[6 + j]) * T(0.5);
        gk[2][j] = (k[j] - k[3 + j] + k[6 + j]) * T(0.5);
        gk[3][j] = k[6 + j];
      }
      for (int i = 0; i < 4; ++i) {  // (G g) G^T
        const T row[4] = {gk[i][0], (gk[i][0] + gk[i][1] + gk[i][2]) * T(0.5),
                          (gk[i][0] - gk[i][1] + gk[i][2]) * T(0.5), gk[i][2]};
        for (int j = 0; j < 4; ++j) u[((i * 4 + j) * nm + m) * nc + c] = row[j];
      }
    }
  }
}

// The sizes of the tiling: tiles of 2x2 outputs, `th` rows of `tw` per image, cut into units of
// `rows` rows of tiles (the last unit may have fewer), each with room for `tb` tiles.
struct Tiling {
  int64_t th = 0, tw = 0, rows = 1, units = 0, tb = 0;
};

Tiling MakeTiling(const ConvGeometry& g, int64_t elem_size) {
  Tiling t;
  t.th = (g.output[1] + 1) / 2;
  t.tw = (g.output[2] + 1) / 2;
  const int64_t all_rows = g.batch * t.th;
  const int64_t tile_bytes = 16 * (g.channels + g.filters) * elem_size;
  t.rows = std::max<int64_t>(1, kUnitBytes / tile_bytes / t.tw);
  // At least one unit a thread where the rows allow, so that every core has work.
  t.rows = std::max<int64_t>(1, std::min(t.rows, all_rows / NumThreads()));
  t.units = (all_rows + t.rows - 1) / t.rows;
  t.tb = t.rows * t.tw;
  return t;
}

// The values of one thread's buffers: transformed inputs, products, a line and its transforms,
// an output row pair.
int64_t SlotValues(const ConvGeometry& g, const Tiling& t) {
  return 16 * (g.channels + g.filters) * t.tb + (2 * t.tw + 2) + 16 * t.tw + 4 * t.tw;
}

// The transformed tiles of the unit's rows of tiles [r0, r1) (r = n * th + ty):
// v[(xi * C + c) * tb + (r - r0) * tw + tx] = (B^T d B)[xi] of the tile's 4x4 input d, with
// B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. `line` holds 2 * tw + 2 values, `across`
// 16 * tw.
template <typename T>
[[gnu::always_inline]] inline void TransformInputs(const ConvGeometry& g, const Tiling& t,
                                                   const T* img, int64_t r0, int64_t r1, T* v,
                                                   T* line, T* across) {
  const int64_t nc = g.channels, h = g.image[1], w = g.image[2];
  const int64_t pad_y = g.pad[1], pad_x = g.pad[2], tw = t.tw, width = 2 * tw + 2;
  // The image's columns [x0, x1) fill line[x0 + pad_x ...]; the rest of the line is zeros.
  const int64_t x0 = std::clamp<int64_t>(-pad_x, 0, w),
                x1 = std::clamp<int64_t>(width - pad_x, x0, w);
  for (int64_t c = 0; c < nc; ++c) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / t.th, ty = r % t.th;
      const T* plane = img + (n * nc + c) * h * w;
      for (int rho = 0; rho < 4; ++rho) {  // B applied along each of the tile rows' 4 lines
        const int64_t y = 2 * ty - pad_y + rho;
        std::fill(line, line + width, T(0));
        if (y >= 0 && y < h) std::copy(plane + y * w + x0, plane + y * w + x1, line + x0 + pad_x);
        const T* __restrict in = line;
        T* __restrict a0 = across + rho * 4 * tw;
        T* __restrict a1 = a0 + tw;
        T* __restrict a2 = a1 + tw;
        T* __restrict a3 = a2 + tw;
#pragma GCC ivdep
        for (int64_t x = 0; x < tw; ++x) {
          const T d0 = in[2 * x], d1 = in[2 * x + 1], d2 = in[2 * x + 2], d3 = in[2 * x + 3];
          a0[x] = d0 - d2;
          a1[x] = d1 + d2;
          a2[x] = d2 - d1;
          a3[x] = d1 - d3;
        }
      }
      const int64_t at = (r - r0) * tw;
      for (int j = 0; j < 4; ++j) {  // then B^T across the lines
        const T* __restrict l0 = across + j * tw;
        const T* __restrict l1 = l0 + 4 * tw;
        const T* __restrict l2 = l1 + 4 * tw;
        const T* __restrict l3 = l2 + 4 * tw;
        T* __restrict v0 = v + ((0 * 4 + j) * nc + c) * t.tb + at;
        T* __restrict v1 = v + ((1 * 4 + j) * nc + c) * t.tb + at;
        T* __restrict v2 = v + ((2 * 4 + j) * nc + c) * t.tb + at;
        T* __restrict v3 = v + ((3 * 4 + j) * nc + c) * t.tb + at;
#pragma GCC ivdep
        for (int64_t x = 0; x < tw; ++x) {
          v0[x] = l0[x] - l2[x];
          v1[x] = l1[x] + l2[x];
          v2[x] = l2[x] - l1[x];
          v3[x] = l1[x] - l3[x];
        }
      }
    }
  }
}

// The outputs of the unit's rows of tiles from the products p[(xi * M + m) * tb + tile]: each
// tile's 2x2 block A^T p A, with A^T = [1 1 1 0; 0 1 -1 -1]. `pair` holds 4 * tw values.
template <typename T>
[[gnu::always_inline]] inline void TransformOutputs(const ConvGeometry& g, const Tiling& t,
                                                    const T* p, int64_t r0, int64_t r1, T* out,
                                                    T* pair) {
  const int64_t nm = g.filters, oh = g.output[1], ow = g.output[2], tw = t.tw;
  for (int64_t m = 0; m < nm; ++m) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / t.th, ty = r % t.th, at = (r - r0) * tw;
      const T* __restrict q = p + m * t.tb + at;  // product xi's row at q + xi * stride
      const int64_t stride = nm * t.tb;
      // Output rows 2 ty and 2 ty + 1 (positions 2 tx and 2 tx + 1 of tile tx), written in place
      // when whole, else through `pair`.
      T* plane = out + (n * nm + m) * oh * ow;
      const bool whole = ow == 2 * tw && 2 * ty + 1 < oh;
      T* __restrict top = whole ? plane + 2 * ty * ow : pair;
      T* __restrict bottom = whole ? top + ow : pair + 2 * tw;
#pragma GCC ivdep
      for (int64_t x = 0; x < tw; ++x) {
        T s0[4], s1[4];  // A^T along each tile row i
        for (int i = 0; i < 4; ++i) {
          const T e0 = q[(4 * i) * stride + x], e1 = q[(4 * i + 1) * stride + x];
          const T e2 = q[(4 * i + 2) * stride + x], e3 = q[(4 * i + 3) * stride + x];
          s0[i] = e0 + e1 + e2;
          s1[i] = e1 - e2 - e3;
        }
        top[2 * x] = s0[0] + s0[1] + s0[2];
        top[2 * x + 1] = s1[0] + s1[1] + s1[2];
        bottom[2 * x] = s0[1] - s0[2] - s0[3];
        bottom[2 * x + 1] = s1[1] - s1[2] - s1[3];
      }
      if (whole) continue;
      std::copy(top, top + ow, plane + 2 * ty * ow);
      if (2 * ty + 1 < oh) std::copy(bottom, bottom + ow, plane + (2 * ty + 1) * ow);
    }
  }
}

// One unit's rows of tiles [r0, r1): its inputs transformed into v, the 16 products into p, the
// outputs written. Compiled for AVX2 and FMA too (the build's baseline is SSE2), and chosen at
// run time: the transforms' loops then take 8 floats (4 doubles) at a time.
template <typename T>
[[gnu::always_inline]] inline void RunUnit(const ConvGeometry& g, const Tiling& t, const T* img,
                                           const T* u, int64_t r0, int64_t r1, T* v, T* p, T* line,
                                           T* across, T* pair, T* out) {
  const int64_t nm = g.filters, nc = g.channels, tiles = (r1 - r0) * t.tw;
  TransformInputs(g, t, img, r0, r1, v, line, across);
  for (int xi = 0; xi < 16; ++xi) {
    Gemm<T>(false, false, nm, tiles, nc, u + xi * nm * nc, nc, v + xi * nc * t.tb, t.tb, T(0),
            p + xi * nm * t.tb, t.tb);
  }
  TransformOutputs(g, t, p, r0, r1, out, pair);
}

template <typename T>
void RunUnitBaseline(const ConvGeometry& g, const Tiling& t, const T* img, const T* u, int64_t r0,
                     int64_t r1, T* v, T* p, T* line, T* across, T* pair, T* out) {
  RunUnit(g, t, img, u, r0, r1, v, p, line, across, pair, out);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <typename T>
[[gnu::target("avx2,fma")]] void RunUnitAvx2(const ConvGeometry& g, const Tiling& t, const T* img,
                                             const T* u, int64_t r0, int64_t r1, T* v, T* p,
                                             T* line, T* across, T* pair, T* out) {
  RunUnit(g, t, img, u, r0, r1, v, p, line, across, pair, out);
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

}  // namespace

void SetWinogradEnabled(bool enabled) { winograd_enabled.store(enabled); }

bool WinogradForwardApplies(const ConvGeometry& g) {
  // Fewer channels or filters make GEMMs too thin to repay the transforms.
  if (!winograd_enabled.load() || g.groups != 1 || g.image[0] != 1 || g.kernel[0] != 1 ||
      g.kernel[1] != 3 || g.kernel[2] != 3 || g.stride != std::array<int64_t, 3>{1, 1, 1} ||
      g.dilation != std::array<int64_t, 3>{1, 1, 1} || g.channels < 16 || g.filters < 16 ||
      g.output[1] < 4 || g.output[2] < 4) {
    return false;
  }
  // Its buffers (counted as doubles) must stay under kMostBytes and, under a call's memory
  // budget, under a quarter of what the budget has left, as the im2col tiles' do; else (a very
  // wide image of many channels, a nearly spent budget) the other kernels, whose buffers shrink
  // to fit, take the call.
  constexpr int64_t kMostBytes = int64_t{64} << 20;
  const Tiling t = MakeTiling(g, sizeof(double));
  const int64_t bytes =
      (16 * g.filters * g.channels + NumThreads() * SlotValues(g, t)) * int64_t{sizeof(double)};
  int64_t room = kMostBytes;
  if (const MemoryBudget* budget = CurrentBudgetPtr(); budget != nullptr && budget->limit() > 0) {
    room = std::min(room, std::max<int64_t>(0, budget->limit() - budget->used()) / 4);
  }
  return bytes <= room;
}

template <typename T>
absl::Status WinogradForward(const ConvGeometry& g, const T* img, const T* w, T* out, DType dtype) {
  const int64_t nm = g.filters, nc = g.channels;
  const Tiling t = MakeTiling(g, sizeof(T));
  Tensor filters = Tensor::Empty(dtype, {16, nm, nc});
  T* u = filters.data<T>();
  TransformFilters(g, w, u);
  const int64_t all_rows = g.batch * t.th;
  const Plan plan = MakePlan(t.units, Work(16 * nm * nc, g.batch * t.th * t.tw), t.units);
  const int64_t per_slot = SlotValues(g, t);
  Tensor scratch = Tensor::Empty(dtype, {plan.threads, per_slot});
  return RunPlan(plan, [&](int slot, int64_t, int64_t begin, int64_t end) {
    T* v = scratch.data<T>() + slot * per_slot;
    T* p = v + 16 * nc * t.tb;
    T* line = p + 16 * nm * t.tb;
    T* across = line + 2 * t.tw + 2;
    T* pair = across + 16 * t.tw;
    auto run_unit = &RunUnitBaseline<T>;
#if defined(__x86_64__) && defined(__GNUC__)
    if (HasAvx2()) run_unit = &RunUnitAvx2<T>;
#endif
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t r0 = unit * t.rows, r1 = std::min(all_rows, r0 + t.rows);
      run_unit(g, t, img, u, r0, r1, v, p, line, across, pair, out);
    }
  });
}

template absl::Status WinogradForward<float>(const ConvGeometry&, const float*, const float*,
                                             float*, DType);
template absl::Status WinogradForward<double>(const ConvGeometry&, const double*, const double*,
                                              double*, DType);

}  // namespace kiln::conv
