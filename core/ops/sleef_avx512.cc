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

// sigmoid(x) = (x >= 0 ? 1 : e) / (1 + e) with e = exp(-|x|) <= 1, so the divisor is in [1, 2]
// and never overflows; the reciprocal is rcp14 refined by Newton steps (each doubles the correct
// bits: 14 -> 28 -> 56 for double, 14 -> 28 for float) instead of a slow division.
__m512d SigmoidD(__m512d x) {
  const __m512d one = _mm512_set1_pd(1.0), two = _mm512_set1_pd(2.0);
  const __m512d e = Sleef_expd8_u10avx512f(_mm512_sub_pd(_mm512_setzero_pd(), _mm512_abs_pd(x)));
  const __m512d d = _mm512_add_pd(one, e);
  __m512d r = _mm512_rcp14_pd(d);
  r = _mm512_mul_pd(r, _mm512_fnmadd_pd(d, r, two));
  r = _mm512_mul_pd(r, _mm512_fnmadd_pd(d, r, two));
  const __mmask8 negative = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_LT_OQ);
  return _mm512_mul_pd(_mm512_mask_blend_pd(negative, one, e), r);
}

__m512 SigmoidF(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
  const __m512 e = Sleef_expf16_u10avx512f(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(x)));
  const __m512 d = _mm512_add_ps(one, e);
  __m512 r = _mm512_rcp14_ps(d);
  r = _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, two));
  const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  return _mm512_mul_ps(_mm512_mask_blend_ps(negative, one, e), r);
}

// softplus(x) = max(x, 0) + log1p(e), e = exp(-|x|), with log1p(e) = log(u) + c * (2 - u) for
// u = 1 + e rounded and c = e - (u - 1) its exact rounding error (see sleef_kernels.cc).
__m512d SoftplusD(__m512d x) {
  const __m512d zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0), two = _mm512_set1_pd(2.0);
  const __m512d e = Sleef_expd8_u10avx512f(_mm512_sub_pd(zero, _mm512_abs_pd(x)));
  const __m512d u = _mm512_add_pd(one, e);
  const __m512d c = _mm512_sub_pd(e, _mm512_sub_pd(u, one));
  const __m512d log1p = _mm512_fmadd_pd(c, _mm512_sub_pd(two, u), Sleef_logd8_u35avx512f(u));
  return _mm512_add_pd(_mm512_max_pd(x, zero), log1p);
}

__m512 SoftplusF(__m512 x) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
  const __m512 e = Sleef_expf16_u10avx512f(_mm512_sub_ps(zero, _mm512_abs_ps(x)));
  const __m512 u = _mm512_add_ps(one, e);
  const __m512 c = _mm512_sub_ps(e, _mm512_sub_ps(u, one));
  const __m512 log1p = _mm512_fmadd_ps(c, _mm512_sub_ps(two, u), Sleef_logf16_u35avx512f(u));
  return _mm512_add_ps(_mm512_max_ps(x, zero), log1p);
}

}  // namespace

Table Avx512Table() {
  Table t;
#define KILN_SLEEF_ENTRY(op, fn, acc)                                      \
  t.d[static_cast<int>(ScalarOpKind::op)] =                                \
      &MapVector<double, 8, Sleef_##fn##d8_##acc##avx512f, LoadD, StoreD>; \
  t.f[static_cast<int>(ScalarOpKind::op)] =                                \
      &MapVector<float, 16, Sleef_##fn##f16_##acc##avx512f, LoadF, StoreF>;
  KILN_SLEEF_OPS(KILN_SLEEF_ENTRY)
#undef KILN_SLEEF_ENTRY
#define KILN_SLEEF_BINARY_ENTRY(op, fn, acc)                                \
  t.d2[static_cast<int>(ScalarOpKind::op)] =                                \
      &MapVector2<double, 8, Sleef_##fn##d8_##acc##avx512f, LoadD, StoreD>; \
  t.f2[static_cast<int>(ScalarOpKind::op)] =                                \
      &MapVector2<float, 16, Sleef_##fn##f16_##acc##avx512f, LoadF, StoreF>;
  KILN_SLEEF_BINARY_OPS(KILN_SLEEF_BINARY_ENTRY)
#undef KILN_SLEEF_BINARY_ENTRY
  t.sigmoid_d = &MapVector<double, 8, SigmoidD, LoadD, StoreD>;
  t.sigmoid_f = &MapVector<float, 16, SigmoidF, LoadF, StoreF>;
  t.softplus_d = &MapVector<double, 8, SoftplusD, LoadD, StoreD>;
  t.softplus_f = &MapVector<float, 16, SoftplusF, LoadF, StoreF>;
  return t;
}

}  // namespace kiln::sleef
