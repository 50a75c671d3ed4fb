// The elementwise math of aesara.tensor.math as C++ functions and operators on Var.
#ifndef KILN_CORE_OPS_MATH_H_
#define KILN_CORE_OPS_MATH_H_

#include <type_traits>

#include "core/graph/constructors.h"
#include "core/graph/var.h"

namespace kiln {

// Elemwise{add}: a + b (+ c ...), with NumPy broadcasting and Aesara's upcasting.
Var add(const Var& a, const Var& b);
// Elemwise{sub}: a - b.
Var sub(const Var& a, const Var& b);
// Elemwise{mul}: a * b.
Var mul(const Var& a, const Var& b);
// Elemwise{true_div}: a / b; integer inputs give floatX.
Var true_div(const Var& a, const Var& b);
// Elemwise{pow}: a ** b.
Var pow(const Var& a, const Var& b);
// Elemwise{neg}: -a.
Var neg(const Var& a);
// Elemwise{exp}: e ** a; integers give a float.
Var exp(const Var& a);
// Elemwise{log}: the natural logarithm; integers give a float.
Var log(const Var& a);

Var operator+(const Var& a, const Var& b);
Var operator-(const Var& a, const Var& b);
Var operator*(const Var& a, const Var& b);
Var operator/(const Var& a, const Var& b);
Var operator-(const Var& a);

// A C++ number on either side becomes a TensorConstant by Aesara's literal rules (see constant()).
template <typename S>
concept Literal = std::is_arithmetic_v<S>;

// The literal as a constant; 64-bit and smaller integers go through int64_t.
template <Literal S>
Var literal(S value) {
  if constexpr (std::is_same_v<S, bool> || std::is_same_v<S, float> ||
                std::is_same_v<S, double>) {
    return constant(value);
  } else if constexpr (std::is_floating_point_v<S>) {
    return constant(static_cast<double>(value));
  } else {
    return constant(static_cast<int64_t>(value));
  }
}

template <Literal S> Var operator+(const Var& a, S b) { return add(a, literal(b)); }
template <Literal S> Var operator+(S a, const Var& b) { return add(literal(a), b); }
template <Literal S> Var operator-(const Var& a, S b) { return sub(a, literal(b)); }
template <Literal S> Var operator-(S a, const Var& b) { return sub(literal(a), b); }
template <Literal S> Var operator*(const Var& a, S b) { return mul(a, literal(b)); }
template <Literal S> Var operator*(S a, const Var& b) { return mul(literal(a), b); }
template <Literal S> Var operator/(const Var& a, S b) { return true_div(a, literal(b)); }
template <Literal S> Var operator/(S a, const Var& b) { return true_div(literal(a), b); }
template <Literal S> Var pow(const Var& a, S b) { return pow(a, literal(b)); }
template <Literal S> Var pow(S a, const Var& b) { return pow(literal(a), b); }

}  // namespace kiln

#endif  // KILN_CORE_OPS_MATH_H_
