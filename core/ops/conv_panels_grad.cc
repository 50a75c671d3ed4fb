// Two more panel kernels for the convolution's gradients (x86-64 with AVX2 and FMA), for the
// geometries where conv_panels.cc's spend their time outside the multiply-adds:
// - FusedGradInputs: the columns' product by panels of topgrad (PanelGradInputs's), but each
//   block of 6 rows is added from the registers onto the image's planes, so that no columns are
//   stored and no col2im pass reads them back (LeNet's 6x16x5x5 on one 12x12 image: col2im took
//   as long as the product).
// - TransposedGradWeights: the weights' gradient transposed, (rows x filters) = columns x
//   topgrad^T, with the filters along the vectors: each step broadcasts 6 of the image's values
//   (rows of the columns, read in place) and loads 2 vectors of the transposed topgrad, for 12
//   multiply-adds. Its sums stay in registers over the positions (DirectGradWeights keeps a
//   vector of lanes per weight and adds them up at the end; the tiles' GEMM keeps an accumulator
//   per chunk), and the units (blocks of rows) write disjoint weights: the same sums on any
//   number of threads.
#include <algorithm>
#include <array>
#include <vector>

#include "core/ops/conv_panels.h"
#include "core/ops/conv_parts.h"
#include "core/ops/conv_simd.h"

namespace kiln::conv {

#ifdef KILN_CONV_DIRECT
namespace {

constexpr int kRows = kPanelRows;  // rows (of the columns) per block
constexpr int kVectors = 2;        // vectors per panel

// The extents of the planes the positions' taps cover: (out - 1) * stride + (kernel - 1) *
// dilation + 1 along each axis (0 with no positions).
std::array<int64_t, 3> TapSpan(const ConvGeometry& g) {
  std::array<int64_t, 3> e;
  for (int a = 0; a < 3; ++a) {
    e[a] = g.output[a] == 0 ? 0
                            : (g.output[a] - 1) * g.stride[a] + (g.kernel[a] - 1) * g.dilation[a] + 1;
  }
  return e;
}

// acc[i][v] = sum over k < kn of a[i][k * lda] * b[v][k * ldb + lane], then c[v][roff[i] +
// lane] += acc[i][v] for the MR rows i and NV vectors v, a row at a time (rows whose targets
// overlap add in turn); with kMasked, lanes at or past valid[v] are neither read nor written.
template <typename T, int MR, int NV, bool kMasked>
KILN_AVX2 void ScatterPanel(int64_t kn, const T* const* a, int64_t lda, const T* const* b,
                            int64_t ldb, T* const* c, const int64_t* __restrict roff,
                            const int* valid) {
  using S = Simd<T>;
  typename S::V acc[MR][NV];
  __m256i mask[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    mask[v] = S::Mask(kMasked ? valid[v] : S::kLanes);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) acc[i][v] = S::Zero();
  }
  const T* b0 = b[0];
  const T* b1 = b[NV > 1 ? 1 : 0];
  const T* ai[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) ai[i] = a[i];
  for (int64_t k = 0; k < kn; ++k) {
    typename S::V bv[NV];
    if constexpr (kMasked) {
      bv[0] = S::Load(b0 + k * ldb, mask[0]);
      if constexpr (NV > 1) bv[1] = S::Load(b1 + k * ldb, mask[1]);
    } else {
      bv[0] = S::Load(b0 + k * ldb);
      if constexpr (NV > 1) bv[1] = S::Load(b1 + k * ldb);
    }
    const int64_t ka = k * lda;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const typename S::V av = S::Broadcast(ai[i] + ka);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = S::Fma(av, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      T* d = c[v] + roff[i];
      if constexpr (kMasked) {
        S::Store(d, mask[v], S::Load(d, mask[v]) + acc[i][v]);
      } else {
        S::Store(d, S::Load(d) + acc[i][v]);
      }
    }
  }
}

template <typename T>
using ScatterFn = void (*)(int64_t, const T* const*, int64_t, const T* const*, int64_t, T* const*,
                           const int64_t*, const int*);

template <typename T, int NV, bool kMasked>
ScatterFn<T> PickScatterRows(int mr) {
  switch (mr) {
    case 1:
      return &ScatterPanel<T, 1, NV, kMasked>;
    case 2:
      return &ScatterPanel<T, 2, NV, kMasked>;
    case 3:
      return &ScatterPanel<T, 3, NV, kMasked>;
    case 4:
      return &ScatterPanel<T, 4, NV, kMasked>;
    case 5:
      return &ScatterPanel<T, 5, NV, kMasked>;
    default:
      return &ScatterPanel<T, 6, NV, kMasked>;
  }
}

// The scatter kernel for mr rows (1 to 6) and nv vectors (1 or 2).
template <typename T>
ScatterFn<T> PickScatter(int mr, int nv, bool masked) {
  if (nv == 1) return masked ? PickScatterRows<T, 1, true>(mr) : PickScatterRows<T, 1, false>(mr);
  return masked ? PickScatterRows<T, 2, true>(mr) : PickScatterRows<T, 2, false>(mr);
}

// c[i * ldc + v * L + lane] (+)= sum over q < nq of a[i][bpos[q]] * bt[q * ldt + v * L + lane],
// for the MR rows i and NV vectors v of filters, added to c when `add`: the sum of a range of
// positions is formed from zero and then added, so that a weight's sum over many positions is a
// sum of the ranges' sums (in float32, 200,000 products in one running sum lose 3 digits more).
template <typename T, int MR, int NV>
KILN_AVX2 void TransposedPanel(int64_t nq, const int64_t* __restrict bpos, const T* const* a,
                               const T* __restrict bt, int64_t ldt, T* __restrict c, int64_t ldc,
                               bool add) {
  using S = Simd<T>;
  constexpr int L = S::kLanes;
  typename S::V acc[MR][NV];
  const T* ai[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    ai[i] = a[i];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = S::Zero();
  }
  for (int64_t q = 0; q < nq; ++q) {
    const T* t = bt + q * ldt;
    typename S::V bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = S::Load(t + v * L);
    const int64_t o = bpos[q];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const typename S::V av = S::Broadcast(ai[i] + o);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = S::Fma(av, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      T* d = c + i * ldc + v * L;
      S::Store(d, add ? S::Load(d) + acc[i][v] : acc[i][v]);
    }
  }
}

template <typename T>
using TransposedFn = void (*)(int64_t, const int64_t*, const T* const*, const T*, int64_t, T*,
                              int64_t, bool);

template <typename T, int NV>
TransposedFn<T> PickTransposedRows(int mr) {
  switch (mr) {
    case 1:
      return &TransposedPanel<T, 1, NV>;
    case 2:
      return &TransposedPanel<T, 2, NV>;
    case 3:
      return &TransposedPanel<T, 3, NV>;
    case 4:
      return &TransposedPanel<T, 4, NV>;
    case 5:
      return &TransposedPanel<T, 5, NV>;
    default:
      return &TransposedPanel<T, 6, NV>;
  }
}

// The transposed kernel for mr rows (1 to 6) and nv vectors of filters (1 or 2).
template <typename T>
TransposedFn<T> PickTransposed(int mr, int nv) {
  return nv == 1 ? PickTransposedRows<T, 1>(mr) : PickTransposedRows<T, 2>(mr);
}

}  // namespace

