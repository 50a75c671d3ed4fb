#include "core/ops/math.h"

#include "core/ops/elemwise.h"

namespace kiln {
namespace {

Var ApplyScalar(ScalarOpKind op, std::vector<Var> inputs) {
  return ApplyOp(Elemwise::Make(op), std::move(inputs));
}

}  // namespace

Var add(const Var& a, const Var& b) { return ApplyScalar(ScalarOpKind::kAdd, {a, b}); }
Var sub(const Var& a, const Var& b) { return ApplyScalar(ScalarOpKind::kSub, {a, b}); }
Var mul(const Var& a, const Var& b) { return ApplyScalar(ScalarOpKind::kMul, {a, b}); }
Var true_div(const Var& a, const Var& b) { return ApplyScalar(ScalarOpKind::kTrueDiv, {a, b}); }
Var pow(const Var& a, const Var& b) { return ApplyScalar(ScalarOpKind::kPow, {a, b}); }
Var neg(const Var& a) { return ApplyScalar(ScalarOpKind::kNeg, {a}); }
Var exp(const Var& a) { return ApplyScalar(ScalarOpKind::kExp, {a}); }
Var log(const Var& a) { return ApplyScalar(ScalarOpKind::kLog, {a}); }

Var operator+(const Var& a, const Var& b) { return add(a, b); }
Var operator-(const Var& a, const Var& b) { return sub(a, b); }
Var operator*(const Var& a, const Var& b) { return mul(a, b); }
Var operator/(const Var& a, const Var& b) { return true_div(a, b); }
Var operator-(const Var& a) { return neg(a); }

}  // namespace kiln
