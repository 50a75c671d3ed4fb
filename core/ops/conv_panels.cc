// The convolution kernels, in two forms (this file: the panels; conv_kernels.cc: the tiles).
// - Panels (x86-64 with AVX2 and FMA, stride 1 along x; see KILN_CONV_DIRECT below): no im2col
//   buffer. The forward multiplies blocks of 6 filters by panels of 16 floats (8 doubles) of an
//   output line, reading the columns' rows straight from the (zero-padded) image, a block of
//   channels at a time (their lines stay in the L1 cache). GradInputs is the same correlation of
//   the padded topgrad by the swapped, reversed weights (strides of 1) or, with small columns
//   and few channels (or strides, or where the correlation would mostly multiply padding), the
//   columns' product by panels read from the topgrad, then col2im (conv_panels_grad.cc's fused
//   panels add the columns from the registers instead, where the stride along x is 1).
//   GradWeights (small weights: their lane sums fit the L2 cache) sums blocks of 4 filters by 3
//   rows over vectors of positions, or (conv_panels_grad.cc) the transposed product's panels
//   keep each weight's sum in a register (few positions, or weights past the L2 cache).
// - Tiles (every other geometry and CPU): im2col of one image's group for a range of output
//   positions (a tile whose columns fit the L2 cache) into a buffer of the thread running it,
//   consumed at once by an OpenBLAS GEMM that reads or writes the images' own NCHW rows;
//   GradInputs runs per image and block of channels (planes no other unit touches): GEMM, then
//   col2im.
// Units of work (ranges of an image's positions or channels) are spread over the cores by Kiln's
// pool in fixed chunks, each thread with its own buffer, while OpenBLAS runs each GEMM on its
// caller's thread (BlasSerialScope); a call too small to share runs on the calling thread.
// GradWeights sums into an accumulator per chunk, added up in chunk order: the same sums on
// every run. Against the previous design (an im2col buffer per chunk of images unrolled by the
// pool, one GEMM threaded by OpenBLAS, a copy of its result into NCHW), whose time went to
// memcpy calls of short segments, that copy, the hand-offs between the pool's threads and
// OpenBLAS's, and OpenBLAS's packing of the columns: LeNet's layers (batch 64) run 2.5 to 6x
// faster, VGG's 64x64x3x3 about as fast as one GEMM of its columns (tests/bench/conv_vs_torch.py).
#include "core/ops/conv_panels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <vector>

#include "core/ops/conv_parts.h"
#include "core/ops/conv_simd.h"

namespace kiln::conv {

namespace {
std::atomic<bool> panels_enabled{true};
}  // namespace

void SetPanelsEnabled(bool enabled) { panels_enabled.store(enabled); }

// The direct forward kernel (x86-64 with AVX2 and FMA, stride 1 along x): no im2col buffer. The
// output is cut into vectors of 8 floats (4 doubles) along x, a panel is two of them, and each
// product of a panel by a block of up to 6 filters is summed in 12 registers over the rows (c,
// kz, ky, kx) of the columns, read straight from the (padded) image: row k of a vector is the
// image at the vector's first input plus koff[k]. Each step of k loads 2 vectors and 6 weights
// for 12 multiply-adds, so the loop runs near the FMA units' rate.
#ifdef KILN_CONV_DIRECT
constexpr int kPanelVectors = 2;  // vectors per panel

// One panel: c[v][i * ldc + j] = sum over k of a[i][k * lda] * b[v][koff[k] + j], for the MR
// filters i (their weights read in place, with no packed copy to make per call) and the NV
// vectors v (lanes j < valid[v] when masked: the others are read, whole vectors, but not
// stored); with kAdd, the sum continues from c's values (a range of k split in calls gives the
// same floats as one call: the partial sums are stored exactly).
template <typename T, int MR, int NV, bool kMasked, bool kAdd>
KILN_AVX2 void PanelKernel(int64_t kn, const T* const* a, int64_t lda, const T* const* b,
                           const int64_t* __restrict koff, T* const* c, int64_t ldc,
                           const int* valid) {
  using S = Simd<T>;
  typename S::V acc[MR][NV];
  __m256i mask[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    mask[v] = S::Mask(kMasked ? valid[v] : S::kLanes);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      if constexpr (!kAdd) {
        acc[i][v] = S::Zero();
      } else if constexpr (kMasked) {
        acc[i][v] = S::Load(c[v] + i * ldc, mask[v]);
      } else {
        acc[i][v] = S::Load(c[v] + i * ldc);
      }
    }
  }
  const T* b0 = b[0];
  const T* b1 = b[NV > 1 ? 1 : 0];
  const T* ai[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) ai[i] = a[i];
  for (int64_t k = 0; k < kn; ++k) {
    const int64_t o = koff[k];
    typename S::V bv[NV];
    bv[0] = S::Load(b0 + o);
    if constexpr (NV > 1) bv[1] = S::Load(b1 + o);
    const int64_t ka = k * lda;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const typename S::V av = S::Broadcast(ai[i] + ka);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = S::Fma(av, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      if constexpr (kMasked) {
        S::Store(c[v] + i * ldc, mask[v], acc[i][v]);
      } else {
        S::Store(c[v] + i * ldc, acc[i][v]);
      }
    }
  }
}

