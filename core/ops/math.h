// The elementwise math of aesara.tensor.math as C++ functions and operators on Var.
#ifndef KILN_CORE_OPS_MATH_H_
#define KILN_CORE_OPS_MATH_H_

#include <type_traits>

#include "core/graph/constructors.h"
#include "core/graph/var.h"

namespace kiln {

// Unary elementwise functions, one Elemwise each, named as in aesara.tensor:
// abs sgn ceil floor trunc round_half_to_even round_half_away_from_zero neg reciprocal log log2
// log10 log1p exp exp2 expm1 sqr sqrt deg2rad rad2deg cos arccos sin arcsin tan arctan cosh
// arccosh sinh arcsinh tanh arctanh erf erfc erfcx erfinv erfcinv gamma gammaln psi sigmoid
// softplus log1mexp j0 j1 isnan isinf invert real imag conj angle identity.
#define KILN_UNARY_MATH(X)                                                                         \
  X(abs, kAbs)                                                                                     \
  X(sgn, kSgn)                                                                                     \
  X(ceil, kCeil)                                                                                   \
  X(floor, kFloor) X(trunc, kTrunc) X(round_half_to_even, kRoundHalfToEven)                        \
      X(round_half_away_from_zero, kRoundHalfAwayFromZero) X(neg, kNeg) X(reciprocal, kReciprocal) \
          X(log, kLog) X(log2, kLog2) X(log10, kLog10) X(log1p, kLog1p) X(exp, kExp)               \
              X(exp2, kExp2) X(expm1, kExpm1) X(sqr, kSqr) X(sqrt, kSqrt) X(deg2rad, kDeg2Rad)     \
                  X(rad2deg, kRad2Deg) X(cos, kCos) X(arccos, kArccos) X(sin, kSin)                \
                      X(arcsin, kArcsin) X(tan, kTan) X(arctan, kArctan) X(cosh, kCosh)            \
                          X(arccosh, kArccosh) X(sinh, kSinh) X(arcsinh, kArcsinh) X(tanh, kTanh)  \
                              X(arctanh, kArctanh) X(erf, kErf) X(erfc, kErfc) X(erfcx, kErfcx)    \
                                  X(erfinv, kErfinv) X(erfcinv, kErfcinv) X(gamma, kGamma)         \
                                      X(gammaln, kGammaln) X(psi, kPsi) X(sigmoid, kSigmoid)       \
                                          X(softplus, kSoftplus) X(log1mexp, kLog1mexp) X(j0, kJ0) X(j1, kJ1)            \
                                              X(isnan, kIsNan) X(isinf, kIsInf) X(invert, kInvert) \
                                                  X(real, kReal) X(imag, kImag) X(conj, kConj)     \
                                                      X(angle, kAngle) X(identity, kIdentity)

// Binary elementwise functions: lt gt le ge eq neq and_ or_ xor maximum minimum add sub mul
// true_div int_div mod pow arctan2 second (Aesara's fill: the value of b broadcast like a).
#define KILN_BINARY_MATH(X)                                                                       \
  X(lt, kLt)                                                                                      \
  X(gt, kGt)                                                                                      \
  X(le, kLe)                                                                                      \
  X(ge, kGe) X(eq, kEq) X(neq, kNeq) X(and_, kAnd) X(or_, kOr) X(xor_, kXor) X(maximum, kMaximum) \
      X(minimum, kMinimum) X(add, kAdd) X(sub, kSub) X(mul, kMul) X(true_div, kTrueDiv)           \
          X(int_div, kIntDiv) X(mod, kMod) X(pow, kPow) X(arctan2, kArctan2) X(second, kSecond)

#define KILN_DECLARE_UNARY(name, kind) Var name(const Var& a);
#define KILN_DECLARE_BINARY(name, kind) Var name(const Var& a, const Var& b);
KILN_UNARY_MATH(KILN_DECLARE_UNARY)
KILN_BINARY_MATH(KILN_DECLARE_BINARY)
#undef KILN_DECLARE_UNARY
#undef KILN_DECLARE_BINARY

// Elemwise{switch}: where cond is non-zero a, else b; `where` is the same (numpy.where).
Var switch_(const Var& cond, const Var& a, const Var& b);
Var where(const Var& cond, const Var& a, const Var& b);
// Elemwise{clip}: a limited to [lo, hi] (lo where a < lo, else hi where a > hi).
Var clip(const Var& a, const Var& lo, const Var& hi);
// Elemwise{Cast{dtype}}: a converted to `dtype` (a itself when it already has it).
Var cast(const Var& a, DType dtype);

Var operator+(const Var& a, const Var& b);
Var operator-(const Var& a, const Var& b);
Var operator*(const Var& a, const Var& b);
Var operator/(const Var& a, const Var& b);
Var operator%(const Var& a, const Var& b);
Var operator<(const Var& a, const Var& b);
Var operator>(const Var& a, const Var& b);
Var operator<=(const Var& a, const Var& b);
Var operator>=(const Var& a, const Var& b);
Var operator&(const Var& a, const Var& b);
Var operator|(const Var& a, const Var& b);
Var operator^(const Var& a, const Var& b);
Var operator-(const Var& a);
Var operator~(const Var& a);

// A C++ number on either side becomes a TensorConstant by Aesara's literal rules (see constant()).
template <typename S>
concept Literal = std::is_arithmetic_v<S>;

// The literal as a constant; integers go through int64_t, long double through double.
template <Literal S>
Var literal(S value) {
  if constexpr (std::is_same_v<S, bool> || std::is_same_v<S, float> || std::is_same_v<S, double>) {
    return constant(value);
  } else if constexpr (std::is_floating_point_v<S>) {
    return constant(static_cast<double>(value));
  } else {
    return constant(static_cast<int64_t>(value));
  }
}

#define KILN_LITERAL_OPERATOR(op, fn)  \
  template <Literal S>                 \
  Var operator op(const Var& a, S b) { \
    return fn(a, literal(b));          \
  }                                    \
  template <Literal S>                 \
  Var operator op(S a, const Var& b) { \
    return fn(literal(a), b);          \
  }
KILN_LITERAL_OPERATOR(+, add)
KILN_LITERAL_OPERATOR(-, sub)
KILN_LITERAL_OPERATOR(*, mul)
KILN_LITERAL_OPERATOR(/, true_div)
KILN_LITERAL_OPERATOR(%, mod)
KILN_LITERAL_OPERATOR(<, lt)
KILN_LITERAL_OPERATOR(>, gt)
KILN_LITERAL_OPERATOR(<=, le)
KILN_LITERAL_OPERATOR(>=, ge)
#undef KILN_LITERAL_OPERATOR

template <Literal S>
Var pow(const Var& a, S b) {
  return pow(a, literal(b));
}
template <Literal S>
Var pow(S a, const Var& b) {
  return pow(literal(a), b);
}
template <Literal S>
Var maximum(const Var& a, S b) {
  return maximum(a, literal(b));
}
template <Literal S>
Var minimum(const Var& a, S b) {
  return minimum(a, literal(b));
}
template <Literal L, Literal H>
Var clip(const Var& a, L lo, H hi) {
  return clip(a, literal(lo), literal(hi));
}

}  // namespace kiln

#endif  // KILN_CORE_OPS_MATH_H_
