// SLEEF kernels for AVX-512F (compiled with -mavx512f; used only when the CPU has it).
#include <immintrin.h>
#include <sleef.h>

#include "core/ops/sleef_isa.h"

namespace kiln::sleef {
namespace {

__m512d LoadD(const double* p) { return _mm512_loadu_pd(p); }
void StoreD(double* p, __m512d v) { _mm512_storeu_pd(p, v); }
__m512 LoadF(const float* p) { return _mm512_loadu_ps(p); }
void StoreF(float* p, __m512 v) { _mm512_storeu_ps(p, v); }

}  // namespace

Table Avx512Table() {
  Table t;
#define KILN_SLEEF_ENTRY(op, fn, acc)                                                         \
  t.d[static_cast<int>(ScalarOpKind::op)] =                                                  \
      &MapVector<double, 8, Sleef_##fn##d8_##acc##avx512f, LoadD, StoreD>;          \
  t.f[static_cast<int>(ScalarOpKind::op)] =                                                  \
      &MapVector<float, 16, Sleef_##fn##f16_##acc##avx512f, LoadF, StoreF>;
  KILN_SLEEF_OPS(KILN_SLEEF_ENTRY)
#undef KILN_SLEEF_ENTRY
  return t;
}

}  // namespace kiln::sleef