template <typename T>
using PanelFn = void (*)(int64_t, const T* const*, int64_t, const T* const*, const int64_t*,
                         T* const*, int64_t, const int*);

template <typename T, int MR, int NV>
PanelFn<T> PickMasked(bool masked, bool add) {
  if (add) {
    return masked ? &PanelKernel<T, MR, NV, true, true> : &PanelKernel<T, MR, NV, false, true>;
  }
  return masked ? &PanelKernel<T, MR, NV, true, false> : &PanelKernel<T, MR, NV, false, false>;
}

template <typename T, int NV>
PanelFn<T> PickRows(int mr, bool masked, bool add) {
  switch (mr) {
    case 1:
      return PickMasked<T, 1, NV>(masked, add);
    case 2:
      return PickMasked<T, 2, NV>(masked, add);
    case 3:
      return PickMasked<T, 3, NV>(masked, add);
    case 4:
      return PickMasked<T, 4, NV>(masked, add);
    case 5:
      return PickMasked<T, 5, NV>(masked, add);
    default:
      return PickMasked<T, 6, NV>(masked, add);
  }
}

// The panel kernel for mr filters (1 to 6) and nv vectors (1 or 2), adding to c's values when
// `add`.
template <typename T>
PanelFn<T> PickPanel(int mr, int nv, bool masked, bool add = false) {
  return nv == 1 ? PickRows<T, 1>(mr, masked, add) : PickRows<T, 2>(mr, masked, add);
}

// Whether the panels may run: on a CPU with AVX2 and FMA, unless a test turned them off.
bool HasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has && panels_enabled.load(std::memory_order_relaxed);
}

// The extents of the images' planes as the panels read them: past the image on either side
// when the geometry pads there.
std::array<int64_t, 3> PanelExtents(const ConvGeometry& g) {
  std::array<int64_t, 3> in;
  for (int a = 0; a < 3; ++a) {
    const int64_t need = (g.output[a] - 1) * g.stride[a] + (g.kernel[a] - 1) * g.dilation[a] + 1;
    in[a] = std::max(need, g.pad[a] + g.image[a]);
  }
  return in;
}

// Whether the images' zero-padded copy stays within a few times the image and output planes
// (large strides over wide padding could make it far larger than either).
bool PaddingFits(const ConvGeometry& g) {
  const std::array<int64_t, 3> in = PanelExtents(g);
  const double plane =
      static_cast<double>(in[0]) * static_cast<double>(in[1]) * static_cast<double>(in[2]);
  return plane <= 4.0 * (static_cast<double>(g.ImageSize()) + static_cast<double>(g.OutputSize()));
}

// The gradient wrt the image as a correlation (strides of 1): of the topgrad, padded by the
// dilated kernel's span less the pads, by the weights reversed spatially with filters and
// channels swapped (within each group).
ConvGeometry SwappedGeometry(const ConvGeometry& g) {
  ConvGeometry t = g;
  t.channels = g.filters;
  t.filters = g.channels;
  t.image = g.output;
  t.output = g.image;
  for (int a = 0; a < 3; ++a) t.pad[a] = (g.kernel[a] - 1) * g.dilation[a] - g.pad[a];
  return t;
}

// The forward convolution by panels when the CPU and the geometry allow (stride 1 along x);
// false (nothing written) otherwise.
template <typename T>
bool DirectForwardApplies(const ConvGeometry& g) {
  return HasAvx2Fma() && g.stride[2] == 1 && g.channels / g.groups > 0 && PaddingFits(g);
}

// The gradient wrt the image as a direct correlation (GradInputs): strides of 1, and pads no
// wider than the dilated kernel's span.
template <typename T>
bool DirectGradInputsApplies(const ConvGeometry& g) {
  if (!HasAvx2Fma() || g.filters == 0) return false;
  for (int a = 0; a < 3; ++a) {
    if (g.stride[a] != 1 || g.pad[a] > (g.kernel[a] - 1) * g.dilation[a]) return false;
  }
  return PaddingFits(SwappedGeometry(g));
}

