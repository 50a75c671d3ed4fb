// The special-function scalar ops (Aesara's aesara.scalar.math and PyTensor's additions): which
// kinds they are, their Elemwise kernel, and the builders of aesara.tensor.math for them.
#ifndef KILN_CORE_OPS_SPECIAL_FNS_H_
#define KILN_CORE_OPS_SPECIAL_FNS_H_

#include <span>
#include <string>

#include "absl/status/status.h"
#include "core/graph/var.h"
#include "core/ops/scalar_op.h"
#include "core/tensor/tensor.h"

namespace kiln {

// True for the scalar ops whose kernels live in special_kernels.cc (tri_gamma ... hyp2f1_der).
constexpr bool IsSpecialFn(ScalarOpKind k) {
  return k >= ScalarOpKind::kTriGamma && k <= ScalarOpKind::kHyp2F1Der;
}

// Applies special function `kind` to inputs already in `compute` (float32 or float64),
// broadcast to `shape`; `name` prefixes errors.
absl::Status RunSpecialFn(ScalarOpKind kind, const std::string& name, DType compute,
                          std::span<const Tensor> in, const Shape& shape, Tensor& out);

// Elemwise{betainc}: the regularized incomplete beta function I_x(a, b).
Var betainc(const Var& a, const Var& b, const Var& x);
// Elemwise{betainc_der}: d betainc / da (wrt_a true) or d / db (false), Boik and Robison-Cox's
// continued fraction.
Var betainc_der(const Var& a, const Var& b, const Var& x, const Var& wrt_a);
// Elemwise{betaincinv}: the x with betainc(a, b, x) == y.
Var betaincinv(const Var& a, const Var& b, const Var& y);
// Elemwise{hyp2f1}: the Gauss hypergeometric function 2F1(a, b; c; z).
Var hyp2f1(const Var& a, const Var& b, const Var& c, const Var& z);
// Elemwise{hyp2f1_der}: d hyp2f1 / d(a, b or c) for wrt = 0, 1 or 2 (Stan's grad_2F1 series).
Var hyp2f1_der(const Var& a, const Var& b, const Var& c, const Var& z, const Var& wrt);
// log(beta(a, b)) = gammaln(a) + gammaln(b) - gammaln(a + b) (PyTensor's betaln).
Var betaln(const Var& a, const Var& b);
// log(x / (1 - x)) (PyTensor's logit).
Var logit(const Var& x);
// gamma(z + m) / gamma(z), the rising factorial (PyTensor's poch).
Var poch(const Var& z, const Var& m);
// gamma(n + 1) (PyTensor's factorial).
Var factorial(const Var& n);
// The modified Bessel function of the second kind, kve(v, x) * exp(-x) (PyTensor's kv).
Var kv(const Var& v, const Var& x);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SPECIAL_FNS_H_