template <typename T>
bool FusedGradInputsApplies(const ConvGeometry& g) {
  if (!HasAvx2Fma() || g.filters == 0 || g.stride[2] != 1) return false;
  for (int a = 0; a < 3; ++a) {
    if (g.pad[a] < 0) return false;
  }
  // The planes the taps cover stay within a few times the image and output planes.
  const std::array<int64_t, 3> e = TapSpan(g);
  const double plane =
      static_cast<double>(e[0]) * static_cast<double>(e[1]) * static_cast<double>(e[2]);
  return plane <= 4.0 * (static_cast<double>(g.ImageSize()) + static_cast<double>(g.OutputSize()));
}

// The correlation of the padded topgrad (DirectGradInputs) multiplies every lane of the image's
// vectors, the padding's included; the fused panels multiply the columns' positions only but
// add each block back from the registers (counted as 2 products per position and row). VGG's
// 64x64x3x3 on 56x56 (padded by 1): the same products, so the correlation (no adds) is kept.
template <typename T>
bool FusedGradInputsCheaper(const ConvGeometry& g) {
  constexpr int64_t L = Simd<T>::kLanes;
  const double cg = static_cast<double>(g.channels / g.groups);
  const double mg = static_cast<double>(g.filters / g.groups);
  const double lanes =
      static_cast<double>(g.image[0] * g.image[1] * ((g.image[2] + L - 1) / L * L));
  const double direct = cg * lanes * mg * static_cast<double>(g.KernelSize());
  const double fused =
      cg * static_cast<double>(g.KernelSize()) * static_cast<double>(g.OutputSize()) * (mg + 2);
  return fused < direct;
}