// The images (batch x channels planes) as the panels read them: zero-padded when the geometry
// pads (on either side), so that every read of a full vector is inside; `in` gets the planes'
// extents. The images themselves when nothing is padded, unless `whole_vectors` asks for every
// vector, the partial ones at the ends of output lines included, to be read whole (their extra
// lanes are dropped): then a copy with `slack` zeros past its last plane.
template <typename T>
const T* PanelImages(const ConvGeometry& g, const T* img, DType dtype, Tensor& storage,
                     std::array<int64_t, 3>& in, bool whole_vectors, int64_t slack) {
  in = PanelExtents(g);
  bool padded = false;
  for (int a = 0; a < 3; ++a) padded = padded || g.pad[a] != 0 || in[a] != g.image[a];
  if (!padded && !whole_vectors) return img;
  const int64_t plane = in[0] * in[1] * in[2], src_plane = g.ImageSize();
  storage = Tensor::Empty(dtype, {g.batch * g.channels * plane + slack});
  T* dst = storage.data<T>();
  std::fill(dst + g.batch * g.channels * plane, dst + g.batch * g.channels * plane + slack, T(0));
  ParallelFor(g.batch * g.channels, std::max<int64_t>(1, (int64_t{1} << 15) / plane),
              [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) {
                  T* to = dst + i * plane;
                  std::fill(to, to + plane, T(0));
                  const T* from = img + i * src_plane;
                  for (int64_t z = 0; z < g.image[0]; ++z) {
                    for (int64_t y = 0; y < g.image[1]; ++y) {
                      T* row = to + ((z + g.pad[0]) * in[1] + y + g.pad[1]) * in[2] + g.pad[2];
                      const T* src = from + (z * g.image[1] + y) * g.image[2];
                      for (int64_t x = 0; x < g.image[2]; ++x) row[x] = src[x];
                    }
                  }
                }
              });
  return dst;
}

// The offset in a group's (padded) planes of each row (c, kz, ky, kx) of the columns, from the
// input of a position's first kernel tap.
std::vector<int64_t> RowOffsets(const ConvGeometry& g, const std::array<int64_t, 3>& in) {
  const auto &k = g.kernel, &d = g.dilation;
  const int64_t isz = in[0] * in[1] * in[2];
  std::vector<int64_t> koff(g.channels / g.groups * g.KernelSize());
  int64_t* out = koff.data();
  for (int64_t c = 0; c < g.channels / g.groups; ++c) {
    for (int64_t kz = 0; kz < k[0]; ++kz) {
      for (int64_t ky = 0; ky < k[1]; ++ky) {
        const int64_t line = c * isz + (kz * d[0] * in[1] + ky * d[1]) * in[2];
        for (int64_t kx = 0; kx < k[2]; ++kx) *out++ = line + kx * d[2];
      }
    }
  }
  return koff;
}

// Panels per group in DirectForward.
constexpr int64_t kGroupPanels = 8;

// The rows (c, kz, ky, kx) of the columns that DirectForward sums per pass over a group of
// panels: whole channels, as many as keep the group's image lines within the L1 cache (the
// partial sums go through the output, exactly). Past that every block of filters read the
// lines again from the L2 cache: VGG's 64x64x3x3 on 56x56 ran at 72% of the FMA units' rate.
int64_t ForwardBlockRows(const ConvGeometry& g, int64_t rows) {
  const int64_t k = std::max<int64_t>(1, g.KernelSize());
  constexpr int64_t kBlockRows = 192;
  const int64_t per = std::max<int64_t>(1, kBlockRows / k);  // channels per block
  const int64_t cg = rows / k;
  if (cg <= per) return rows;
  const int64_t blocks = (cg + per - 1) / per;
  return (cg + blocks - 1) / blocks * k;
}

