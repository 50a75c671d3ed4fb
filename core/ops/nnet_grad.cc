// Gradients of Softmax, LogSoftmax (finite for inputs of any size), Sort (the gradient gathered
// back through the inverse permutation) and ArgSort (zeros).
#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/grad_util.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"

namespace kiln {
namespace {

// g's elements in the order perm gives along the last axis of a matrix: out[r, j] = g[r, perm[r,
// j]], as one take over the flattened matrix.
Var GatherRows(const Var& g, const Var& perm) {
  const Var cols = shape_i(g, 1);
  const Var row_start = arange(constant(int64_t{0}), shape_i(g, 0) * cols, cols);
  const Var flat = flatten(perm + dimshuffle(row_start, {0, kX}));
  return reshape(take(flatten(g), flat), shape(g));
}

}  // namespace

std::vector<Var> Softmax::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var out(node.output(0));
  return {(g[0] - sum(g[0] * out, axis() ? Axes(*axis()) : Axes(), /*keepdims=*/true)) * out};
}

std::vector<Var> LogSoftmax::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var out(node.output(0));
  return {g[0] - sum(g[0], axis() ? Axes(*axis()) : Axes(), /*keepdims=*/true) * exp(out)};
}

std::vector<Var> ArgSortOp::LOp(const Apply& node, const std::vector<Var>&) const {
  return {FloatZerosLike(Var(node.inputs()[0]))};
}

std::vector<Var> SortOp::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  if (IsDiscreteVar(x)) return {FloatZerosLike(x)};
  // The sorted element at position j came from argsort[j]: the gradient of input element i is
  // g at the position where i landed, argsort(argsort) along the axis.
  if (!axis()) {
    const Var inverse = argsort(argsort(x, std::nullopt), std::nullopt);
    return {reshape(take(g[0], inverse), shape(x))};
  }
  const int a = *axis();
  std::vector<int> to_last, back(x.ndim());
  for (int d = 0; d < x.ndim(); ++d) {
    if (d != a) to_last.push_back(d);
  }
  to_last.push_back(a);
  for (int d = 0; d < x.ndim(); ++d) back[to_last[d]] = d;
  const Var xt = dimshuffle(x, to_last);
  const Var gt = dimshuffle(g[0], to_last);
  const Var rows = make_vector({constant(int64_t{-1}), shape_i(xt, x.ndim() - 1)});
  const Var inverse = reshape(argsort(argsort(xt, -1), -1), rows);
  const Var gathered = reshape(GatherRows(reshape(gt, rows), inverse), shape(xt));
  return {dimshuffle(gathered, back)};
}

}  // namespace kiln
