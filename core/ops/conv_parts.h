// The pieces the convolution kernels share (conv_kernels.cc's im2col tiles, conv_panels.cc's
// AVX2 panels): how a call's units of work are spread over the cores, and the walk of an
// image's columns (im2col and its adjoint). Internal to those two files.
#ifndef KILN_CORE_OPS_CONV_PARTS_H_
#define KILN_CORE_OPS_CONV_PARTS_H_

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

#include "absl/status/status.h"
#include "core/ops/conv_kernels.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/parallel.h"
#include "core/tensor/status_macros.h"

namespace kiln::conv {

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

// The per-chunk accumulators of GradWeights are capped at this many bytes in all.
inline constexpr int64_t kAccumulatorBytes = int64_t{32} << 20;
// Below this many multiply-adds (about 20 us on one core) a call runs on the calling thread:
// waking the pool costs more than it saves (LeNet's 6x16x5x5 on one 12x12 image: 17 us on two
// threads, 5 us on one).
inline constexpr int64_t kMinParallelWork = int64_t{1} << 20;
// Chunks of units per thread (as ParallelFor: a slowed core takes fewer of them).
inline constexpr int64_t kChunksPerThread = 8;

// While any instance lives, OpenBLAS runs each call on its caller's thread: the kernels' units
// already occupy every core, and OpenBLAS would split each of their GEMMs over the same cores
// again (its workers then contend with the pool's threads). Looked up at run time: with a BLAS
// other than OpenBLAS this does nothing. Nested and concurrent scopes restore the thread count
// when the last one ends.
class BlasSerialScope {
 public:
  BlasSerialScope() {
    Api& api = GetApi();
    if (api.set == nullptr) return;
    std::lock_guard<std::mutex> lock(api.mu);
    if (api.depth++ == 0) {
      api.saved = api.get();
      if (api.saved > 1) api.set(1);
    }
  }
  ~BlasSerialScope() {
    Api& api = GetApi();
    if (api.set == nullptr) return;
    std::lock_guard<std::mutex> lock(api.mu);
    if (--api.depth == 0 && api.saved > 1) api.set(api.saved);
  }
  BlasSerialScope(const BlasSerialScope&) = delete;
  BlasSerialScope& operator=(const BlasSerialScope&) = delete;

