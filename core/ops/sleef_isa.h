// One table of SLEEF kernels per instruction set; sleef_<isa>.cc files instantiate it with their
// compiler flags. Include only from those files.
#ifndef KILN_CORE_OPS_SLEEF_ISA_H_
#define KILN_CORE_OPS_SLEEF_ISA_H_

#include <cstdint>

#include "core/ops/scalar_op.h"
#include "core/ops/sleef_kernels.h"

namespace kiln::sleef {

using MapD = void (*)(const double*, double*, int64_t);
using MapF = void (*)(const float*, float*, int64_t);
// Binary kernels: b advances with stride 1, or 0 for one value broadcast.
using MapD2 = void (*)(const double*, const double*, int64_t, double*, int64_t);
using MapF2 = void (*)(const float*, const float*, int64_t, float*, int64_t);

// The kernels of one instruction set, indexed by ScalarOpKind (null where SLEEF has none).
struct Table {
  MapD d[128] = {};
  MapF f[128] = {};
  // sigmoid and softplus in one pass each (AVX-512F, which has a fast reciprocal).
  MapD sigmoid_d = nullptr;
  MapF sigmoid_f = nullptr;
  MapD softplus_d = nullptr;
  MapF softplus_f = nullptr;
  // True when d[kArcsinh] and d[kArccosh] are exact beyond 1e150 themselves (Kiln's own).
  bool large_inverse_hyperbolic_d = false;
  // pow and arctan2, indexed like d and f.
  MapD2 d2[128] = {};
  MapF2 f2[128] = {};
};

// Applies the vector function F of width W to n elements; the tail goes through a padded buffer
// (padded with 1, inside every function's domain). Plain loops only: a standard-library
// template instantiated here would carry this file's instruction set into shared code.
template <typename T, int W, auto F, auto Load, auto Store>
void MapVector(const T* in, T* out, int64_t n) {
  int64_t i = 0;
  for (; i + W <= n; i += W) Store(out + i, F(Load(in + i)));
  if (i < n) {
    alignas(64) T buf[W];
    for (int k = 0; k < W; ++k) buf[k] = i + k < n ? in[i + k] : T(1);
    Store(buf, F(Load(buf)));
    for (int64_t k = 0; i + k < n; ++k) out[i + k] = buf[k];
  }
}

// The binary form of MapVector: out = F(a, b) with b's stride 0 (broadcast) or 1.
template <typename T, int W, auto F, auto Load, auto Store>
void MapVector2(const T* a, const T* b, int64_t b_stride, T* out, int64_t n) {
  alignas(64) T bb[W];
  for (int k = 0; k < W; ++k) bb[k] = b[0];
  const auto broadcast = Load(bb);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    Store(out + i, F(Load(a + i), b_stride == 0 ? broadcast : Load(b + i)));
  }
  if (i < n) {
    alignas(64) T ab[W];
    for (int k = 0; k < W; ++k) {
      ab[k] = i + k < n ? a[i + k] : T(1);
      bb[k] = i + k < n ? b[(i + k) * b_stride] : T(1);
    }
    Store(ab, F(Load(ab), Load(bb)));
    for (int64_t k = 0; i + k < n; ++k) out[i + k] = ab[k];
  }
}

Table Avx512Table();
Table Avx2Table();
Table Sse2Table();

}  // namespace kiln::sleef

#endif  // KILN_CORE_OPS_SLEEF_ISA_H_