template <typename T>
absl::Status DirectForward(const ConvGeometry& g, const T* img, const T* w, T* out, DType dtype) {
  using S = Simd<T>;
  constexpr int L = S::kLanes;
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups;
  const int64_t rows = cg * g.KernelSize(), p = g.OutputSize();
  const auto &o = g.output, &s = g.stride;
  std::array<int64_t, 3> in;
  Tensor pad_storage;
  // A partial vector is read whole (its extra lanes are not stored): at most L - 1 elements past
  // the last line it reads.
  img = PanelImages(g, img, dtype, pad_storage, in, o[2] % L != 0, L);
  const int64_t isz = in[0] * in[1] * in[2];
  const std::vector<int64_t> koff = RowOffsets(g, in);
  // A panel's vectors: first inputs, outputs, lanes.
  struct Panel {
    const T* b[kPanelVectors];
    T* c[kPanelVectors];
    int valid[kPanelVectors];
    int nv;
    bool masked;
  };
  // The filters in blocks of kPanelRows, their weights' rows read in place.
  const int64_t mblocks = (mg + kPanelRows - 1) / kPanelRows;
  // Vectors: per output line, ceil(out x / L) of them; units: ranges of an image's vectors.
  const int64_t per_line = (o[2] + L - 1) / L, lines = o[0] * o[1];
  const int64_t vectors = lines * per_line, images = g.batch * g.groups;
  const int64_t want_units = int64_t{NumThreads()} * kChunksPerThread;
  int64_t span = std::max<int64_t>(1, (vectors * images + want_units - 1) / want_units);
  span = std::min(vectors, (span + kPanelVectors - 1) / kPanelVectors * kPanelVectors);
  const int64_t spans = (vectors + span - 1) / span;
  const int64_t block_rows = ForwardBlockRows(g, rows);
  const Plan plan = MakePlan(images * spans, Work(g.batch * g.filters * p, rows), images * spans);
  return RunPlan(plan, [&](int, int64_t, int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t image = u / spans, v0 = (u % spans) * span, v1 = std::min(vectors, v0 + span);
      const int64_t n = image / g.groups, grp = image % g.groups;
      const T* src = img + (n * g.channels + grp * cg) * isz;
      T* dst = out + (n * g.filters + grp * mg) * p;
      // Groups of panels, each multiplied by every block of filters in turn (the block's weights
      // stay in the L1 cache; on VGG's layer, no faster than a panel at a time, nor slower).
      for (int64_t q0 = v0; q0 < v1; q0 += kGroupPanels * kPanelVectors) {
        const int64_t q1 = std::min(v1, q0 + kGroupPanels * kPanelVectors);
        Panel panels[kGroupPanels];
        int count = 0;
        for (int64_t q = q0; q < q1; q += kPanelVectors, ++count) {
          Panel& pn = panels[count];
          pn.nv = static_cast<int>(std::min<int64_t>(kPanelVectors, q1 - q));
          pn.masked = false;
          for (int v = 0; v < pn.nv; ++v) {
            const int64_t line = (q + v) / per_line, ox = (q + v) % per_line * L;
            const int64_t oz = line / o[1], oy = line % o[1];
            pn.b[v] = src + (oz * s[0] * in[1] + oy * s[1]) * in[2] + ox;
            pn.c[v] = dst + line * o[2] + ox;
            pn.valid[v] = static_cast<int>(std::min<int64_t>(L, o[2] - ox));
            pn.masked = pn.masked || pn.valid[v] < L;
          }
        }
        for (int64_t r0 = 0; r0 < rows; r0 += block_rows) {
          const int64_t kn = std::min(rows, r0 + block_rows) - r0;
          for (int64_t mb = 0; mb < mblocks; ++mb) {
            const int64_t m0 = mb * kPanelRows;
            const int mr = static_cast<int>(std::min<int64_t>(kPanelRows, mg - m0));
            const T* a[kPanelRows];
            for (int i = 0; i < mr; ++i) a[i] = w + (grp * mg + m0 + i) * rows + r0;
            for (int i = 0; i < count; ++i) {
              const Panel& pn = panels[i];
              T* cm[kPanelVectors];
              for (int v = 0; v < pn.nv; ++v) cm[v] = pn.c[v] + m0 * p;
              PickPanel<T>(mr, pn.nv, pn.masked, r0 > 0)(kn, a, 1, pn.b, koff.data() + r0, cm, p,
                                                         pn.valid);
            }
          }
        }
      }
    }
  });
}
// The direct gradient wrt the weights (GradWeights; stride 1 along x): for blocks of 4 filters
// by 3 rows (c, kz, ky, kx) of the columns, 12 registers sum topgrad[m, positions] times the
// image at those positions plus the row's offset, a vector of positions at a time; the lanes are
// kept (in an accumulator of vectors per chunk of units) and added up at the end.
constexpr int kGradFilters = 4, kGradRows = 3;

// One vector of positions, whole: the 12 sums, 3 image rows and a topgrad row fill the 16
// registers.
template <typename T, int MR, int NR>
KILN_AVX2_INLINE void GradStep(typename Simd<T>::V (&acc)[MR][NR], const T* t, int64_t ldt,
                               const T* b, const int64_t* koff) {
  using S = Simd<T>;
  typename S::V bv[NR];
#pragma GCC unroll 4
  for (int j = 0; j < NR; ++j) bv[j] = S::Load(b + koff[j]);
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i) {
    const typename S::V av = S::Load(t + i * ldt);
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) acc[i][j] = S::Fma(av, bv[j], acc[i][j]);
  }
}

// One vector of positions, its first `valid` lanes: a row of the image at a time, so that the
// mask takes no register the sums need (each sum gets the same products in the same order as
// in GradStep; a spilled sum would go through memory on every vector).
template <typename T, int MR, int NR>
KILN_AVX2_INLINE void GradStepMasked(typename Simd<T>::V (&acc)[MR][NR], const T* t, int64_t ldt,
                                     const T* b, const int64_t* koff, int valid) {
  using S = Simd<T>;
  const __m256i mask = S::Mask(valid);
#pragma GCC unroll 4
  for (int j = 0; j < NR; ++j) {
    const typename S::V bv = S::Load(b + koff[j], mask);
    // The topgrad rows are loaded again for each image row: an opaque copy of the pointer keeps
    // the compiler from holding the first loads in registers.
    const T* tj = t;
    asm("" : "+r"(tj));
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) acc[i][j] = S::Fma(S::Load(tj + i * ldt, mask), bv, acc[i][j]);
  }
}

