// Gradients of the reductions: CAReduce (sum, prod with Aesara's zero handling, max, min, all,
// any), MaxAndArgmax / Argmax and CumOp.
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/ops/alloc.h"
#include "core/ops/grad_util.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"

namespace kiln {

std::vector<Var> CAReduce::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  const Var out(node.output(0));
  if (reduce_ == ReduceKind::kAll || reduce_ == ReduceKind::kAny || IsDiscreteVar(out)) {
    return {FloatZerosLike(x)};
  }
  const std::vector<int> axes = ReducedAxes(axis_, x.ndim());
  const Var gz = RestoreReducedDims(g[0], x.ndim(), axes);
  switch (reduce_) {
    case ReduceKind::kSum:
      return {second(x, gz)};
    case ReduceKind::kMax:
    case ReduceKind::kMin:
      // Every element equal to the extreme gets the whole gradient (as Aesara's MaxAndArgmax).
      return {eq(RestoreReducedDims(out, x.ndim(), axes), x) * gz};
    case ReduceKind::kProd: {
      // Groups without zeros: gz * prod / x. With one zero: that element gets gz times the
      // product of the others, the rest 0. With more: all 0.
      const Var zero = scalar_constant(0.0, x.dtype());
      const Var prod_out = RestoreReducedDims(out, x.ndim(), axes);
      const Var g0 = gz * prod_out / x;
      const Var where_zeros = eq(x, zero);
      const Var n_zeros = sum(where_zeros, axes);
      const Var single = RestoreReducedDims(eq(n_zeros, literal(1)), x.ndim(), axes);
      const Var none = RestoreReducedDims(eq(n_zeros, literal(0)), x.ndim(), axes);
      const Var without_zeros = RestoreReducedDims(
          prod(switch_(where_zeros, scalar_constant(1.0, x.dtype()), x), axes), x.ndim(), axes);
      return {switch_(none, g0, switch_(single & where_zeros, without_zeros, zero) * gz)};
    }
    default:
      return {FloatZerosLike(x)};
  }
}

std::vector<Var> MaxAndArgmax::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  if (IsDisconnected(*g[0])) return {FloatZerosLike(x)};
  const Var xmax = RestoreReducedDims(Var(node.output(0)), x.ndim(), axis());
  return {eq(xmax, x) * RestoreReducedDims(g[0], x.ndim(), axis())};
}

// The index is piecewise constant in x: zero.
std::vector<Var> Argmax::LOp(const Apply& node, const std::vector<Var>&) const {
  return {FloatZerosLike(Var(node.inputs()[0]))};
}

namespace {
// x reversed along `axis`.
Var Reverse(const Var& x, int axis) {
  std::vector<Index> idx;
  for (int d = 0; d < axis; ++d) idx.push_back(Slice{});
  idx.push_back(Slice{std::nullopt, std::nullopt, -1});
  return subtensor(x, idx);
}
}  // namespace

std::vector<Var> CumOp::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  const Var out(node.output(0));
  const int along = axis().value_or(0);  // (the builder made it non-negative)
  // d(cumsum)^T g = reverse(cumsum(reverse(g))); cumprod's is that of fx * g, divided by x.
  const Var weighted = product() ? out * g[0] : g[0];
  Var gx = Reverse(cumsum(Reverse(weighted, along), along), along);
  if (!axis()) gx = reshape(gx, shape(x));
  if (product()) gx = gx / x;
  return {gx};
}

}  // namespace kiln
