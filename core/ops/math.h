// The elementwise math of aesara.tensor.math as C++ functions and operators on Var.
#ifndef KILN_CORE_OPS_MATH_H_
#define KILN_CORE_OPS_MATH_H_

#include <type_traits>

#include "core/graph/constructors.h"
#include "core/graph/var.h"
#include "core/ops/scalar_op.h"

namespace kiln {

// The elementwise functions of aesara.tensor that are one scalar op each, named as there (abs,
// exp, add, true_div, and_, second: Aesara's fill...), declared from the builder column of the
// scalar-op table (core/ops/scalar_op.h): U(f) is Var f(const Var&), B(f) Var f(const Var&,
// const Var&). KILN_BUILDER_ROW turns a row into KILN_BUILDER_<unary|binary|none>(enum, f).
#define KILN_BUILDER_FORM_U(f) unary, f
#define KILN_BUILDER_FORM_B(f) binary, f
#define KILN_BUILDER_FORM_N() none, _
#define KILN_BUILDER_ROW(e, name, arity, rule, complex_ok, algebra, builder, ...) \
  KILN_BUILDER_ROW_(e, KILN_BUILDER_FORM_##builder)
#define KILN_BUILDER_ROW_(e, form) KILN_BUILDER_ROW_FORM(e, form)
#define KILN_BUILDER_ROW_FORM(e, form, f) KILN_BUILDER_##form(e, f)
#define KILN_BUILDER_unary(e, f) Var f(const Var& a);
#define KILN_BUILDER_binary(e, f) Var f(const Var& a, const Var& b);
#define KILN_BUILDER_none(e, f)
KILN_SCALAR_OPS(KILN_BUILDER_ROW)
#undef KILN_BUILDER_unary
#undef KILN_BUILDER_binary

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