template <typename T>
absl::Status FusedGradInputs(const ConvGeometry& g, const T* w, const T* top, T* dimg,
                             DType dtype) {
  constexpr int L = Simd<T>::kLanes;
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups, k = g.KernelSize();
  const int64_t rows = cg * k, p = g.OutputSize(), isz = g.ImageSize();
  const auto &o = g.output, &s = g.stride, &d = g.dilation, &kern = g.kernel;
  if (p == 0) {
    std::fill(dimg, dimg + g.batch * g.channels * isz, T(0));
    return absl::OkStatus();
  }
  // The sums go to planes of the taps' span (e), the image's own planes when that is the image.
  const std::array<int64_t, 3> e = TapSpan(g);
  const int64_t esz = e[0] * e[1] * e[2];
  bool in_place = true;
  for (int a = 0; a < 3; ++a) in_place = in_place && g.pad[a] == 0 && e[a] == g.image[a];
  // The rows in the order (kx, kz, ky, c): consecutive rows add to different planes or lines,
  // so that a row's loads seldom wait on the previous row's stores.
  std::vector<int64_t> order, roff;
  order.reserve(rows);
  roff.reserve(rows);
  for (int64_t kx = 0; kx < kern[2]; ++kx) {
    for (int64_t kz = 0; kz < kern[0]; ++kz) {
      for (int64_t ky = 0; ky < kern[1]; ++ky) {
        for (int64_t c = 0; c < cg; ++c) {
          order.push_back(c * k + (kz * kern[1] + ky) * kern[2] + kx);
          roff.push_back(c * esz + (kz * d[0] * e[1] + ky * d[1]) * e[2] + kx * d[2]);
        }
      }
    }
  }
  // Vectors: per output line, ceil(out x / L) of them (the last one masked when partial).
  const int64_t per_line = (o[2] + L - 1) / L, vectors = o[0] * o[1] * per_line;
  const int64_t images = g.batch * g.groups;
  const Plan plan = MakePlan(images, Work(g.batch * g.filters * p, rows), images);
  Tensor scratch = Tensor::Empty(dtype, {in_place ? 0 : plan.threads * cg * esz});
  return RunPlan(plan, [&](int slot, int64_t, int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t n = u / g.groups, grp = u % g.groups;
      const T* tp = top + (n * g.filters + grp * mg) * p;
      const T* wg = w + grp * mg * rows;  // the group's weights, a row per filter
      T* planes = dimg + (n * g.channels + grp * cg) * isz;
      T* acc = in_place ? planes : scratch.data<T>() + slot * cg * esz;
      std::fill(acc, acc + cg * esz, T(0));
      for (int64_t q = 0; q < vectors; q += kVectors) {
        const int nv = static_cast<int>(std::min<int64_t>(kVectors, vectors - q));
        const T* b[kVectors] = {tp, tp};
        T* c[kVectors] = {acc, acc};
        int valid[kVectors] = {L, L};
        bool masked = false;
        for (int v = 0; v < nv; ++v) {
          const int64_t line = (q + v) / per_line, ox = (q + v) % per_line * L;
          const int64_t oz = line / o[1], oy = line % o[1];
          b[v] = tp + line * o[2] + ox;
          c[v] = acc + (oz * s[0] * e[1] + oy * s[1]) * e[2] + ox;
          valid[v] = static_cast<int>(std::min<int64_t>(L, o[2] - ox));
          masked = masked || valid[v] < L;
        }
        for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
          const int rr = static_cast<int>(std::min<int64_t>(kRows, rows - r0));
          const T* a[kRows];
          for (int i = 0; i < rr; ++i) a[i] = wg + order[r0 + i];
          PickScatter<T>(rr, nv, masked)(mg, a, rows, b, p, c, roff.data() + r0, valid);
        }
      }
      if (in_place) continue;
      // The image's part of the planes (image position x at x + pad; past the span, 0).
      for (int64_t c = 0; c < cg; ++c) {
        for (int64_t z = 0; z < g.image[0]; ++z) {
          for (int64_t y = 0; y < g.image[1]; ++y) {
            T* to = planes + (c * g.image[0] + z) * g.image[1] * g.image[2] + y * g.image[2];
            const int64_t pz = z + g.pad[0], py = y + g.pad[1];
            int64_t x = 0;
            if (pz < e[0] && py < e[1]) {
              const T* from = acc + c * esz + (pz * e[1] + py) * e[2] + g.pad[2];
              const int64_t nx = std::clamp<int64_t>(e[2] - g.pad[2], 0, g.image[2]);
              for (; x < nx; ++x) to[x] = from[x];
            }
            for (; x < g.image[2]; ++x) to[x] = T(0);
          }
        }
      }
    }
  });
}