// acc[(i * acc_ld + j) * L + lane] (+)= sum over the vectors q of top[i * ldt + cpos[q] + lane]
// * img[bpos[q] + koff[j] + lane], for the MR filters i and NR rows j; starting from zero when
// `init`.
template <typename T, int MR, int NR, bool kAnyMasked>
KILN_AVX2 void GradBlock(int64_t nvec, const int64_t* __restrict cpos,
                         const int64_t* __restrict bpos, const int* __restrict valid, const T* top,
                         int64_t ldt, const T* img, const int64_t* __restrict koff, T* acc,
                         int64_t acc_ld, bool init) {
  using S = Simd<T>;
  constexpr int L = S::kLanes;
  typename S::V s[MR][NR];
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) s[i][j] = init ? S::Zero() : S::Load(acc + (i * acc_ld + j) * L);
  }
  for (int64_t q = 0; q < nvec; ++q) {
    if (!kAnyMasked || valid[q] == L) {
      GradStep<T, MR, NR>(s, top + cpos[q], ldt, img + bpos[q], koff);
    } else {
      GradStepMasked<T, MR, NR>(s, top + cpos[q], ldt, img + bpos[q], koff, valid[q]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) S::Store(acc + (i * acc_ld + j) * L, s[i][j]);
  }
}

template <typename T>
using GradFn = void (*)(int64_t, const int64_t*, const int64_t*, const int*, const T*, int64_t,
                        const T*, const int64_t*, T*, int64_t, bool);

template <typename T, int MR, bool kAnyMasked>
GradFn<T> PickGradRows(int nr) {
  return nr == 1   ? &GradBlock<T, MR, 1, kAnyMasked>
         : nr == 2 ? &GradBlock<T, MR, 2, kAnyMasked>
                   : &GradBlock<T, MR, 3, kAnyMasked>;
}

template <typename T, bool kAnyMasked>
GradFn<T> PickGradFilters(int mr, int nr) {
  switch (mr) {
    case 1:
      return PickGradRows<T, 1, kAnyMasked>(nr);
    case 2:
      return PickGradRows<T, 2, kAnyMasked>(nr);
    case 3:
      return PickGradRows<T, 3, kAnyMasked>(nr);
    default:
      return PickGradRows<T, 4, kAnyMasked>(nr);
  }
}

// The block kernel for mr filters (1 to 4) and nr rows (1 to 3), for vectors all whole or not
// (the kernel for whole vectors only keeps every sum in a register: 1.2x to 2x faster).
template <typename T>
GradFn<T> PickGrad(int mr, int nr, bool any_masked) {
  return any_masked ? PickGradFilters<T, true>(mr, nr) : PickGradFilters<T, false>(mr, nr);
}

// dw[i] = the sum of the L lanes of acc[i * L ...], for i < n.
template <typename T>
KILN_AVX2 void SumLanes(int64_t n, const T* acc, T* dw) {
  using S = Simd<T>;
  constexpr int L = S::kLanes;
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    for (; i + 8 <= n; i += 8) {
      const float* a = acc + i * L;
      const __m256 t0 = _mm256_hadd_ps(S::Load(a), S::Load(a + 8));
      const __m256 t1 = _mm256_hadd_ps(S::Load(a + 16), S::Load(a + 24));
      const __m256 t2 = _mm256_hadd_ps(S::Load(a + 32), S::Load(a + 40));
      const __m256 t3 = _mm256_hadd_ps(S::Load(a + 48), S::Load(a + 56));
      const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
      _mm256_storeu_ps(dw + i, _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
                                             _mm256_permute2f128_ps(u0, u1, 0x31)));
    }
  } else {
    for (; i + 4 <= n; i += 4) {
      const double* a = acc + i * L;
      const __m256d t0 = _mm256_hadd_pd(S::Load(a), S::Load(a + 4));
      const __m256d t1 = _mm256_hadd_pd(S::Load(a + 8), S::Load(a + 12));
      _mm256_storeu_pd(dw + i, _mm256_add_pd(_mm256_permute2f128_pd(t0, t1, 0x20),
                                             _mm256_permute2f128_pd(t0, t1, 0x31)));
    }
  }
  for (; i < n; ++i) {
    T sum = T(0);
    for (int l = 0; l < L; ++l) sum += acc[i * L + l];
    dw[i] = sum;
  }
}

// The gradient wrt the weights by blocks (GradWeights): stride 1 along x.
template <typename T>
bool DirectGradWeightsApplies(const ConvGeometry& g) {
  // Past this the accumulators leave the L2 cache: im2col and GEMM are faster there.
  constexpr int64_t kMaxAccumulatorBytes = int64_t{256} << 10;
  const int64_t acc_bytes =
      g.filters * (g.channels / g.groups) * g.KernelSize() * int64_t{32};  // 32: a vector's bytes
  return HasAvx2Fma() && g.stride[2] == 1 && acc_bytes <= kMaxAccumulatorBytes && PaddingFits(g);
}