 private:
  // OpenBLAS's functions (null elsewhere), and the scopes alive with the count they replaced.
  struct Api {
    void (*set)(int) = nullptr;
    int (*get)() = nullptr;
    std::mutex mu;
    int depth = 0, saved = 1;
  };
  static Api& GetApi() {
    static Api* api = [] {
      auto* a = new Api;
      a->set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
      a->get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
      if (a->get == nullptr) a->set = nullptr;
      return a;
    }();
    return *api;
  }
};

// How a call's units are run: `chunks` fixed ranges of the units, on `threads` threads (each
// holding one of `threads` slots, for buffers of its own, while it runs a chunk).
struct Plan {
  int64_t units = 0, chunks = 1;
  int threads = 1;
};

// a * b multiply-adds (both at least 0), saturating at 2^63 - 1.
inline int64_t Work(int64_t a, int64_t b) {
  int64_t w;
  return __builtin_mul_overflow(a, b, &w) ? std::numeric_limits<int64_t>::max() : w;
}

// A plan for `units` units of `work` multiply-adds in all, in at most max_chunks chunks: one
// chunk on the calling thread when the work is too small to share.
inline Plan MakePlan(int64_t units, int64_t work, int64_t max_chunks) {
  Plan plan;
  plan.units = units;
  const int nt = NumThreads();
  if (nt <= 1 || units <= 1 || work < kMinParallelWork || max_chunks <= 1) return plan;
  plan.chunks = std::min({units, int64_t{nt} * kChunksPerThread, max_chunks});
  plan.threads = static_cast<int>(std::min<int64_t>(nt, plan.chunks));
  return plan;
}

// Runs fn(slot, chunk, begin, end) for every chunk of units [begin, end) of the plan; a slot in
// [0, plan.threads) is held by one thread at a time. Returns the calling thread's interrupt,
// polled between chunks (the chunks after it are skipped).
template <typename Fn>
absl::Status RunPlan(const Plan& plan, Fn fn) {
  auto range = [&](int64_t c, int64_t* begin, int64_t* end) {
    *begin = plan.units * c / plan.chunks;
    *end = plan.units * (c + 1) / plan.chunks;
  };
  if (plan.threads <= 1) {
    for (int64_t c = 0; c < plan.chunks; ++c) {
      RETURN_IF_ERROR(PollInterrupt());
      int64_t begin, end;
      range(c, &begin, &end);
      fn(0, c, begin, end);
    }
    return absl::OkStatus();
  }
  BlasSerialScope serial;
  std::unique_ptr<std::atomic<bool>[]> busy(new std::atomic<bool>[plan.threads]);
  for (int t = 0; t < plan.threads; ++t) busy[t].store(false);
  std::atomic<bool> stop{false};
  absl::Status status;
  const std::thread::id caller = std::this_thread::get_id();
  ParallelFor(plan.chunks, 1, [&](int64_t first, int64_t last) {
    // At most plan.threads threads run chunks at once, so a slot is free.
    int slot = 0;
    for (;; slot = (slot + 1) % plan.threads) {
      bool expected = false;
      if (busy[slot].compare_exchange_strong(expected, true, std::memory_order_acquire)) break;
    }
    for (int64_t c = first; c < last && !stop.load(std::memory_order_relaxed); ++c) {
      if (std::this_thread::get_id() == caller) {
        if (absl::Status s = PollInterrupt(); !s.ok()) {
          status = std::move(s);
          stop.store(true);
          break;
        }
      }
      int64_t begin, end;
      range(c, &begin, &end);
      fn(slot, c, begin, end);
    }
    busy[slot].store(false, std::memory_order_release);
  });
  return status;
}

// The output positions [lo, hi) of an axis of `out` positions whose input index o * s + off
// falls inside [0, in).
inline void ValidRange(int64_t off, int64_t s, int64_t in, int64_t out, int64_t* lo, int64_t* hi) {
  const int64_t first = off >= 0 ? 0 : (-off + s - 1) / s;
  const int64_t last = in - 1 - off < 0 ? 0 : (in - 1 - off) / s + 1;
  *lo = std::min(first, out);
  *hi = std::max(std::min(last, out), *lo);
}

// The columns of one image's group for the output positions [p0, p1): walks the rows (channel
// c, kernel position kz, ky, kx) and, in each, the segments of the tile on one output line (oz,
// oy), calling fn(row, column of the segment's first position, ox0, ox1, input line offset or
// -1 when the line is in the padding, x offset, lo, hi): positions ox in [ox0, ox1) of the line
// read input x = ox * stride + x offset when ox is in [lo, hi).
template <typename Fn>
void ForEachTileSegment(const ConvGeometry& g, int64_t cg, int64_t p0, int64_t p1, Fn fn) {
  const auto &in = g.image, &k = g.kernel, &out = g.output;
  const auto &s = g.stride, &d = g.dilation, &p = g.pad;
  const int64_t ox_n = out[2], w = p1 - p0;
  const int64_t line0 = p0 / ox_n, x0 = p0 % ox_n;
  const int64_t oz0 = line0 / out[1], oy0 = line0 % out[1];
  int64_t row = 0;
  for (int64_t c = 0; c < cg; ++c) {
    for (int64_t kz = 0; kz < k[0]; ++kz) {
      for (int64_t ky = 0; ky < k[1]; ++ky) {
        for (int64_t kx = 0; kx < k[2]; ++kx, ++row) {
          const int64_t off_x = kx * d[2] - p[2];
          int64_t lo, hi;
          ValidRange(off_x, s[2], in[2], ox_n, &lo, &hi);
          int64_t oz = oz0, oy = oy0, ox0 = x0;
          for (int64_t pos = 0; pos < w;) {
            const int64_t ox1 = std::min(ox_n, ox0 + (w - pos));
            const int64_t iz = oz * s[0] + kz * d[0] - p[0];
            const int64_t iy = oy * s[1] + ky * d[1] - p[1];
            const bool inside = iz >= 0 && iz < in[0] && iy >= 0 && iy < in[1];
            fn(row, pos, ox0, ox1, inside ? ((c * in[0] + iz) * in[1] + iy) * in[2] : -1, off_x, lo,
               hi);
            pos += ox1 - ox0;
            ox0 = 0;
            if (++oy == out[1]) {
              oy = 0;
              ++oz;
            }
          }
        }
      }
    }
  }
}

// The columns of one image's group (cg channels at img) for positions [p0, p1) into col
// (rows x (p1 - p0), row stride ld). The loops are plain so that short segments (a few
// elements, as in small images) are copied inline, not by calls of memcpy (see CMakeLists.txt).
template <typename T>
void Im2ColTile(const ConvGeometry& g, int64_t cg, const T* __restrict img, int64_t p0, int64_t p1,
                T* __restrict col, int64_t ld) {
  const int64_t sx = g.stride[2], w = ld;
  ForEachTileSegment(g, cg, p0, p1,
                     [&](int64_t row, int64_t pos, int64_t ox0, int64_t ox1, int64_t src,
                         int64_t off_x, int64_t lo, int64_t hi) {
                       T* __restrict dst = col + row * w + pos;  // dst[ox - ox0]
                       const int64_t a = src < 0 ? ox1 : std::clamp(lo, ox0, ox1);
                       const int64_t b = src < 0 ? ox1 : std::clamp(hi, a, ox1);
                       for (int64_t ox = ox0; ox < a; ++ox) dst[ox - ox0] = T(0);
                       if (a < b) {
                         const T* __restrict line = img + src + (a * sx + off_x);
                         T* __restrict to = dst + (a - ox0);
                         const int64_t n = b - a;
                         if (sx == 1) {
                           for (int64_t i = 0; i < n; ++i) to[i] = line[i];
                         } else {
                           for (int64_t i = 0; i < n; ++i) to[i] = line[i * sx];
                         }
                       }
                       for (int64_t ox = b; ox < ox1; ++ox) dst[ox - ox0] = T(0);
                     });
}

// Adds the columns of positions [p0, p1) back onto the image's group (col2im, the adjoint).
template <typename T>
void Col2ImTile(const ConvGeometry& g, int64_t cg, const T* __restrict col, int64_t p0, int64_t p1,
                T* __restrict img) {
  const int64_t sx = g.stride[2], w = p1 - p0;
  ForEachTileSegment(g, cg, p0, p1,
                     [&](int64_t row, int64_t pos, int64_t ox0, int64_t ox1, int64_t src,
                         int64_t off_x, int64_t lo, int64_t hi) {
                       if (src < 0) return;
                       const int64_t a = std::clamp(lo, ox0, ox1), b = std::clamp(hi, a, ox1);
                       if (a >= b) return;
                       const T* __restrict from = col + row * w + pos + (a - ox0);
                       T* __restrict line = img + src + (a * sx + off_x);
                       const int64_t n = b - a;
                       if (sx == 1) {
                         for (int64_t i = 0; i < n; ++i) line[i] += from[i];
                       } else {
                         for (int64_t i = 0; i < n; ++i) line[i * sx] += from[i];
                       }
                     });
}

}  // namespace kiln::conv

#endif  // KILN_CORE_OPS_CONV_PARTS_H_
