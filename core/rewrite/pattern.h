// A small pattern language over graphs: m::Mul(m::Any(&x), m::Const(1)) matches x * 1 and binds
// x. Patterns match a variable by the op that computes it: an Elemwise's scalar op (commutative
// binary ops such as add and mul try both orders) or any op class (m::Op<Softmax>). Matching
// allocates nothing. A pattern also tells what its root matches (AddRoots), which is what a rule
// written as a pattern is indexed by.
#ifndef KILN_CORE_REWRITE_PATTERN_H_
#define KILN_CORE_REWRITE_PATTERN_H_

#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "core/graph/basic.h"
#include "core/graph/op.h"
#include "core/ops/scalar_op.h"

namespace kiln {

// The single value of a constant all of whose elements are equal (through DimShuffle and fill,
// as Aesara's get_scalar_constant_value), or nullopt.
std::optional<double> ScalarConstantValue(const Variable& v);

// The scalar op of the Elemwise computing v, or nullopt.
std::optional<ScalarOpKind> ElemwiseKind(const Variable& v);

// What a pattern's root matches: the op classes of the nodes it can match and, for Elemwise,
// its scalar ops (empty: every one); `any` when it can match any variable.
struct PatternRoots {
  std::vector<OpClassId> classes;
  std::vector<ScalarOpKind> scalar_ops;
  bool any = false;
};
// Adds the Elemwise of scalar op `kind` to `roots`.
void AddElemwiseRoot(ScalarOpKind kind, PatternRoots& roots);

namespace m {

// Patterns are small values built where they are matched (no allocation, no type erasure):
// each has `bool Match(const VariablePtr&) const` and `void AddRoots(PatternRoots&) const`.

// Any variable, bound to *bind when given.
class Any {
 public:
  explicit Any(VariablePtr* bind = nullptr) : bind_(bind) {}
  bool Match(const VariablePtr& v) const {
    if (bind_ != nullptr) *bind_ = v;
    return true;
  }
  void AddRoots(PatternRoots& roots) const { roots.any = true; }

 private:
  VariablePtr* bind_;
};

// A constant whose elements all equal `value`.
class Const {
 public:
  explicit Const(double value) : value_(value) {}
  bool Match(const VariablePtr& v) const;
  void AddRoots(PatternRoots& roots) const { roots.any = true; }

 private:
  double value_;
};

// Any constant with a single value, bound to *value when given.
class AnyConst {
 public:
  explicit AnyConst(double* value = nullptr) : value_(value) {}
  bool Match(const VariablePtr& v) const;
  void AddRoots(PatternRoots& roots) const { roots.any = true; }

 private:
  double* value_;
};

// v computed by Elemwise{kind} from inputs matching `args` in order (a commutative two-input op
// such as add or mul also in the other order).
template <typename... Args>
class Scalar {
 public:
  Scalar(ScalarOpKind kind, Args... args) : kind_(kind), args_(std::move(args)...) {}
  void AddRoots(PatternRoots& roots) const { AddElemwiseRoot(kind_, roots); }
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

// v computed by an op of class T (its node bound to *node when given) from inputs matching
// `args` in order: m::Op<Softmax>(&node, m::Any(&x)).
template <typename T, typename... Args>
class OfClass {
 public:
  explicit OfClass(const Apply** node, Args... args) : node_(node), args_(std::move(args)...) {}
  bool Match(const VariablePtr& v) const {
    const Apply* owner = v->owner();
    if (owner == nullptr || !owner->op().Is<T>()) return false;
    if (owner->num_inputs() != static_cast<int>(sizeof...(Args))) return false;
    if (!InOrder(owner->inputs(), std::index_sequence_for<Args...>{})) return false;
    if (node_ != nullptr) *node_ = owner;
    return true;
  }
  void AddRoots(PatternRoots& roots) const { roots.classes.push_back(OpClassIdOf<T>()); }

 private:
  template <size_t... I>
  bool InOrder(const std::vector<VariablePtr>& in, std::index_sequence<I...>) const {
    return (std::get<I>(args_).Match(in[I]) && ...);
  }

  const Apply** node_;
  std::tuple<Args...> args_;
};
template <typename T, typename... Args>
OfClass<T, Args...> Op(const Apply** node, Args... args) {
  return OfClass<T, Args...>(node, std::move(args)...);
}

// v matching any of the alternatives, tried in order (their bindings are those of the first
// that matches).
template <typename... Alternatives>
class AnyOf {
 public:
  explicit AnyOf(Alternatives... alternatives) : alternatives_(std::move(alternatives)...) {}
  bool Match(const VariablePtr& v) const {
    return std::apply([&](const auto&... a) { return (a.Match(v) || ...); }, alternatives_);
  }
  void AddRoots(PatternRoots& roots) const {
    std::apply([&](const auto&... a) { (a.AddRoots(roots), ...); }, alternatives_);
  }

 private:
  std::tuple<Alternatives...> alternatives_;
};

#define KILN_PATTERN_UNARY(name, kind)                  \
  template <typename A>                                 \
  Scalar<A> name(A a) {                                 \
    return Scalar<A>(ScalarOpKind::kind, std::move(a)); \
  }
#define KILN_PATTERN_BINARY(name, kind)                                  \
  template <typename A, typename B>                                      \
  Scalar<A, B> name(A a, B b) {                                          \
    return Scalar<A, B>(ScalarOpKind::kind, std::move(a), std::move(b)); \
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