// Writes the correlation's weight gradient (filters x rows) into dw.
template <typename T>
absl::Status DirectGradWeights(const ConvGeometry& g, const T* img, const T* top, T* dw,
                               DType dtype) {
  using S = Simd<T>;
  constexpr int L = S::kLanes;
  // Vectors of positions per unit: their topgrad and image rows stay in the L1 cache.
  constexpr int64_t kUnitVectors = 64;
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups;
  const int64_t rows = cg * g.KernelSize(), p = g.OutputSize();
  const auto &o = g.output, &s = g.stride;
  std::array<int64_t, 3> in;
  Tensor pad_storage;
  img = PanelImages(g, img, dtype, pad_storage, in, false, 0);
  const int64_t isz = in[0] * in[1] * in[2];
  const std::vector<int64_t> koff = RowOffsets(g, in);
  // A unit is a range of an image's vectors or, when an image has fewer than kUnitVectors,
  // `per_unit` images (of a group): the vectors of those images, offsets from the first one's
  // topgrad (cpos) and image (bpos), and their lanes.
  const int64_t per_line = (o[2] + L - 1) / L, vectors = o[0] * o[1] * per_line;
  const int64_t per_unit = std::max<int64_t>(1, std::min(g.batch, kUnitVectors / vectors));
  std::vector<int64_t> cpos(per_unit * vectors), bpos(per_unit * vectors);
  std::vector<int> valid(per_unit * vectors);
  for (int64_t i = 0, q = 0; i < per_unit; ++i) {
    for (int64_t v = 0; v < vectors; ++v, ++q) {
      const int64_t line = v / per_line, ox = v % per_line * L;
      const int64_t oz = line / o[1], oy = line % o[1];
      cpos[q] = i * g.filters * p + line * o[2] + ox;
      bpos[q] = i * g.channels * isz + (oz * s[0] * in[1] + oy * s[1]) * in[2] + ox;
      valid[q] = static_cast<int>(std::min<int64_t>(L, o[2] - ox));
    }
  }
  // Units: (group, block of per_unit images or image, range of its vectors), in that order; an
  // accumulator per chunk.
  const int64_t blocks = (g.batch + per_unit - 1) / per_unit;
  const int64_t spans = per_unit > 1 ? 1 : (vectors + kUnitVectors - 1) / kUnitVectors;
  const int64_t units = g.groups * blocks * spans;
  const int64_t acc_size = g.filters * rows * L;
  const int64_t acc_bytes = acc_size * static_cast<int64_t>(sizeof(T));
  const Plan plan = MakePlan(units, Work(g.batch * g.filters * p, rows),
                             std::min<int64_t>(2 * NumThreads(), kAccumulatorBytes / acc_bytes));
  Tensor acc = Tensor::Empty(dtype, {plan.chunks, acc_size});
  // Whether a chunk's accumulator of a group holds sums (else it is not initialized).
  std::vector<char> used(plan.chunks * g.groups, 0);
  RETURN_IF_ERROR(RunPlan(plan, [&](int, int64_t chunk, int64_t begin, int64_t end) {
    T* a = acc.data<T>() + chunk * acc_size;
    for (int64_t u = begin; u < end; ++u) {
      const int64_t grp = u / (blocks * spans), rest = u % (blocks * spans);
      const int64_t n = rest / spans * per_unit, q0 = rest % spans * kUnitVectors;
      const int64_t nq = per_unit > 1 ? std::min(per_unit, g.batch - n) * vectors
                                      : std::min(vectors, q0 + kUnitVectors) - q0;
      const bool any_masked = std::any_of(valid.data() + q0, valid.data() + q0 + nq,
                                          [](int lanes) { return lanes < S::kLanes; });
      const bool init = !used[chunk * g.groups + grp];
      used[chunk * g.groups + grp] = 1;
      const T* t = top + (n * g.filters + grp * mg) * p;
      const T* b = img + (n * g.channels + grp * cg) * isz;
      for (int64_t m0 = 0; m0 < mg; m0 += kGradFilters) {
        const int mr = static_cast<int>(std::min<int64_t>(kGradFilters, mg - m0));
        for (int64_t r0 = 0; r0 < rows; r0 += kGradRows) {
          const int nr = static_cast<int>(std::min<int64_t>(kGradRows, rows - r0));
          PickGrad<T>(mr, nr, any_masked)(nq, cpos.data() + q0, bpos.data() + q0, valid.data() + q0,
                                          t + m0 * p, p, b, koff.data() + r0,
                                          a + ((grp * mg + m0) * rows + r0) * L, rows, init);
        }
      }
    }
  }));
  // The chunks' lanes, added up in order (into the first chunk that holds a group's sums).
  const int64_t group_size = mg * rows * L;
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    T* first = nullptr;
    for (int64_t c = 0; c < plan.chunks; ++c) {
      if (!used[c * g.groups + grp]) continue;
      T* lanes = acc.data<T>() + c * acc_size + grp * group_size;
      if (first == nullptr) {
        first = lanes;
      } else {
        for (int64_t i = 0; i < group_size; ++i) first[i] += lanes[i];
      }
    }
    // Every group has units (each image's), so some chunk holds its sums.
    SumLanes(mg * rows, first, dw + grp * mg * rows);
  }
  return absl::OkStatus();
}

