// The special functions' gradients: Aesara 2.9.4's grad formulas (gammainc, gammaincc, betainc,
// owens_t, jv, iv, hyp2f1), PyTensor's where Aesara has none (tri_gamma, polygamma, ive, kve,
// gammaincinv, gammainccinv, betaincinv); the derivatives wrt parameters are themselves scalar
// ops (gammainc_der, betainc_der, hyp2f1_der) computed by Aesara's series.
#include "core/ops/special_grad.h"

#include <cmath>
#include <numbers>

#include "core/graph/basic.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/ops/math.h"
#include "core/ops/special_fns.h"

namespace kiln {

std::vector<Var> SpecialScalarGrad(ScalarOpKind kind, const std::string& op_name, const Apply& node,
                                   const std::vector<Var>& in, const Var& gz) {
  using K = ScalarOpKind;
  const DType gd = gz.dtype();
  auto c = [&](double v) { return scalar_constant(v, gd); };
  auto not_implemented = [&](int i) { return grad_not_implemented(op_name, i, node.inputs()[i]); };
  switch (kind) {
    case K::kTriGamma:  // PyTensor's: polygamma(2, x)
      return {gz * polygamma(constant(int64_t{2}), in[0])};
    case K::kPolygamma:  // PyTensor's: undefined wrt the order n
      return {grad_undefined(op_name, 0, node.inputs()[0]), gz * polygamma(in[0] + 1, in[1])};
    case K::kOwensT: {
      const Var& h = in[0];
      const Var& a = in[1];
      return {gz * -1 * exp(-sqr(h) / 2) * erf(a * h / c(std::numbers::sqrt2)) /
                  c(2 * std::sqrt(2 * std::numbers::pi)),
              gz * exp(c(-0.5) * (sqr(a) + 1) * sqr(h)) / (c(2 * std::numbers::pi) * (sqr(a) + 1))};
    }
    case K::kGammaInc:
    case K::kGammaIncC: {
      const Var& k = in[0];
      const Var& x = in[1];
      const Var dx = exp(-x + (k - 1) * log(x) - gammaln(k));
      if (kind == K::kGammaInc) return {gz * gammainc_der(k, x), gz * dx};
      return {gz * gammaincc_der(k, x), gz * -dx};
    }
    case K::kGammaIncInv:
    case K::kGammaIncCInv: {  // PyTensor's: 1 / (dP/dy) at y = the inverse
      const Var& k = in[0];
      const Var y = kind == K::kGammaIncInv ? gammaincinv(k, in[1]) : gammainccinv(k, in[1]);
      const Var d = exp(y) * gamma(k) * pow(y, 1 - k);
      return {not_implemented(0), kind == K::kGammaIncInv ? gz * d : gz * -d};
    }
    case K::kBetaInc: {
      const Var& a = in[0];
      const Var& b = in[1];
      const Var& x = in[2];
      return {gz * betainc_der(a, b, x, constant(true)), gz * betainc_der(a, b, x, constant(false)),
              gz * exp(log1p(-x) * (b - 1) + log(x) * (a - 1) -
                       (gammaln(a) + gammaln(b) - gammaln(a + b)))};
    }
    case K::kBetaIncInv: {  // PyTensor's
      const Var& a = in[0];
      const Var& b = in[1];
      const Var y = betaincinv(a, b, in[2]);
      return {not_implemented(0), not_implemented(1),
              gz * exp(betaln(a, b) + (1 - a) * log(y) + (1 - b) * log1p(-y))};
    }
    case K::kJv:
      return {not_implemented(0), gz * (jv(in[0] - 1, in[1]) - jv(in[0] + 1, in[1])) / 2.0};
    case K::kIv:
      return {not_implemented(0), gz * (iv(in[0] - 1, in[1]) + iv(in[0] + 1, in[1])) / 2.0};
    case K::kIve: {  // PyTensor's
      const Var& v = in[0];
      const Var& x = in[1];
      return {not_implemented(0),
              gz * (ive(v - 1, x) - 2.0 * sgn(x) * ive(v, x) + ive(v + 1, x)) / 2.0};
    }
    case K::kKve: {  // d/dx K_v(x) e^x = kve(v, x) (1 - v / x) - kve(v - 1, x)
      const Var& v = in[0];
      const Var& x = in[1];
      return {not_implemented(0), gz * (kve(v, x) * (1 - v / x) - kve(v - 1, x))};
    }
    case K::kHyp2F1: {
      const Var& a = in[0];
      const Var& b = in[1];
      const Var& cc = in[2];
      const Var& z = in[3];
      return {gz * hyp2f1_der(a, b, cc, z, constant(int64_t{0})),
              gz * hyp2f1_der(a, b, cc, z, constant(int64_t{1})),
              gz * hyp2f1_der(a, b, cc, z, constant(int64_t{2})),
              gz * ((a * b) / cc) * hyp2f1(a + 1, b + 1, cc + 1, z)};
    }
    default: {  // gammainc_der, gammaincc_der, gammau, gammal, betainc_der, hyp2f1_der: none
      std::vector<Var> grads;
      for (size_t i = 0; i < in.size(); ++i) grads.push_back(not_implemented(static_cast<int>(i)));
      return grads;
    }
  }
}

}  // namespace kiln
