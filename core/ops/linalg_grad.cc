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

// The gradients when every input is a float tensor; otherwise each is not implemented.
template <typename F>
std::vector<Var> FloatProductGrad(const Op& op, const Apply& node, F grads) {
  const std::vector<Var> in = InputVars(node);
  for (const Var& v : in) {
    if (IsDiscreteVar(v) || IsComplex(v.dtype())) {
      return PerInput(node, [&](int i) {
        return grad_not_implemented(op.Name(), i, node.inputs()[i],
                                    "Products are differentiable for float inputs only.");
      });
    }
  }
  return grads(in);
}

}  // namespace

std::vector<Var> Dot::LOp(const Apply& node, const std::vector<Var>& g) const {
  return FloatProductGrad(*this, node, [&](const std::vector<Var>& in) -> std::vector<Var> {
    const Var &x = in[0], &y = in[1], &gz = g[0];
    if (x.ndim() == 1 && y.ndim() == 1) return {gz * y, gz * x};
    if (x.ndim() == 1) return {dot(gz, transpose(y)), outer(x, gz)};
    if (y.ndim() == 1) return {outer(gz, y), dot(transpose(x), gz)};
    return {dot(gz, transpose(y)), dot(transpose(x), gz)};
  });
}

std::vector<Var> Dot22::LOp(const Apply& node, const std::vector<Var>& g) const {
  return FloatProductGrad(*this, node, [&](const std::vector<Var>& in) -> std::vector<Var> {
    return {dot(g[0], transpose(in[1])), dot(transpose(in[0]), g[0])};
  });
}

std::vector<Var> MatMul::LOp(const Apply& node, const std::vector<Var>& g) const {
  return FloatProductGrad(
      *this, node, [&](const std::vector<Var>& in) { return MatMulGrad(in[0], in[1], g[0]); });
}

// b*z + a*x@y.
std::vector<Var> Gemm::LOp(const Apply& node, const std::vector<Var>& g) const {
  return FloatProductGrad(*this, node, [&](const std::vector<Var>& in) -> std::vector<Var> {
    const Var &z = in[0], &a = in[1], &x = in[2], &y = in[3], &b = in[4], &gz = g[0];
    return {b * gz, sum(gz * dot(x, y)), a * dot(gz, transpose(y)), a * dot(transpose(x), gz),
            sum(gz * z)};
  });
}

// beta*y + alpha*A@x.
std::vector<Var> Gemv::LOp(const Apply& node, const std::vector<Var>& g) const {
  return FloatProductGrad(*this, node, [&](const std::vector<Var>& in) -> std::vector<Var> {
    const Var &y = in[0], &alpha = in[1], &A = in[2], &x = in[3], &beta = in[4], &gz = g[0];
    return {beta * gz, sum(gz * dot(A, x)), alpha * outer(gz, x), alpha * dot(transpose(A), gz),
            sum(gz * y)};
  });
}

}  // namespace kiln
