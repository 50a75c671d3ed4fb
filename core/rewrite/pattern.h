// A small pattern language over graphs: m::Mul(m::Any(&x), m::Const(1)) matches x * 1 and binds
// x. Patterns match a variable by the Elemwise that computes it; commutative binary ops (add,
// mul) try both orders.
#ifndef KILN_CORE_REWRITE_PATTERN_H_
#define KILN_CORE_REWRITE_PATTERN_H_

#include <functional>
#include <optional>
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

class Pattern {
 public:
  explicit Pattern(std::function<bool(const VariablePtr&)> match) : match_(std::move(match)) {}
  bool Match(const VariablePtr& v) const { return match_(v); }

 private:
  std::function<bool(const VariablePtr&)> match_;
};

// Any variable, bound to *bind when given.
Pattern Any(VariablePtr* bind = nullptr);
// A constant whose elements all equal `value`.
Pattern Const(double value);
// Any constant with a single value, bound to *value.
Pattern AnyConst(double* value = nullptr);
// v computed by Elemwise{kind} from inputs matching `args` in order (commutative two-input add
// and mul also in the other order); binds the node to *node when given.
Pattern Op(ScalarOpKind kind, std::vector<Pattern> args, Apply** node = nullptr);

#define KILN_PATTERN_UNARY(name, kind) \
  inline Pattern name(Pattern a) { return Op(ScalarOpKind::kind, {std::move(a)}); }
#define KILN_PATTERN_BINARY(name, kind)                          \
  inline Pattern name(Pattern a, Pattern b) {                    \
    return Op(ScalarOpKind::kind, {std::move(a), std::move(b)}); \
  }
KILN_PATTERN_BINARY(Add, kAdd)
KILN_PATTERN_BINARY(Sub, kSub)
KILN_PATTERN_BINARY(Mul, kMul)
KILN_PATTERN_BINARY(TrueDiv, kTrueDiv)
KILN_PATTERN_BINARY(Pow, kPow)
KILN_PATTERN_UNARY(Neg, kNeg)
KILN_PATTERN_UNARY(Exp, kExp)
KILN_PATTERN_UNARY(Log, kLog)
KILN_PATTERN_UNARY(Sigmoid, kSigmoid)
KILN_PATTERN_UNARY(Erfc, kErfc)
#undef KILN_PATTERN_UNARY
#undef KILN_PATTERN_BINARY

}  // namespace m
}  // namespace kiln

#endif  // KILN_CORE_REWRITE_PATTERN_H_
