#include "core/ops/math.h"

#include "core/ops/elemwise.h"

namespace kiln {
namespace {

Var ApplyScalar(ScalarOp op, std::vector<Var> inputs) {
  return ApplyOp(Elemwise::Make(op), std::move(inputs));
}

}  // namespace

// The builders math.h declares from the scalar-op table.
#define KILN_BUILDER_unary(e, f) \
  Var f(const Var& a) { return ApplyScalar({ScalarOpKind::e}, {a}); }
#define KILN_BUILDER_binary(e, f) \
  Var f(const Var& a, const Var& b) { return ApplyScalar({ScalarOpKind::e}, {a, b}); }
KILN_SCALAR_OPS(KILN_BUILDER_ROW)
#undef KILN_BUILDER_unary
#undef KILN_BUILDER_binary

Var switch_(const Var& cond, const Var& a, const Var& b) {
  return ApplyScalar({ScalarOpKind::kSwitch}, {cond, a, b});
}

Var where(const Var& cond, const Var& a, const Var& b) { return switch_(cond, a, b); }

Var clip(const Var& a, const Var& lo, const Var& hi) {
  return ApplyScalar({ScalarOpKind::kClip}, {a, lo, hi});
}

Var cast(const Var& a, DType dtype) {
  if (!a.ok() || (a->tensor_type() != nullptr && a.dtype() == dtype)) return a;
  return ApplyScalar({ScalarOpKind::kCast, dtype}, {a});
}

Var operator+(const Var& a, const Var& b) { return add(a, b); }
Var operator-(const Var& a, const Var& b) { return sub(a, b); }
Var operator*(const Var& a, const Var& b) { return mul(a, b); }
Var operator/(const Var& a, const Var& b) { return true_div(a, b); }
Var operator%(const Var& a, const Var& b) { return mod(a, b); }
Var operator<(const Var& a, const Var& b) { return lt(a, b); }
Var operator>(const Var& a, const Var& b) { return gt(a, b); }
Var operator<=(const Var& a, const Var& b) { return le(a, b); }
Var operator>=(const Var& a, const Var& b) { return ge(a, b); }
Var operator&(const Var& a, const Var& b) { return and_(a, b); }
Var operator|(const Var& a, const Var& b) { return or_(a, b); }
Var operator^(const Var& a, const Var& b) { return xor_(a, b); }
Var operator-(const Var& a) { return neg(a); }
Var operator~(const Var& a) { return invert(a); }

}  // namespace kiln
