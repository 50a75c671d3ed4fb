// The AVX2 vectors the convolution's panels use (conv_panels.cc, conv_panels_grad.cc): one
// template over float (8 lanes) and double (4 lanes), so that each kernel is written once.
// Internal to those files; defined only where the panels build (KILN_CONV_DIRECT).
#ifndef KILN_CORE_OPS_CONV_SIMD_H_
#define KILN_CORE_OPS_CONV_SIMD_H_

#include "core/ops/conv_panels.h"

#ifdef KILN_CONV_DIRECT
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace kiln::conv {

// A function compiled for AVX2 and FMA (called only once the CPU is known to have them).
#define KILN_AVX2 __attribute__((target("avx2,fma")))
// The same, always inlined (the vectors' helpers).
#define KILN_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

// Loads, stores, broadcasts and multiply-adds of one vector of T (float or double).
template <typename T>
struct Simd;

template <>
struct Simd<float> {
  using V = __m256;
  static constexpr int kLanes = 8;
  static KILN_AVX2_INLINE V Zero() { return _mm256_setzero_ps(); }
  static KILN_AVX2_INLINE __m256i Mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static KILN_AVX2_INLINE V Load(const float* p) { return _mm256_loadu_ps(p); }
  static KILN_AVX2_INLINE V Load(const float* p, __m256i m) { return _mm256_maskload_ps(p, m); }
  static KILN_AVX2_INLINE V Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static KILN_AVX2_INLINE V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static KILN_AVX2_INLINE void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static KILN_AVX2_INLINE void Store(float* p, __m256i m, V v) { _mm256_maskstore_ps(p, m, v); }
};

template <>
struct Simd<double> {
  using V = __m256d;
  static constexpr int kLanes = 4;
  static KILN_AVX2_INLINE V Zero() { return _mm256_setzero_pd(); }
  static KILN_AVX2_INLINE __m256i Mask(int n) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
  }
  static KILN_AVX2_INLINE V Load(const double* p) { return _mm256_loadu_pd(p); }
  static KILN_AVX2_INLINE V Load(const double* p, __m256i m) { return _mm256_maskload_pd(p, m); }
  static KILN_AVX2_INLINE V Broadcast(const double* p) { return _mm256_broadcast_sd(p); }
  static KILN_AVX2_INLINE V Fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static KILN_AVX2_INLINE void Store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static KILN_AVX2_INLINE void Store(double* p, __m256i m, V v) { _mm256_maskstore_pd(p, m, v); }
};

// Transposes an L x L tile (L: the vector's lanes): out[j][i] = in[i][j], in place.
KILN_AVX2_INLINE void TransposeTile(__m256 (&r)[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}
KILN_AVX2_INLINE void TransposeTile(__m256d (&r)[4]) {
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

// dst[j * ldd + i] = src[i][j] for the `rows` (at most 8) source rows i and j < n: `rows`
// strided rows (filters, say) laid out as n rows of ldd (at least `rows`) elements, by L x L
// tiles. Whole vectors are stored in increasing order, each one's lanes past `rows` landing
// where the next one writes: dst needs L elements of slack past its last row.
template <typename T>
KILN_AVX2 void InterleaveRows(const T* const* src, int rows, int64_t n, T* dst, int64_t ldd) {
  using S = Simd<T>;
  constexpr int L = S::kLanes;
  constexpr int kTiles = 8 / L;  // tiles across the (at most 8) rows
  const int tiles = (rows + L - 1) / L;
  int64_t j = 0;
  for (; j + L <= n; j += L) {
    typename S::V r[kTiles][L];
    for (int t = 0; t < tiles; ++t) {
      for (int i = 0; i < L; ++i) {
        const int row = t * L + i;
        r[t][i] = row < rows ? S::Load(src[row] + j) : S::Zero();
      }
      TransposeTile(r[t]);
    }
    for (int i = 0; i < L; ++i) {
      for (int t = 0; t < tiles; ++t) S::Store(dst + (j + i) * ldd + t * L, r[t][i]);
    }
  }
  // The rest one at a time, with the zeros of the rows past `rows` that the tiles store.
  const int64_t width = std::min<int64_t>(ldd, int64_t{tiles} * L);
  for (; j < n; ++j) {
    for (int i = 0; i < rows; ++i) dst[j * ldd + i] = src[i][j];
    for (int64_t i = rows; i < width; ++i) dst[j * ldd + i] = T(0);
  }
}

}  // namespace kiln::conv

#endif  // KILN_CONV_DIRECT

#endif  // KILN_CORE_OPS_CONV_SIMD_H_
