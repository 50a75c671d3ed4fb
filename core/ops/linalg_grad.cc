// Gradients of the products: Dot for every vector/matrix combination, MatMul with broadcast
// batch dims, Dot22, Gemm and Gemv.
#include "core/graph/gradient_types.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/grad_util.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"

namespace kiln {
namespace {

// x with its last two dims swapped.
Var SwapLast(const Var& x) {
  std::vector<int> order;
  for (int d = 0; d < x.ndim(); ++d) order.push_back(d);
  std::swap(order[x.ndim() - 1], order[x.ndim() - 2]);
  return dimshuffle(x, order);
}

// The gradients of x @ y for matmul semantics (1-D operands promoted and demoted as NumPy does;
// batch dims broadcast and summed back).
std::vector<Var> MatMulGrad(const Var& x, const Var& y, const Var& gz) {
  if (x.ndim() == 1 && y.ndim() == 1) return {gz * y, gz * x};
  const Var xm = x.ndim() == 1 ? dimshuffle(x, {kX, 0}) : x;
  const Var ym = y.ndim() == 1 ? dimshuffle(y, {0, kX}) : y;
  Var g = gz;
  if (x.ndim() == 1) g = expand_dims(g, g.ndim() - (y.ndim() == 1 ? 0 : 1));
  if (y.ndim() == 1) g = expand_dims(g, g.ndim());
  Var gx = SumToShapeOf(matmul(g, SwapLast(ym)), xm);
  Var gy = SumToShapeOf(matmul(SwapLast(xm), g), ym);
  if (x.ndim() == 1) gx = dimshuffle(gx, {1});
  if (y.ndim() == 1) gy = dimshuffle(gy, {0});
  return {gx, gy};
}

}  // namespace

std::vector<Var> ProductOp::LOp(const Apply& node, const std::vector<Var>& g) const {
  const std::vector<Var> in = InputVars(node);
  const Var& gz = g[0];
  for (const Var& v : in) {
    if (IsDiscreteVar(v) || IsComplex(v.dtype())) {
      return PerInput(node, [&](int i) {
        return grad_not_implemented(Name(), i, node.inputs()[i],
                                    "Products are differentiable for float inputs only.");
      });
    }
  }
  switch (kind_) {
    case OpKind::kDot: {
      const Var &x = in[0], &y = in[1];
      if (x.ndim() == 1 && y.ndim() == 1) return {gz * y, gz * x};
      if (x.ndim() == 1) return {dot(gz, transpose(y)), outer(x, gz)};
      if (y.ndim() == 1) return {outer(gz, y), dot(transpose(x), gz)};
      return {dot(gz, transpose(y)), dot(transpose(x), gz)};
    }
    case OpKind::kDot22:
      return {dot(gz, transpose(in[1])), dot(transpose(in[0]), gz)};
    case OpKind::kMatMul:
      return MatMulGrad(in[0], in[1], gz);
    case OpKind::kGemm: {
      // b*z + a*x@y.
      const Var &z = in[0], &a = in[1], &x = in[2], &y = in[3], &b = in[4];
      return {b * gz, sum(gz * dot(x, y)), a * dot(gz, transpose(y)), a * dot(transpose(x), gz),
              sum(gz * z)};
    }
    case OpKind::kGemv: {
      // beta*y + alpha*A@x.
      const Var &y = in[0], &alpha = in[1], &A = in[2], &x = in[3], &beta = in[4];
      return {beta * gz, sum(gz * dot(A, x)), alpha * outer(gz, x), alpha * dot(transpose(A), gz),
              sum(gz * y)};
    }
    default:
      return Op::LOp(node, g);
  }
}

}  // namespace kiln
