// The per-element functions of the scalar ops, for each compute type T, with NumPy's semantics.
// Included by the Elemwise kernels only.
#ifndef KILN_CORE_OPS_SCALAR_APPLY_H_
#define KILN_CORE_OPS_SCALAR_APPLY_H_

#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <type_traits>

#include "core/ops/scalar_op.h"
#include "core/ops/special_math.h"
#include "core/tensor/dtype_dispatch.h"

namespace kiln::scalar {

template <typename T>
inline constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool kBool = std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool kReal = std::is_floating_point_v<T>;
template <typename T>
inline constexpr bool kComplex = IsComplexType<T>::value;

// Integer results wrap around as in NumPy (without C++'s signed-overflow UB).
template <typename T>
T Wrap(uint64_t v) {
  return static_cast<T>(v);
}

template <typename T>
T IntPow(T base, T exp) {
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return Wrap<T>(result);
}

// Python's // and % for integers; the divisor is never 0 here (checked before the loop), and
// MIN // -1 wraps as in NumPy.
template <typename T>
T FloorDiv(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return Wrap<T>(uint64_t{0} - static_cast<uint64_t>(a));
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return a / b;
  }
}
template <typename T>
T FloorMod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    return a % b;
  }
}

// NumPy's npy_divmod for floats: floor division and a remainder with the divisor's sign.
template <typename T>
T FloatMod(T a, T b) {
  if (b == 0) return std::fmod(a, b);  // NaN
  T mod = std::fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(T(0), b);
  }
  return mod;
}
template <typename T>
T FloatFloorDiv(T a, T b) {
  if (b == 0) return a / b;
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
  if (div == 0) return std::copysign(T(0), a / b);
  const T floordiv = std::floor(div);
  return div - floordiv > T(0.5) ? floordiv + T(1) : floordiv;
}

