// Convolution by im2col + GEMM. A chunk of images is unrolled into one column buffer (rows:
// the group's channels times the kernel's positions; columns: the chunk's output positions),
// by both cores, and one GEMM per group multiplies it by the weights, threaded by OpenBLAS.
// One GEMM over the chunk measured faster than images spread over the cores with a GEMM each
// (batch 64 of 1x28x28 by 20 5x5 filters, float32: 1.6 ms against 2.3 to 5 ms; OpenBLAS threads
// each of those GEMMs too, and the two callers contend for its workers); with batch 1 both are
// the same. The gradients use the same buffers: gradInputs is GEMM then col2im, gradWeights is
// im2col then a GEMM against the transposed columns, accumulated over the chunks.
#include "core/ops/conv_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/parallel.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

constexpr int64_t kDefaultColumnBytes = int64_t{64} << 20;
// BLAS's dimensions are 32-bit ints.
constexpr int64_t kMaxBlasDim = (int64_t{1} << 31) - 1;
std::atomic<int64_t> column_bytes{0};

// C (m x n, row stride ldc) = op(A) op(B) + beta C; with k == 0 (no channels), beta C.
template <typename T>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : c[i * ldc + j] * beta;
    }
    return;
  }
  const CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
  }
}

// The output positions [lo, hi) of an axis of `out` positions whose input index o * s + off
// falls inside [0, in).
void ValidRange(int64_t off, int64_t s, int64_t in, int64_t out, int64_t* lo, int64_t* hi) {
  const int64_t first = off >= 0 ? 0 : (-off + s - 1) / s;
  const int64_t last = in - 1 - off < 0 ? 0 : (in - 1 - off) / s + 1;
  *lo = std::min(first, out);
  *hi = std::max(std::min(last, out), *lo);
}

// Walks the (row, output position) pairs of one image's columns: for each row (channel c,
// kernel position kz, ky, kx) and each output row (oz, oy), calls
// fn(column segment offset, input row offset or -1 when the row is in the padding, x offset,
// lo, hi) where positions ox in [lo, hi) read input x = ox * stride + x offset.
template <typename Fn>
void ForEachSegment(const ConvGeometry& g, int64_t cg, Fn fn) {
  const auto &in = g.image, &k = g.kernel, &out = g.output;
  const auto &s = g.stride, &d = g.dilation, &p = g.pad;
  int64_t row = 0;
  for (int64_t c = 0; c < cg; ++c) {
    for (int64_t kz = 0; kz < k[0]; ++kz) {
      for (int64_t ky = 0; ky < k[1]; ++ky) {
        for (int64_t kx = 0; kx < k[2]; ++kx, ++row) {
          const int64_t off_x = kx * d[2] - p[2];
          int64_t lo, hi;
          ValidRange(off_x, s[2], in[2], out[2], &lo, &hi);
          for (int64_t oz = 0; oz < out[0]; ++oz) {
            const int64_t iz = oz * s[0] + kz * d[0] - p[0];
            for (int64_t oy = 0; oy < out[1]; ++oy) {
              const int64_t iy = oy * s[1] + ky * d[1] - p[1];
              const bool inside = iz >= 0 && iz < in[0] && iy >= 0 && iy < in[1];
              fn(row, (oz * out[1] + oy) * out[2],
                 inside ? ((c * in[0] + iz) * in[1] + iy) * in[2] : -1, off_x, lo, hi);
            }
          }
        }
      }
    }
  }
}

// The columns of one image's group (cg channels at img) into col, row stride ldc.
template <typename T>
void Im2Col(const ConvGeometry& g, int64_t cg, const T* img, T* col, int64_t ldc) {
  const int64_t ox_n = g.output[2], sx = g.stride[2];
  ForEachSegment(g, cg,
                 [&](int64_t row, int64_t pos, int64_t src, int64_t off_x, int64_t lo, int64_t hi) {
                   T* dst = col + row * ldc + pos;
                   if (src < 0) {
                     std::fill(dst, dst + ox_n, T(0));
                     return;
                   }
                   const T* line = img + src + off_x;
                   std::fill(dst, dst + lo, T(0));
                   if (sx == 1) {
                     std::memcpy(dst + lo, line + lo, (hi - lo) * sizeof(T));
                   } else {
                     for (int64_t ox = lo; ox < hi; ++ox) dst[ox] = line[ox * sx];
                   }
                   std::fill(dst + hi, dst + ox_n, T(0));
                 });
}

