// Elemwise's gradient: each scalar op's rule (Aesara's scalar grad formulas) applied to tensors,
// then summed over the dims the input was broadcast along.
#include <cmath>
#include <numbers>

#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/ops/alloc.h"
#include "core/ops/elemwise.h"
#include "core/ops/grad_util.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/special_fns.h"
#include "core/ops/special_grad.h"

namespace kiln {
namespace {

using K = ScalarOpKind;

// The scalar rule of one op: the gradient with respect to each input, given the inputs, the
// output z and its gradient gz (both continuous).
std::vector<Var> ScalarRule(const Elemwise& op, const Apply& node, const std::vector<Var>& in,
                            const Var& z, const Var& gz) {
  const DType gd = gz.dtype();
  auto c = [&](double v) { return scalar_constant(v, gd); };
  const Var& x = in[0];
  const double two_over_sqrt_pi = 2.0 / std::sqrt(std::numbers::pi);
  switch (op.scalar_op().kind) {
    case K::kSwitch:
      return {FloatZerosLike(in[0]), switch_(in[0], gz, c(0)), switch_(in[0], c(0), gz)};
    case K::kMaximum:
    case K::kMinimum: {
      const Var e = eq(z, x);
      return {e * gz, (c(1) - e) * gz};
    }
    case K::kAdd:
      return std::vector<Var>(in.size(), gz);
    case K::kSub:
      return {gz, -gz};
    case K::kMul: {
      std::vector<Var> grads;
      for (size_t i = 0; i < in.size(); ++i) {
        Var g = gz;
        for (size_t j = 0; j < in.size(); ++j) {
          if (j != i) g = g * in[j];
        }
        grads.push_back(g);
      }
      return grads;
    }
    case K::kTrueDiv: {
      const Var& y = in[1];
      if (IsDiscreteVar(x) && IsDiscreteVar(y)) return {FloatZerosLike(x), FloatZerosLike(y)};
      return {gz / y, -(gz * x) / (y * y)};
    }
    case K::kIntDiv:
      return {FloatZerosLike(x), FloatZerosLike(in[1])};
    case K::kMod:
      return {gz, -int_div(x, in[1]) * gz};
    case K::kPow: {
      const Var& y = in[1];
      // y - 1 with a Python-int 1 (int8), as Aesara writes it: pp shows x ** (2 - 1).
      return {gz * y * pow(x, y - 1), switch_(eq(x, c(0)), c(0), gz * log(x) * pow(x, y))};
    }
    case K::kClip: {
      const Var& lo = in[1];
      const Var& hi = in[2];
      return {((x >= lo) & (x <= hi)) * gz, (x < lo) * gz, (x > hi) * gz};
    }
    case K::kAbs:
      return {gz * sgn(x)};
    case K::kSgn:
    case K::kCeil:
    case K::kFloor:
    case K::kTrunc:
    case K::kRoundHalfToEven:
    case K::kRoundHalfAwayFromZero:
      return {FloatZerosLike(x)};
    case K::kNeg:
      return {-gz};
    case K::kReciprocal:
      return {-gz / (x * x)};
    case K::kLog:
      return {gz / x};
    case K::kLog2:
      return {gz / (x * c(std::numbers::ln2))};
    case K::kLog10:
      return {gz / (x * c(std::numbers::ln10))};
    case K::kLog1p:
      return {gz / (c(1) + x)};
    case K::kExp:
    case K::kExpm1:
      return {gz * exp(x)};
    case K::kExp2:
      return {gz * exp2(x) * c(std::numbers::ln2)};
    case K::kSqr:
      return {gz * x * c(2)};
    case K::kSqrt:
      return {(gz * c(0.5)) / sqrt(x)};
    case K::kDeg2Rad:
      return {gz * c(std::numbers::pi / 180.0)};
    case K::kRad2Deg:
      return {gz * c(180.0 / std::numbers::pi)};
    case K::kCos:
      return {-gz * sin(x)};
    case K::kArccos:
      return {-gz / sqrt(c(1) - sqr(x))};
    case K::kSin:
      return {gz * cos(x)};
    case K::kArcsin:
      return {gz / sqrt(c(1) - sqr(x))};
    case K::kTan:
      return {gz / sqr(cos(x))};
    case K::kArctan:
      return {gz / (c(1) + sqr(x))};
    case K::kArctan2: {
      // arctan2(y, x): inputs are (y, x).
      const Var& y = in[0];
      const Var& xx = in[1];
      const Var r2 = sqr(xx) + sqr(y);
      return {gz * xx / r2, gz * -y / r2};
    }
    case K::kCosh:
      return {gz * sinh(x)};
    case K::kArccosh:
      return {gz / sqrt(sqr(x) - c(1))};
    case K::kSinh:
      return {gz * cosh(x)};
    case K::kArcsinh:
      return {gz / sqrt(sqr(x) + c(1))};
    case K::kTanh:
      return {gz * (c(1) - sqr(z))};
    case K::kArctanh:
      return {gz / (c(1) - sqr(x))};
    case K::kErf:
      return {gz * c(two_over_sqrt_pi) * exp(-x * x)};
    case K::kErfc:
      return {-gz * c(two_over_sqrt_pi) * exp(-x * x)};
    case K::kErfcx:
      return {gz * (-c(two_over_sqrt_pi) + (c(2) * x) * erfcx(x))};
    case K::kErfinv:
      return {gz * c(std::sqrt(std::numbers::pi) / 2) * exp(sqr(erfinv(x)))};
    case K::kErfcinv:
      return {-gz * c(std::sqrt(std::numbers::pi) / 2) * exp(sqr(erfcinv(x)))};
    case K::kGamma:
      return {gz * gamma(x) * psi(x)};
    case K::kGammaln:
      return {gz * psi(x)};
    case K::kPsi:  // PyTensor's (Aesara 2.9.4 had no tri_gamma kernel to use)
      return {gz * tri_gamma(x)};
    case K::kJ0:  // j0' = -j1
      return {-gz * j1(x)};
    case K::kJ1:  // j1' = j0 - j1 / x, whose limit at 0 is 1/2
      return {gz * switch_(eq(x, c(0)), c(0.5), j0(x) - j1(x) / x)};
    case K::kXlogX:  // Aesara's: 1 + log(x), -inf at 0
      return {gz * (c(1) + log(x))};
    case K::kXlogY0: {  // Aesara's: log(y) and x / y
      const Var& y = in[1];
      return {gz * log(y), gz * x / y};
    }
    case K::kI0:  // i0' = i1
      return {gz * i1(x)};
    case K::kI1:  // i1' = (i0 + iv(2, x)) / 2 (Aesara's) = i0 - i1 / x, whose limit at 0 is 1/2
      return {gz * switch_(eq(x, c(0)), c(0.5), i0(x) - i1(x) / x)};
    case K::kSigmoid: {
      const Var& y = z;  // the forward output itself (Aesara recomputes it; merge would unite them)
      return {gz * y * (c(1) - y)};
    }
    case K::kSoftplus:
      return {gz * sigmoid(x)};
    case K::kLog1mexp: {
      const Var r = c(-1) / expm1(-x);
      return {gz * switch_(isinf(r), c(-INFINITY), r)};
    }
    case K::kIdentity:
    case K::kReal:
    case K::kCast:
      return {IsDiscreteVar(x) ? FloatZerosLike(x) : gz};
    case K::kSecond:
      return {disconnected_type(), gz};
    case K::kImag:
    case K::kConj:
    case K::kAngle:
      return {FloatZerosLike(x)};
    default:
      if (IsSpecialFn(op.scalar_op().kind)) {  // special_grad.cc
        return SpecialScalarGrad(op.scalar_op().kind, op.Name(), node, in, gz);
      }
      break;
  }
  return PerInput(node,
                  [&](int i) { return grad_not_implemented(op.Name(), i, node.inputs()[i]); });
}

}  // namespace

std::vector<std::vector<bool>> Elemwise::ConnectionPattern(const Apply& node) const {
  std::vector<std::vector<bool>> pattern(node.num_inputs(),
                                         std::vector<bool>(node.num_outputs(), true));
  if (scalar_op_.kind == K::kSecond) pattern[0][0] = false;
  return pattern;
}

std::vector<Var> Elemwise::LOp(const Apply& node, const std::vector<Var>& output_grads) const {
  std::vector<Var> in(node.inputs().begin(), node.inputs().end());
  const int n = node.num_inputs();
  bool discrete_output = false;
  for (int o = 0; o < node.num_outputs(); ++o) discrete_output |= IsDiscreteVar(node.output(o));
  // Integer and bool results carry no gradient: zeros (floatX for discrete inputs).
  if (discrete_output) {
    return PerInput(node, [&](int i) {
      return scalar_op_.kind == K::kSecond && i == 0 ? disconnected_type() : FloatZerosLike(in[i]);
    });
  }
  bool complex = IsComplex(output_grads[0].dtype());
  for (const Var& v : in) complex |= IsComplex(v.dtype());
  if (complex || scalar_op_.kind == K::kComposite) {
    return PerInput(node, [&](int i) {
      return grad_not_implemented(Name(), i, node.inputs()[i],
                                  complex ? "Gradients of complex values are not implemented."
                                          : "grad is not implemented for Composite");
    });
  }
  std::vector<Var> grads = ScalarRule(*this, node, in, Var(node.output(0)), output_grads[0]);
  // Sum each gradient over the dims its input was broadcast along.
  const StaticShape& out_shape = node.output_ptr(0)->tensor_type()->shape();
  for (int i = 0; i < n; ++i) {
    if (!grads[i].ok() || IsNullType(*grads[i]) || IsDisconnected(*grads[i])) continue;
    const StaticShape& in_shape = in[i].type().shape();
    std::vector<int> to_sum;
    for (size_t d = 0; d < in_shape.size(); ++d) {
      if (in_shape[d] == StaticDim(1) && out_shape[d] != StaticDim(1)) {
        to_sum.push_back(static_cast<int>(d));
      }
    }
    if (!to_sum.empty()) grads[i] = sum(grads[i], to_sum, /*keepdims=*/true);
  }
  return grads;
}

}  // namespace kiln
