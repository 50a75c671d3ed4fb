// A small pattern language over graphs: m::Mul(m::Any(&x), m::Const(1)) matches x * 1 and binds
// x. Patterns match a variable by the Elemwise that computes it; commutative binary ops (add,
// mul) try both orders. Matching allocates nothing.
#ifndef KILN_CORE_REWRITE_PATTERN_H_
#define KILN_CORE_REWRITE_PATTERN_H_

#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "core/graph/basic.h"
#include "core/ops/scalar_op.h"

namespace kiln {

// The single value of a constant all of whose elements are equal (through DimShuffle and fill,
// as Aesara's get_scalar_constant_value), or nullopt.
std::optional<double> ScalarConstantValue(const Variable& v);

// The scalar op of the Elemwise computing v, or nullopt.
std::optional<ScalarOpKind> ElemwiseKind(const Variable& v);

namespace m {

// Patterns are small values built where they are matched (no allocation, no type erasure):
// each has `bool Match(const VariablePtr&) const`.

// Any variable, bound to *bind when given.
class Any {
 public:
  explicit Any(VariablePtr* bind = nullptr) : bind_(bind) {}
  bool Match(const VariablePtr& v) const {
    if (bind_ != nullptr) *bind_ = v;
    return true;
  }

 private:
  VariablePtr* bind_;
};

// A constant whose elements all equal `value`.
class Const {
 public:
  explicit Const(double value) : value_(value) {}
  bool Match(const VariablePtr& v) const;

 private:
  double value_;
};

// Any constant with a single value, bound to *value when given.
class AnyConst {
 public:
  explicit AnyConst(double* value = nullptr) : value_(value) {}
  bool Match(const VariablePtr& v) const;

 private:
  double* value_;
};

// v computed by Elemwise{kind} from inputs matching `args` in order (a commutative two-input op
// such as add or mul also in the other order).
template <typename... Args>
class Op {
 public:
  Op(ScalarOpKind kind, Args... args) : kind_(kind), args_(std::move(args)...) {}
  bool Match(const VariablePtr& v) const {
    if (ElemwiseKind(*v) != kind_) return false;
    const std::vector<VariablePtr>& in = v->owner()->inputs();
    if (in.size() != sizeof...(Args)) return false;
    if (InOrder(in, std::index_sequence_for<Args...>{})) return true;
    if constexpr (sizeof...(Args) == 2) {
      return ScalarOpAlgebra(kind_).commutative && std::get<0>(args_).Match(in[1]) &&
             std::get<1>(args_).Match(in[0]);
    }
    return false;
  }

 private:
  template <size_t... I>
  bool InOrder(const std::vector<VariablePtr>& in, std::index_sequence<I...>) const {
    return (std::get<I>(args_).Match(in[I]) && ...);
  }

  ScalarOpKind kind_;
  std::tuple<Args...> args_;
};

#define KILN_PATTERN_UNARY(name, kind)              \
  template <typename A>                             \
  Op<A> name(A a) {                                 \
    return Op<A>(ScalarOpKind::kind, std::move(a)); \
  }
#define KILN_PATTERN_BINARY(name, kind)                              \
  template <typename A, typename B>                                  \
  Op<A, B> name(A a, B b) {                                          \
    return Op<A, B>(ScalarOpKind::kind, std::move(a), std::move(b)); \
  }
KILN_PATTERN_BINARY(Add, kAdd)
KILN_PATTERN_BINARY(Sub, kSub)
KILN_PATTERN_BINARY(Mul, kMul)
KILN_PATTERN_BINARY(TrueDiv, kTrueDiv)
KILN_PATTERN_BINARY(Pow, kPow)
KILN_PATTERN_UNARY(Neg, kNeg)
KILN_PATTERN_UNARY(Exp, kExp)
KILN_PATTERN_UNARY(Expm1, kExpm1)
KILN_PATTERN_UNARY(Log, kLog)
KILN_PATTERN_UNARY(Sigmoid, kSigmoid)
KILN_PATTERN_UNARY(Erfc, kErfc)
KILN_PATTERN_UNARY(Sqr, kSqr)
KILN_PATTERN_UNARY(Sqrt, kSqrt)
#undef KILN_PATTERN_UNARY
#undef KILN_PATTERN_BINARY

}  // namespace m
}  // namespace kiln

#endif  // KILN_CORE_REWRITE_PATTERN_H_
