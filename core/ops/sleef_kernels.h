// Vectorized transcendental functions from SLEEF for contiguous float64 and float32 arrays, on the
// widest instruction set the CPU has (AVX-512F, AVX2+FMA, else SSE2). Each function's error bound
// is its suffix: u10 = 1.0 ULP, u15 = 1.5 ULP, u35 = 3.5 ULP (the faster variants of log, tan and
// the trigonometric functions), none for the exact rounding functions. On AVX-512F, float64 erf
// and log1p are Kiln's own, within 1 ULP. scalar_ops_test checks them against NumPy within 4 ULP.
#ifndef KILN_CORE_OPS_SLEEF_KERNELS_H_
#define KILN_CORE_OPS_SLEEF_KERNELS_H_

#include <cstdint>

#include "core/ops/scalar_op.h"

// The scalar ops SLEEF provides. X(op, SLEEF function stem, error bound). SLEEF's asinh and acosh
// return inf beyond about 1e154; Map computes log(2|x|) there instead (see InverseHyperbolic).
#define KILN_SLEEF_OPS(X)                                                                         \
  X(kExp, exp, u10)                                                                               \
  X(kLog, log, u35)                                                                               \
  X(kLog1p, log1p, u10)                                                                           \
  X(kExpm1, expm1, u10)                                                                           \
  X(kExp2, exp2, u10)                                                                             \
  X(kLog2, log2, u10) X(kLog10, log10, u10) X(kSin, sin, u35) X(kCos, cos, u35) X(kTan, tan, u35) \
      X(kSinh, sinh, u10) X(kCosh, cosh, u10) X(kTanh, tanh, u35) X(kArcsin, asin, u35)           \
          X(kArccos, acos, u35) X(kArctan, atan, u35) X(kArctanh, atanh, u10) X(kErf, erf, u10)   \
              X(kErfc, erfc, u15) X(kArcsinh, asinh, u10) X(kArccosh, acosh, u10)                 \
                  X(kFloor, floor, ) X(kCeil, ceil, ) X(kTrunc, trunc, )                          \
                      X(kRoundHalfToEven, rint, ) X(kRoundHalfAwayFromZero, round, )

namespace kiln::sleef {

// The binary ops SLEEF provides. X(op, SLEEF function stem, error bound).
#define KILN_SLEEF_BINARY_OPS(X) X(kPow, pow, u10) X(kArctan2, atan2, u10)

// True when Map computes op: the functions above plus sigmoid and softplus built from them.
constexpr bool Provides(ScalarOpKind op) {
  switch (op) {
#define KILN_SLEEF_CASE(op, fn, acc) case ScalarOpKind::op:
    KILN_SLEEF_OPS(KILN_SLEEF_CASE)
#undef KILN_SLEEF_CASE
    case ScalarOpKind::kSigmoid:
    case ScalarOpKind::kSoftplus:
      return true;
    default:
      return false;
  }
}

// Computes op on in[0..n) into out[0..n) (which may alias in) and returns true, or returns false
// when SLEEF does not provide op.
bool Map(ScalarOpKind op, const double* in, double* out, int64_t n);
bool Map(ScalarOpKind op, const float* in, float* out, int64_t n);

// True when Map2 computes the binary op.
constexpr bool ProvidesBinary(ScalarOpKind op) {
  return op == ScalarOpKind::kPow || op == ScalarOpKind::kArctan2;
}
// out[i] = op(a[i], b[i * b_stride]) for b_stride 0 (b broadcast) or 1.
void Map2(ScalarOpKind op, const double* a, const double* b, int64_t b_stride, double* out,
          int64_t n);
void Map2(ScalarOpKind op, const float* a, const float* b, int64_t b_stride, float* out, int64_t n);

// The instruction set in use: "avx512f", "avx2" or "sse2" (the widest the CPU has, unless the
// environment variable KILN_ISA names a narrower one).
const char* IsaName();

}  // namespace kiln::sleef

#endif  // KILN_CORE_OPS_SLEEF_KERNELS_H_