// The gradient wrt the image by panels when an image's columns are small (GradInputs; any
// strides): per image, columns = weights^T x topgrad in blocks of 6 rows by panels of 16 floats
// (8 doubles) of positions, read straight from the topgrad, then col2im. Against the correlation
// of the padded topgrad (DirectForward on the swapped geometry) this skips the products of the
// padding (LeNet's 6x16x5x5 on 12x12 images: 2.25x fewer) but pays for col2im: about as fast
// there, faster with one channel (28x28 images by 6 5x5 filters: 0.8x the time).
constexpr int64_t kMaxPanelColumnBytes = int64_t{1} << 20;

template <typename T>
bool PanelGradInputsApplies(const ConvGeometry& g) {
  const int64_t rows = g.channels / g.groups * g.KernelSize(), p = g.OutputSize();
  return HasAvx2Fma() && g.filters > 0 && p % Simd<T>::kLanes == 0 &&
         rows * p * static_cast<int64_t>(sizeof(T)) <= kMaxPanelColumnBytes;
}

// Adds an image's columns (rows (c, kz, ky, kx) by all its output positions, at col) onto its
// cg planes (col2im over the whole image): each row's output line is one run of the input line
// (stride 1 along x) or a strided walk, added a vector at a time. Against Col2ImTile's walk of
// segments (any range of positions), a third of the calls' time on LeNet's 6x16x5x5 on 12x12
// images, this skips the per-segment bookkeeping of 8-element lines.
template <typename T>
KILN_AVX2 void Col2ImImage(const ConvGeometry& g, int64_t cg, const T* __restrict col,
                           T* __restrict img) {
  using S = Simd<T>;
  constexpr int L = S::kLanes;
  const auto &in = g.image, &k = g.kernel, &o = g.output;
  const auto &s = g.stride, &d = g.dilation, &pad = g.pad;
  const int64_t p = g.OutputSize(), isz = g.ImageSize();
  const int64_t ksize = g.KernelSize();
  // The channels innermost: the rows of one channel add to overlapping runs of its lines, and a
  // load of a run that a store still in flight overlaps in part stalls (store forwarding).
  for (int64_t kz = 0, row = 0; kz < k[0]; ++kz) {
    for (int64_t ky = 0; ky < k[1]; ++ky) {
      for (int64_t kx = 0; kx < k[2]; ++kx, ++row) {
        const int64_t off_x = kx * d[2] - pad[2];
        int64_t lo, hi;
        ValidRange(off_x, s[2], in[2], o[2], &lo, &hi);
        if (lo >= hi) continue;
        const int64_t n = hi - lo;
        for (int64_t c = 0; c < cg; ++c) {
          T* plane = img + c * isz;
          const T* from = col + (c * ksize + row) * p;
          for (int64_t oz = 0; oz < o[0]; ++oz) {
            const int64_t iz = oz * s[0] + kz * d[0] - pad[0];
            if (iz < 0 || iz >= in[0]) continue;
            for (int64_t oy = 0; oy < o[1]; ++oy) {
              const int64_t iy = oy * s[1] + ky * d[1] - pad[1];
              if (iy < 0 || iy >= in[1]) continue;
              const T* src = from + (oz * o[1] + oy) * o[2] + lo;
              T* dst = plane + (iz * in[1] + iy) * in[2] + lo * s[2] + off_x;
              int64_t i = 0;
              if (s[2] == 1) {
                for (; i + L <= n; i += L) S::Store(dst + i, S::Load(dst + i) + S::Load(src + i));
                for (; i < n; ++i) dst[i] += src[i];
              } else {
                for (; i < n; ++i) dst[i * s[2]] += src[i];
              }
            }
          }
        }
      }
    }
  }
}

// Whether the columns' product and col2im (PanelGradInputs) cost less than the correlation of
// the padded topgrad (DirectGradInputs): the latter multiplies every lane of the image's vectors
// (the padding's products and partial vectors included), the former only the columns' positions
// but adds them back (counted as 16 products per element). LeNet's 6x16x5x5 on 12x12 images:
// 3x fewer products, 0.6x the time.
template <typename T>
bool PanelGradInputsCheaper(const ConvGeometry& g) {
  constexpr int64_t L = Simd<T>::kLanes;
  const double cg = static_cast<double>(g.channels / g.groups);
  const double mg = static_cast<double>(g.filters / g.groups);
  const double lanes =
      static_cast<double>(g.image[0] * g.image[1] * ((g.image[2] + L - 1) / L * L));
  const double direct = cg * lanes * mg * static_cast<double>(g.KernelSize());
  const double panel =
      cg * static_cast<double>(g.KernelSize()) * static_cast<double>(g.OutputSize()) * (mg + 16);
  return panel < direct;
}