// Adds one image's columns back onto the image's group (col2im, the adjoint of Im2Col).
template <typename T>
void Col2Im(const ConvGeometry& g, int64_t cg, const T* col, int64_t ldc, T* img) {
  const int64_t sx = g.stride[2];
  ForEachSegment(g, cg,
                 [&](int64_t row, int64_t pos, int64_t src, int64_t off_x, int64_t lo, int64_t hi) {
                   if (src < 0) return;
                   const T* from = col + row * ldc + pos;
                   T* line = img + src + off_x;
                   for (int64_t ox = lo; ox < hi; ++ox) line[ox * sx] += from[ox];
                 });
}

// The images per chunk: as many as keep the column buffer under the cap (at least one), and
// the chunk's columns within BLAS's int. Under a call's memory budget the cap is also a quarter
// of what the budget has left, so that a batch that fits image by image is not refused.
int64_t ChunkImages(const ConvGeometry& g, int64_t rows, int64_t elem_size) {
  int64_t cap = column_bytes.load() > 0 ? column_bytes.load() : kDefaultColumnBytes;
  if (const MemoryBudget* budget = CurrentBudgetPtr(); budget != nullptr && budget->limit() > 0) {
    cap = std::min(cap, std::max<int64_t>(0, budget->limit() - budget->used()) / 4);
  }
  const int64_t per_image = std::max<int64_t>(1, rows * g.OutputSize() * elem_size);
  int64_t n = std::max<int64_t>(1, cap / per_image);
  n = std::min(n, kMaxBlasDim / g.OutputSize());
  return std::max<int64_t>(1, std::min(n, g.batch));
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

// Runs fn(i) for the chunk's images on both cores when the work is large enough to share.
template <typename Fn>
void ForImages(int64_t count, int64_t work_per_image, Fn fn) {
  const int64_t min_chunk =
      std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, work_per_image));
  ParallelFor(count, min_chunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

// Copies the group's topgrad rows of the chunk's images into buf (mg x count * P), or returns
// them in place for a chunk of one image.
template <typename T>
const T* GatherTop(const ConvGeometry& g, const T* top, int64_t n0, int64_t count, int64_t grp,
                   T* buf) {
  const int64_t mg = g.filters / g.groups, p = g.OutputSize();
  if (count == 1) return top + (n0 * g.filters + grp * mg) * p;
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t m = 0; m < mg; ++m) {
      std::memcpy(buf + m * count * p + i * p, top + ((n0 + i) * g.filters + grp * mg + m) * p,
                  p * sizeof(T));
    }
  }
  return buf;
}