template <typename T>
bool TransposedGradWeightsApplies(const ConvGeometry& g) {
  return HasAvx2Fma() && g.filters > 0 && g.channels / g.groups > 0 && PaddingFits(g);
}

// Where the weights' sums in registers win: few positions and filters enough to fill a panel's
// two vectors (DirectGradWeights's vectors of lanes and their final sums dominate there;
// LeNet's 6x16x5x5 on one 12x12 image; with 6 filters, its 28x28 images, half as fast), or
// weights too large for DirectGradWeights's lanes (VGG's 64x64x3x3: against im2col and GEMM,
// no columns and no per-chunk accumulators).
template <typename T>
bool TransposedGradWeightsPreferred(const ConvGeometry& g) {
  constexpr int64_t L = Simd<T>::kLanes;
  const int64_t vectors = g.output[0] * g.output[1] * ((g.output[2] + L - 1) / L);
  return !DirectGradWeightsApplies<T>(g) ||
         (vectors * g.batch <= 64 && g.filters / g.groups >= 2 * L);
}

template <typename T>
absl::Status TransposedGradWeights(const ConvGeometry& g, const T* img, const T* top, T* dkern,
                                   DType dtype) {
  constexpr int L = Simd<T>::kLanes;
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups, k = g.KernelSize();
  const int64_t rows = cg * k, p = g.OutputSize();
  const auto &o = g.output, &s = g.stride;
  const int64_t images = g.batch * g.groups;
  if (p == 0 || images == 0) {
    std::fill(dkern, dkern + g.filters * rows, T(0));
    return absl::OkStatus();
  }
  std::array<int64_t, 3> in;
  Tensor pad_storage;
  img = PanelImages(g, img, dtype, pad_storage, in, false, 0);
  const int64_t isz = in[0] * in[1] * in[2];
  const std::vector<int64_t> koff = RowOffsets(g, in);
  // The topgrad transposed, per image and group: positions x filters, rows of ldt (whole
  // vectors, zeros past the filters); for a block of images at a time, at most kMaxTransposed
  // bytes of them (or one image).
  constexpr int64_t kMaxTransposed = int64_t{4} << 20;
  const int64_t fvecs = (mg + L - 1) / L, ldt = fvecs * L;
  const int64_t image_bytes = p * ldt * g.groups * static_cast<int64_t>(sizeof(T));
  const int64_t per_block = std::clamp<int64_t>(kMaxTransposed / image_bytes, 1, g.batch);
  Tensor tt_storage = Tensor::Empty(dtype, {per_block * g.groups * p * ldt});
  T* tt = tt_storage.data<T>();
  constexpr int64_t kBlock = 256;  // positions per block of the transposition
  const int64_t qblocks = (p + kBlock - 1) / kBlock;
  // Each position's first tap in the (padded) planes.
  std::vector<int64_t> bpos(p);
  for (int64_t oz = 0, q = 0; oz < o[0]; ++oz) {
    for (int64_t oy = 0; oy < o[1]; ++oy) {
      const int64_t line = (oz * s[0] * in[1] + oy * s[1]) * in[2];
      for (int64_t ox = 0; ox < o[2]; ++ox, ++q) bpos[q] = line + ox * s[2];
    }
  }
  // The sums, per group: rows x ldt. Units: (group, block of kRows rows); a chunk of units runs
  // each range of positions over all its blocks, so that the range's topgrad rows stay cached.
  const int64_t rblocks = (rows + kRows - 1) / kRows;
  Tensor sums = Tensor::Empty(dtype, {g.groups * rows * ldt});
  T* sp = sums.data<T>();
  const int64_t span = std::max<int64_t>(32, (int64_t{24} << 10) / (ldt * int64_t(sizeof(T))));
  for (int64_t n0 = 0; n0 < g.batch; n0 += per_block) {
    const int64_t n1 = std::min(g.batch, n0 + per_block), count = (n1 - n0) * g.groups;
    ParallelFor(count * qblocks, std::max<int64_t>(1, 4096 / (kBlock * ldt)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) {
                    const int64_t image = i / qblocks, q0 = i % qblocks * kBlock;
                    const int64_t q1 = std::min(p, q0 + kBlock);
                    const T* from = top + (n0 * g.groups + image) * mg * p;
                    T* to = tt + image * p * ldt;
                    for (int64_t m0 = 0; m0 < mg; m0 += 8) {
                      const int nm = static_cast<int>(std::min<int64_t>(8, mg - m0));
                      const T* src[8];
                      for (int r = 0; r < nm; ++r) src[r] = from + (m0 + r) * p + q0;
                      InterleaveRows<T>(src, nm, q1 - q0, to + q0 * ldt + m0, ldt);
                    }
                  }
                });
    const Plan plan = MakePlan(g.groups * rblocks, Work((n1 - n0) * g.filters * p, rows),
                               2 * int64_t{NumThreads()});
    RETURN_IF_ERROR(RunPlan(plan, [&](int, int64_t, int64_t begin, int64_t end) {
      for (int64_t u0 = begin; u0 < end;) {
        const int64_t grp = u0 / rblocks;
        const int64_t u1 = std::min(end, (grp + 1) * rblocks);  // this group's blocks
        for (int64_t n = n0; n < n1; ++n) {
          const T* base = img + (n * g.channels + grp * cg) * isz;
          const T* tn = tt + ((n - n0) * g.groups + grp) * p * ldt;
          for (int64_t q0 = 0; q0 < p; q0 += span) {
            const int64_t nq = std::min(p, q0 + span) - q0;
            const bool add = n > 0 || q0 > 0;
            for (int64_t u = u0; u < u1; ++u) {
              const int64_t r0 = (u - grp * rblocks) * kRows;
              const int mr = static_cast<int>(std::min<int64_t>(kRows, rows - r0));
              const T* a[kRows];
              for (int i = 0; i < mr; ++i) a[i] = base + koff[r0 + i];
              for (int64_t f = 0; f < fvecs; f += kVectors) {
                const int nv = static_cast<int>(std::min<int64_t>(kVectors, fvecs - f));
                PickTransposed<T>(mr, nv)(nq, bpos.data() + q0, a, tn + q0 * ldt + f * L, ldt,
                                          sp + (grp * rows + r0) * ldt + f * L, ldt, add);
              }
            }
          }
        }
        u0 = u1;
      }
    }));
  }
  // Transposed back into dkern (filters x rows), spatially reversed when flipped.
  // (Tiles of 8 rows; the last ones, whose tiles would run into the next filter's, one at a
  // time.)
  auto source = [&](int64_t grp, int64_t r) {
    const int64_t c = r / k, j = r % k;
    return sp + (grp * rows + c * k + (g.flip ? k - 1 - j : j)) * ldt;
  };
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    T* to = dkern + grp * mg * rows;
    int64_t r0 = 0;
    for (; r0 + 8 <= rows; r0 += 8) {
      const T* src[8];
      for (int i = 0; i < 8; ++i) src[i] = source(grp, r0 + i);
      InterleaveRows<T>(src, 8, mg, to + r0, rows);
    }
    for (; r0 < rows; ++r0) {
      const T* from = source(grp, r0);
      for (int64_t m = 0; m < mg; ++m) to[m * rows + r0] = from[m];
    }
  }
  return absl::OkStatus();
}

#define KILN_INSTANTIATE_PANELS_GRAD(T)                                                         \
  template bool FusedGradInputsApplies<T>(const ConvGeometry&);                                 \
  template bool FusedGradInputsCheaper<T>(const ConvGeometry&);                                 \
  template bool TransposedGradWeightsApplies<T>(const ConvGeometry&);                           \
  template bool TransposedGradWeightsPreferred<T>(const ConvGeometry&);                         \
  template absl::Status FusedGradInputs<T>(const ConvGeometry&, const T*, const T*, T*, DType); \
  template absl::Status TransposedGradWeights<T>(const ConvGeometry&, const T*, const T*, T*,   \
                                                 DType);
KILN_INSTANTIATE_PANELS_GRAD(float)
KILN_INSTANTIATE_PANELS_GRAD(double)

#endif  // KILN_CONV_DIRECT

}  // namespace kiln::conv