// w: the correlation's weights.
template <typename T>
absl::Status PanelGradInputs(const ConvGeometry& g, const T* w, const T* top, T* dimg,
                             DType dtype) {
  constexpr int L = Simd<T>::kLanes;
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups;
  const int64_t rows = cg * g.KernelSize(), p = g.OutputSize(), isz = g.ImageSize();
  // The weights' columns in blocks of kPanelRows rows, read in place (a filter per step).
  const int64_t rblocks = (rows + kPanelRows - 1) / kPanelRows;
  std::vector<int64_t> koff(mg);  // topgrad's row of filter m
  for (int64_t m = 0; m < mg; ++m) koff[m] = m * p;
  const int64_t images = g.batch * g.groups;
  const Plan plan = MakePlan(images, Work(g.batch * g.filters * p, rows), images);
  Tensor dcol = Tensor::Empty(dtype, {plan.threads, rows * p});
  return RunPlan(plan, [&](int slot, int64_t, int64_t begin, int64_t end) {
    T* c = dcol.data<T>() + slot * rows * p;
    const int valid[kPanelVectors] = {L, L};
    for (int64_t u = begin; u < end; ++u) {
      const int64_t n = u / g.groups, grp = u % g.groups;
      const T* tp = top + (n * g.filters + grp * mg) * p;
      for (int64_t q = 0; q < p; q += kPanelVectors * L) {
        const int nv = static_cast<int>(std::min<int64_t>(kPanelVectors, (p - q) / L));
        const T* b[kPanelVectors] = {tp + q, tp + q + L};
        for (int64_t rb = 0; rb < rblocks; ++rb) {
          const int64_t r0 = rb * kPanelRows;
          const int rr = static_cast<int>(std::min<int64_t>(kPanelRows, rows - r0));
          T* cm[kPanelVectors] = {c + r0 * p + q, c + r0 * p + q + L};
          const T* a[kPanelRows];  // the block's columns of the weights, a filter per step
          for (int i = 0; i < rr; ++i) a[i] = w + grp * mg * rows + r0 + i;
          PickPanel<T>(rr, nv, false)(mg, a, rows, b, koff.data(), cm, p, valid);
        }
      }
      T* planes = dimg + (n * g.channels + grp * cg) * isz;
      std::fill(planes, planes + cg * isz, T(0));
      Col2ImImage(g, cg, c, planes);
    }
  });
}

template <typename T>
absl::Status DirectGradInputs(const ConvGeometry& g, const T* w, const T* top, T* dimg,
                              DType dtype) {
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups, k = g.KernelSize();
  const int64_t rows = cg * k;
  const ConvGeometry t = SwappedGeometry(g);
  Tensor swapped = Tensor::Empty(dtype, {g.filters * rows});
  T* ws = swapped.data<T>();
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t m = 0; m < mg; ++m) {
        const T* from = w + (grp * mg + m) * rows + c * k;
        T* to = ws + ((grp * cg + c) * mg + m) * k;
        for (int64_t j = 0; j < k; ++j) to[j] = from[k - 1 - j];
      }
    }
  }
  return DirectForward(t, top, ws, dimg, dtype);
}

#define KILN_INSTANTIATE_PANELS(T)                                                               \
  template bool DirectForwardApplies<T>(const ConvGeometry&);                                    \
  template bool DirectGradInputsApplies<T>(const ConvGeometry&);                                 \
  template bool PanelGradInputsApplies<T>(const ConvGeometry&);                                  \
  template bool PanelGradInputsCheaper<T>(const ConvGeometry&);                                  \
  template bool DirectGradWeightsApplies<T>(const ConvGeometry&);                                \
  template absl::Status DirectForward<T>(const ConvGeometry&, const T*, const T*, T*, DType);    \
  template absl::Status DirectGradInputs<T>(const ConvGeometry&, const T*, const T*, T*, DType); \
  template absl::Status PanelGradInputs<T>(const ConvGeometry&, const T*, const T*, T*, DType);  \
  template absl::Status DirectGradWeights<T>(const ConvGeometry&, const T*, const T*, T*, DType); \
  template const T* PanelImages<T>(const ConvGeometry&, const T*, DType, Tensor&,                \
                                   std::array<int64_t, 3>&, bool, int64_t);
KILN_INSTANTIATE_PANELS(float)
KILN_INSTANTIATE_PANELS(double)

#endif  // KILN_CONV_DIRECT

}  // namespace kiln::conv