template <typename T>
absl::Status Forward(const ConvGeometry& g, const T* img, const T* kern, T* out, DType dtype) {
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups;
  const int64_t rows = cg * g.KernelSize(), p = g.OutputSize(), isz = g.ImageSize();
  if (g.batch == 0 || g.filters == 0) return absl::OkStatus();
  Tensor flipped;
  const T* w = CorrelationWeights(g, kern, flipped, dtype);
  const int64_t nb = ChunkImages(g, rows, sizeof(T));
  Tensor col = Tensor::Empty(dtype, {rows, nb * p});
  Tensor tmp = Tensor::Empty(dtype, {nb > 1 ? mg : 0, nb * p});
  for (int64_t n0 = 0; n0 < g.batch; n0 += nb) {
    RETURN_IF_ERROR(PollInterrupt());
    const int64_t count = std::min(nb, g.batch - n0), ld = count * p;
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      T* c = col.data<T>();
      ForImages(count, rows * p, [&](int64_t i) {
        Im2Col(g, cg, img + ((n0 + i) * g.channels + grp * cg) * isz, c + i * p, ld);
      });
      const T* wg = w + grp * mg * rows;
      if (count == 1) {
        Gemm<T>(false, false, mg, p, rows, wg, rows, c, ld, T(0),
                out + (n0 * g.filters + grp * mg) * p, p);
        continue;
      }
      T* t = tmp.data<T>();
      Gemm<T>(false, false, mg, ld, rows, wg, rows, c, ld, T(0), t, ld);
      ForImages(count, mg * p, [&](int64_t i) {
        for (int64_t m = 0; m < mg; ++m) {
          std::memcpy(out + ((n0 + i) * g.filters + grp * mg + m) * p, t + m * ld + i * p,
                      p * sizeof(T));
        }
      });
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status GradInputs(const ConvGeometry& g, const T* kern, const T* top, T* dimg, DType dtype) {
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups;
  const int64_t rows = cg * g.KernelSize(), p = g.OutputSize(), isz = g.ImageSize();
  std::fill(dimg, dimg + g.batch * g.channels * isz, T(0));
  if (g.batch == 0 || rows == 0) return absl::OkStatus();
  Tensor flipped;
  const T* w = CorrelationWeights(g, kern, flipped, dtype);
  const int64_t nb = ChunkImages(g, rows, sizeof(T));
  Tensor dcol = Tensor::Empty(dtype, {rows, nb * p});
  Tensor buf = Tensor::Empty(dtype, {nb > 1 ? mg : 0, nb * p});
  for (int64_t n0 = 0; n0 < g.batch; n0 += nb) {
    RETURN_IF_ERROR(PollInterrupt());
    const int64_t count = std::min(nb, g.batch - n0), ld = count * p;
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const T* b = GatherTop(g, top, n0, count, grp, buf.data<T>());
      T* c = dcol.data<T>();
      Gemm<T>(true, false, rows, ld, mg, w + grp * mg * rows, rows, b, ld, T(0), c, ld);
      ForImages(count, rows * p, [&](int64_t i) {
        Col2Im(g, cg, c + i * p, ld, dimg + ((n0 + i) * g.channels + grp * cg) * isz);
      });
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status GradWeights(const ConvGeometry& g, const T* img, const T* top, T* dkern, DType dtype) {
  const int64_t cg = g.channels / g.groups, mg = g.filters / g.groups, k = g.KernelSize();
  const int64_t rows = cg * k, p = g.OutputSize(), isz = g.ImageSize();
  // The correlation's weights' gradient, reversed into dkern at the end when flipped.
  Tensor corr = Tensor::Zeros(dtype, {g.flip ? g.filters : 0, rows});
  T* dw = g.flip ? corr.data<T>() : dkern;
  std::fill(dw, dw + g.filters * rows, T(0));
  if (g.batch > 0 && rows > 0 && mg > 0) {
    const int64_t nb = ChunkImages(g, rows, sizeof(T));
    Tensor col = Tensor::Empty(dtype, {rows, nb * p});
    Tensor buf = Tensor::Empty(dtype, {nb > 1 ? mg : 0, nb * p});
    for (int64_t n0 = 0; n0 < g.batch; n0 += nb) {
      RETURN_IF_ERROR(PollInterrupt());
      const int64_t count = std::min(nb, g.batch - n0), ld = count * p;
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        T* c = col.data<T>();
        ForImages(count, rows * p, [&](int64_t i) {
          Im2Col(g, cg, img + ((n0 + i) * g.channels + grp * cg) * isz, c + i * p, ld);
        });
        const T* a = GatherTop(g, top, n0, count, grp, buf.data<T>());
        Gemm<T>(false, true, mg, rows, ld, a, ld, c, ld, T(1), dw + grp * mg * rows, rows);
      }
    }
  }
  if (g.flip) {
    for (int64_t r = 0; r < g.filters * cg; ++r) {
      for (int64_t j = 0; j < k; ++j) dkern[r * k + j] = dw[r * k + (k - 1 - j)];
    }
  }
  return absl::OkStatus();
}

absl::Status NoKernel(DType dtype) {
  return absl::InvalidArgumentError(absl::StrCat("no convolution kernel for dtype ",
                                                 DTypeName(dtype), " (float32 and float64 only)"));
}

}  // namespace

void SetConvColumnBytesForTesting(int64_t bytes) { column_bytes.store(bytes); }

absl::Status ConvForwardKernel(const ConvGeometry& g, const Tensor& img, const Tensor& kern,
                               Tensor& out) {
  if (out.dtype() == DType::kFloat32) {
    return Forward<float>(g, img.data<float>(), kern.data<float>(), out.data<float>(), out.dtype());
  }
  if (out.dtype() == DType::kFloat64) {
    return Forward<double>(g, img.data<double>(), kern.data<double>(), out.data<double>(),
                           out.dtype());
  }
  return NoKernel(out.dtype());
}

absl::Status ConvGradInputsKernel(const ConvGeometry& g, const Tensor& kern, const Tensor& top,
                                  Tensor& img_grad) {
  if (img_grad.dtype() == DType::kFloat32) {
    return GradInputs<float>(g, kern.data<float>(), top.data<float>(), img_grad.data<float>(),
                             img_grad.dtype());
  }
  if (img_grad.dtype() == DType::kFloat64) {
    return GradInputs<double>(g, kern.data<double>(), top.data<double>(), img_grad.data<double>(),
                              img_grad.dtype());
  }
  return NoKernel(img_grad.dtype());
}

absl::Status ConvGradWeightsKernel(const ConvGeometry& g, const Tensor& img, const Tensor& top,
                                   Tensor& kern_grad) {
  if (kern_grad.dtype() == DType::kFloat32) {
    return GradWeights<float>(g, img.data<float>(), top.data<float>(), kern_grad.data<float>(),
                              kern_grad.dtype());
  }
  if (kern_grad.dtype() == DType::kFloat64) {
    return GradWeights<double>(g, img.data<double>(), top.data<double>(), kern_grad.data<double>(),
                               kern_grad.dtype());
  }
  return NoKernel(kern_grad.dtype());
}

}  // namespace kiln
