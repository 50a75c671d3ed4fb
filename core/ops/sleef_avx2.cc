// SLEEF kernels for AVX2 and FMA (compiled with -mavx2 -mfma; used only when the CPU has it).
#include <immintrin.h>
#include <sleef.h>

#include "core/ops/sleef_isa.h"

namespace kiln::sleef {
namespace {

__m256d LoadD(const double* p) { return _mm256_loadu_pd(p); }
void StoreD(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
__m256 LoadF(const float* p) { return _mm256_loadu_ps(p); }
void StoreF(float* p, __m256 v) { _mm256_storeu_ps(p, v); }

}  // namespace

Table Avx2Table() {
  Table t;
#define KILN_SLEEF_ENTRY(op, fn, acc)                                   \
  t.d[static_cast<int>(ScalarOpKind::op)] =                             \
      &MapVector<double, 4, Sleef_##fn##d4_##acc##avx2, LoadD, StoreD>; \
  t.f[static_cast<int>(ScalarOpKind::op)] =                             \
      &MapVector<float, 8, Sleef_##fn##f8_##acc##avx2, LoadF, StoreF>;
  KILN_SLEEF_OPS(KILN_SLEEF_ENTRY)
#undef KILN_SLEEF_ENTRY
#define KILN_SLEEF_BINARY_ENTRY(op, fn, acc)                             \
  t.d2[static_cast<int>(ScalarOpKind::op)] =                             \
      &MapVector2<double, 4, Sleef_##fn##d4_##acc##avx2, LoadD, StoreD>; \
  t.f2[static_cast<int>(ScalarOpKind::op)] =                             \
      &MapVector2<float, 8, Sleef_##fn##f8_##acc##avx2, LoadF, StoreF>;
  KILN_SLEEF_BINARY_OPS(KILN_SLEEF_BINARY_ENTRY)
#undef KILN_SLEEF_BINARY_ENTRY
  return t;
}

}  // namespace kiln::sleef
