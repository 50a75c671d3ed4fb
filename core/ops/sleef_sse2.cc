// SLEEF kernels for SSE2, the x86-64 baseline (CPUs without AVX2 and FMA, or KILN_ISA=sse2).
#include <immintrin.h>
#include <sleef.h>

#include "core/ops/sleef_isa.h"

namespace kiln::sleef {
namespace {

__m128d LoadD(const double* p) { return _mm_loadu_pd(p); }
void StoreD(double* p, __m128d v) { _mm_storeu_pd(p, v); }
__m128 LoadF(const float* p) { return _mm_loadu_ps(p); }
void StoreF(float* p, __m128 v) { _mm_storeu_ps(p, v); }

}  // namespace

Table Sse2Table() {
  Table t;
#define KILN_SLEEF_ENTRY(op, fn, acc)                                   \
  t.d[static_cast<int>(ScalarOpKind::op)] =                             \
      &MapVector<double, 2, Sleef_##fn##d2_##acc##sse2, LoadD, StoreD>; \
  t.f[static_cast<int>(ScalarOpKind::op)] =                             \
      &MapVector<float, 4, Sleef_##fn##f4_##acc##sse2, LoadF, StoreF>;
  KILN_SLEEF_OPS(KILN_SLEEF_ENTRY)
#undef KILN_SLEEF_ENTRY
#define KILN_SLEEF_BINARY_ENTRY(op, fn, acc)                             \
  t.d2[static_cast<int>(ScalarOpKind::op)] =                             \
      &MapVector2<double, 2, Sleef_##fn##d2_##acc##sse2, LoadD, StoreD>; \
  t.f2[static_cast<int>(ScalarOpKind::op)] =                             \
      &MapVector2<float, 4, Sleef_##fn##f4_##acc##sse2, LoadF, StoreF>;
  KILN_SLEEF_BINARY_OPS(KILN_SLEEF_BINARY_ENTRY)
#undef KILN_SLEEF_BINARY_ENTRY
  return t;
}

}  // namespace kiln::sleef
