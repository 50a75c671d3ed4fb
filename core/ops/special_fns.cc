// The builders of the special functions that are not one binary or unary scalar op: the
// three-, four- and five-input Elemwises and the functions PyTensor writes from other ops.
#include "core/ops/special_fns.h"

#include <vector>

#include "core/ops/elemwise.h"
#include "core/ops/math.h"

namespace kiln {
namespace {

Var ApplySpecial(ScalarOpKind kind, std::vector<Var> inputs) {
  return ApplyOp(Elemwise::Make(ScalarOp(kind)), std::move(inputs));
}

}  // namespace

Var betainc(const Var& a, const Var& b, const Var& x) {
  return ApplySpecial(ScalarOpKind::kBetaInc, {a, b, x});
}

Var betainc_der(const Var& a, const Var& b, const Var& x, const Var& wrt_a) {
  return ApplySpecial(ScalarOpKind::kBetaIncDer, {a, b, x, wrt_a});
}

Var betaincinv(const Var& a, const Var& b, const Var& y) {
  return ApplySpecial(ScalarOpKind::kBetaIncInv, {a, b, y});
}

Var hyp2f1(const Var& a, const Var& b, const Var& c, const Var& z) {
  return ApplySpecial(ScalarOpKind::kHyp2F1, {a, b, c, z});
}

Var hyp2f1_der(const Var& a, const Var& b, const Var& c, const Var& z, const Var& wrt) {
  return ApplySpecial(ScalarOpKind::kHyp2F1Der, {a, b, c, z, wrt});
}

Var betaln(const Var& a, const Var& b) { return gammaln(a) + gammaln(b) - gammaln(a + b); }

Var logit(const Var& x) { return log(x / (1 - x)); }

Var poch(const Var& z, const Var& m) { return gamma(z + m) / gamma(z); }

Var factorial(const Var& n) { return gamma(n + 1); }

Var kv(const Var& v, const Var& x) { return kve(v, x) * exp(-x); }

}  // namespace kiln