// NaN-propagating maximum and minimum, as numpy.maximum / numpy.minimum.
template <typename T>
T Max(T a, T b) {
  if constexpr (kReal<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}
template <typename T>
T Min(T a, T b) {
  if constexpr (kReal<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

using K = ScalarOpKind;

// True when op K has a kernel for compute type T (the dtype rules already rejected the rest).
template <K Op, typename T>
constexpr bool Supports() {
  switch (Op) {
    case K::kLt:
    case K::kGt:
    case K::kLe:
    case K::kGe:
    case K::kMaximum:
    case K::kMinimum:
    case K::kIntDiv:
    case K::kMod:
    case K::kClip:
    case K::kSgn:
      return !kComplex<T>;
    case K::kAnd:
    case K::kOr:
    case K::kXor:
    case K::kInvert:
      return kInt<T> || kBool<T>;
    case K::kTrueDiv:
    case K::kReciprocal:
    case K::kLog:
    case K::kExp:
    case K::kSqrt:
      return kReal<T> || kComplex<T>;
    case K::kCeil:
    case K::kFloor:
    case K::kTrunc:
    case K::kRoundHalfToEven:
    case K::kRoundHalfAwayFromZero:
    case K::kLog2:
    case K::kLog10:
    case K::kLog1p:
    case K::kExp2:
    case K::kExpm1:
    case K::kDeg2Rad:
    case K::kRad2Deg:
    case K::kCos:
    case K::kArccos:
    case K::kSin:
    case K::kArcsin:
    case K::kTan:
    case K::kArctan:
    case K::kArctan2:
    case K::kCosh:
    case K::kArccosh:
    case K::kSinh:
    case K::kArcsinh:
    case K::kTanh:
    case K::kArctanh:
    case K::kErf:
    case K::kErfc:
    case K::kErfcx:
    case K::kErfinv:
    case K::kErfcinv:
    case K::kGamma:
    case K::kGammaln:
    case K::kPsi:
    case K::kSigmoid:
    case K::kSoftplus:
    case K::kLog1mexp:
    case K::kJ0:
    case K::kJ1:
    case K::kI0:
    case K::kI1:
    case K::kXlogX:
    case K::kXlogY0:
      return kReal<T>;
    case K::kSub:
    case K::kNeg:
      return !kBool<T>;
    case K::kSwitch:
    case K::kSecond:
    case K::kCast:
      return false;  // not elementwise functions of one compute type; see elemwise_perform.cc
    default:
      return true;
  }
}

// One element of op K on values of compute type T. Returns T, bool (comparisons) or the real
// component type (abs/real/imag/angle of complex).
template <K Op, typename T>
auto Apply(T a, T b = T(), T c = T()) {
  if constexpr (Op == K::kLt)
    return a < b;
  else if constexpr (Op == K::kGt)
    return a > b;
  else if constexpr (Op == K::kLe)
    return a <= b;
  else if constexpr (Op == K::kGe)
    return a >= b;
  else if constexpr (Op == K::kEq)
    return a == b;
  else if constexpr (Op == K::kNeq)
    return a != b;
  else if constexpr (Op == K::kAnd)
    return T(a & b);
  else if constexpr (Op == K::kOr)
    return T(a | b);
  else if constexpr (Op == K::kXor)
    return T(a ^ b);
  else if constexpr (Op == K::kInvert) {
    if constexpr (kBool<T>)
      return !a;
    else
      return T(~a);
  } else if constexpr (Op == K::kIsNan || Op == K::kIsInf) {
    auto test = [](auto v) { return Op == K::kIsNan ? std::isnan(v) : std::isinf(v); };
    if constexpr (kReal<T>)
      return test(a);
    else if constexpr (kComplex<T>)
      return test(a.real()) || test(a.imag());
    else
      return false;
  } else if constexpr (Op == K::kMaximum)
    return Max(a, b);
  else if constexpr (Op == K::kMinimum)
    return Min(a, b);
  else if constexpr (Op == K::kAdd || Op == K::kSub || Op == K::kMul) {
    if constexpr (kBool<T>)
      return Op == K::kMul ? (a && b) : (a || b);
    else if constexpr (kInt<T>) {
      const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
      return Wrap<T>(Op == K::kAdd ? x + y : Op == K::kSub ? x - y : x * y);
    } else {
      return Op == K::kAdd ? a + b : Op == K::kSub ? a - b : a * b;
    }
  } else if constexpr (Op == K::kTrueDiv)
    return a / b;
  else if constexpr (Op == K::kIntDiv) {
    if constexpr (kReal<T>)
      return FloatFloorDiv(a, b);
    else if constexpr (kBool<T>)
      return a;  // b is true: x // 1
    else
      return FloorDiv(a, b);
  } else if constexpr (Op == K::kMod) {
    if constexpr (kReal<T>)
      return FloatMod(a, b);
    else if constexpr (kBool<T>)
      return false;
    else
      return FloorMod(a, b);
  } else if constexpr (Op == K::kPow) {
    if constexpr (kInt<T>)
      return IntPow(a, b);
    else if constexpr (kBool<T>)
      return a || !b;
    else
      return T(std::pow(a, b));
  } else if constexpr (Op == K::kClip)
    return a < b ? b : (a > c ? c : a);
  else if constexpr (Op == K::kAbs) {
    if constexpr (kComplex<T>)
      return std::abs(a);
    else if constexpr (kReal<T>)
      return std::fabs(a);
    else if constexpr (std::is_signed_v<T>)
      return a < 0 ? Wrap<T>(uint64_t{0} - uint64_t(a)) : a;
    else
      return a;
  } else if constexpr (Op == K::kSgn) {
    if constexpr (kReal<T>)
      return a != a ? a : T((a > 0) - (a < 0));
    else
      return T((a > 0) - (a < T(0)));
  } else if constexpr (Op == K::kCeil)
    return std::ceil(a);
  else if constexpr (Op == K::kFloor)
    return std::floor(a);
  else if constexpr (Op == K::kTrunc)
    return std::trunc(a);
  else if constexpr (Op == K::kRoundHalfToEven)
    return std::nearbyint(a);
  else if constexpr (Op == K::kRoundHalfAwayFromZero)
    return std::round(a);
  else if constexpr (Op == K::kNeg) {
    if constexpr (kInt<T>)
      return Wrap<T>(uint64_t{0} - static_cast<uint64_t>(a));
    else
      return -a;
  } else if constexpr (Op == K::kReciprocal)
    return T(1) / a;
  else if constexpr (Op == K::kLog)
    return std::log(a);
  else if constexpr (Op == K::kLog2)
    return std::log2(a);
  else if constexpr (Op == K::kLog10)
    return std::log10(a);
  else if constexpr (Op == K::kLog1p)
    return std::log1p(a);
  else if constexpr (Op == K::kExp)
    return std::exp(a);
  else if constexpr (Op == K::kExp2)
    return std::exp2(a);
  else if constexpr (Op == K::kExpm1)
    return std::expm1(a);
  else if constexpr (Op == K::kSqr) {
    if constexpr (kInt<T>)
      return Wrap<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(a));
    else if constexpr (kBool<T>)
      return a;
    else
      return a * a;
  } else if constexpr (Op == K::kSqrt)
    return std::sqrt(a);
  else if constexpr (Op == K::kDeg2Rad)
    return a * T(std::numbers::pi / 180);
  else if constexpr (Op == K::kRad2Deg)
    return a * T(180 / std::numbers::pi);
  else if constexpr (Op == K::kCos)
    return std::cos(a);
  else if constexpr (Op == K::kArccos)
    return std::acos(a);
  else if constexpr (Op == K::kSin)
    return std::sin(a);
  else if constexpr (Op == K::kArcsin)
    return std::asin(a);
  else if constexpr (Op == K::kTan)
    return std::tan(a);
  else if constexpr (Op == K::kArctan)
    return std::atan(a);
  else if constexpr (Op == K::kArctan2)
    return std::atan2(a, b);
  else if constexpr (Op == K::kCosh)
    return std::cosh(a);
  else if constexpr (Op == K::kArccosh)
    return std::acosh(a);
  else if constexpr (Op == K::kSinh)
    return std::sinh(a);
  else if constexpr (Op == K::kArcsinh)
    return std::asinh(a);
  else if constexpr (Op == K::kTanh)
    return std::tanh(a);
  else if constexpr (Op == K::kArctanh)
    return std::atanh(a);
  else if constexpr (Op == K::kErf)
    return std::erf(a);
  else if constexpr (Op == K::kErfc)
    return std::erfc(a);
  else if constexpr (Op == K::kErfcx)
    return special::Erfcx(a);
  else if constexpr (Op == K::kErfinv)
    return special::Erfinv(a);
  else if constexpr (Op == K::kErfcinv)
    return special::Erfcinv(a);
  else if constexpr (Op == K::kGamma)
    return special::Gamma(a);
  else if constexpr (Op == K::kGammaln) {
    int sign;
    return T(::lgamma_r(double(a), &sign));
  } else if constexpr (Op == K::kPsi)
    return special::Digamma(a);
  else if constexpr (Op == K::kSigmoid)
    return special::Sigmoid(a);
  else if constexpr (Op == K::kSoftplus)
    return special::Softplus(a);
  else if constexpr (Op == K::kLog1mexp)
    return special::Log1mexp(a);
  else if constexpr (Op == K::kJ0)  // Bessel functions of the first kind (glibc's, any real x)
    return T(::j0(double(a)));
  else if constexpr (Op == K::kJ1)
    return T(::j1(double(a)));
  else if constexpr (Op == K::kI0)  // modified Bessel functions of the first kind
    return T(special::BesselI0(double(a)));
  else if constexpr (Op == K::kI1)
    return T(special::BesselI1(double(a)));
  else if constexpr (Op == K::kXlogX)  // aesara.tensor.xlogx: 0 at 0
    return a == T(0) ? T(0) : T(a * std::log(a));
  else if constexpr (Op == K::kXlogY0)
    return a == T(0) ? T(0) : T(a * std::log(b));
  else if constexpr (Op == K::kIdentity)
    return a;
  else if constexpr (Op == K::kReal) {
    if constexpr (kComplex<T>)
      return a.real();
    else
      return a;
  } else if constexpr (Op == K::kImag) {
    if constexpr (kComplex<T>)
      return a.imag();
    else
      return T(0);
  } else if constexpr (Op == K::kConj) {
    if constexpr (kComplex<T>)
      return std::conj(a);
    else
      return a;
  } else if constexpr (Op == K::kAngle) {
    if constexpr (kComplex<T>)
      return double(std::arg(a));
    else
      return std::atan2(0.0, double(a));
  } else {
    static_assert(Op == K::kAdd, "no scalar function for this op");
    return a;
  }
}

}  // namespace kiln::scalar

#endif  // KILN_CORE_OPS_SCALAR_APPLY_H_
