#include "core/ops/grad_util.h"

#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/reduce.h"

namespace kiln {

bool IsDiscreteVar(const Var& v) { return IsBool(v.dtype()) || IsInteger(v.dtype()); }

Var FloatZerosLike(const Var& x) {
  return zeros_like(x, IsDiscreteVar(x) ? DType::kFloat64 : x.dtype());
}

std::vector<int> ReducedAxes(const std::optional<std::vector<int>>& axis, int ndim) {
  if (axis) return *axis;
  std::vector<int> all;
  for (int d = 0; d < ndim; ++d) all.push_back(d);
  return all;
}

Var RestoreReducedDims(const Var& g, int ndim, const std::vector<int>& axes) {
  std::vector<int> order;
  int next = 0;
  for (int d = 0; d < ndim; ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    order.push_back(reduced ? kX : next++);
  }
  return dimshuffle(g, order);
}

Var SumToShapeOf(const Var& g, const Var& x) {
  if (!g.ok() || !x.ok()) return g.ok() ? x : g;
  const int lead = g.ndim() - x.ndim();
  std::vector<int> axes;
  for (int d = 0; d < g.ndim(); ++d) {
    const bool x_one = d < lead || x.type().shape()[d - lead] == StaticDim(1);
    if (x_one && g.type().shape()[d] != StaticDim(1)) axes.push_back(d);
  }
  Var r = axes.empty() ? g : sum(g, axes, /*keepdims=*/true);
  if (lead > 0) {
    std::vector<int> order;
    for (int d = lead; d < g.ndim(); ++d) order.push_back(d);
    r = dimshuffle(r, order);
  }
  return r;
}

std::vector<Var> InputVars(const Apply& node) {
  return std::vector<Var>(node.inputs().begin(), node.inputs().end());
}

}  // namespace kiln
