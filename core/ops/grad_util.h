// Helpers the op families' gradient rules share.
#ifndef KILN_CORE_OPS_GRAD_UTIL_H_
#define KILN_CORE_OPS_GRAD_UTIL_H_

#include <optional>
#include <vector>

#include "core/graph/op.h"
#include "core/graph/var.h"

namespace kiln {

// True for bool and integer dtypes (Aesara's discrete types).
bool IsDiscreteVar(const Var& v);
// Zeros like x in x's dtype when continuous, else float64 (Aesara's zeros_like().astype(floatX)).
Var FloatZerosLike(const Var& x);
// One gradient per input of node, each built by make(i).
template <typename F>
std::vector<Var> PerInput(const Apply& node, F make) {
  std::vector<Var> grads;
  for (int i = 0; i < node.num_inputs(); ++i) grads.push_back(make(i));
  return grads;
}
// The reduced axes of an input of rank ndim (nullopt: all of them).
std::vector<int> ReducedAxes(const std::optional<std::vector<int>>& axis, int ndim);
// g, reduced with the reduced axes of x re-inserted as broadcastable dims ('x').
Var RestoreReducedDims(const Var& g, int ndim, const std::vector<int>& axes);
// g summed so that it has the static broadcast pattern of x: over leading dims x lacks and over
// dims where x has static size 1 and g does not (Aesara's _sum_grad_over_bcasted_dims).
Var SumToShapeOf(const Var& g, const Var& x);
// The input variables of node as Vars.
std::vector<Var> InputVars(const Apply& node);

}  // namespace kiln

#endif  // KILN_CORE_OPS_GRAD_UTIL_H_
