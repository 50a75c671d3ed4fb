// Automatic differentiation as in aesara.gradient: grad walks back from the cost, composing each
// op's L_op; Lop, Rop, jacobian and hessian build on it. The results are ordinary graphs.
#ifndef KILN_CORE_GRAD_GRADIENT_H_
#define KILN_CORE_GRAD_GRADIENT_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/grad/node_budget.h"
#include "core/graph/var.h"

namespace kiln {

// What grad does with a wrt variable the cost does not depend on.
enum class DisconnectedInputs { kRaise, kWarn, kIgnore };
// What grad returns for such a variable: zeros like it, an empty Var (None), or the
// DisconnectedType placeholder.
enum class ReturnDisconnected { kZero, kNone, kDisconnected };
// What grad does with an undefined (NullType) gradient: fail, or return it.
enum class NullGradients { kRaise, kReturn };

// Aesara's keyword arguments of grad.
struct GradOptions {
  // Variables treated as constants: no gradient flows through them.
  std::vector<Var> consider_constant;
  DisconnectedInputs disconnected_inputs = DisconnectedInputs::kRaise;
  // Gradients already known for some variables (the cost may then be absent).
  std::vector<std::pair<Var, Var>> known_grads;
  ReturnDisconnected return_disconnected = ReturnDisconnected::kZero;
  NullGradients null_gradients = NullGradients::kRaise;
  // Names each gradient "(dcost/dx)" when the cost and x have names.
  bool add_names = true;
  // Where DisconnectedInputs::kWarn messages go; stderr when null.
  std::vector<std::string>* warnings = nullptr;
  // Polled every 256 nodes: a non-OK status (a deadline, a memory budget) stops grad with it.
  std::function<absl::Status()> interrupt;
  // The most nodes grad may create (0: no limit), counted as they are made; past it grad stops
  // with RESOURCE_EXHAUSTED "grad: the gradient graph grew past N new nodes (in kiln-server, 5 x
  // --max_nodes)". jacobian and hessian count all their passes (and vectorize's nodes) against one
  // limit.
  int64_t max_nodes = 0;
  // Where nested passes count their nodes together (jacobian sets it for its Lop and vectorize);
  // when null, grad counts against max_nodes on its own.
  NodeBudget* node_budget = nullptr;
};

// The gradient of the scalar `cost` with respect to each of `wrt`, summed over every path.
// `cost` may be an empty Var() when options.known_grads is set.
absl::StatusOr<std::vector<Var>> grad(const Var& cost, const std::vector<Var>& wrt,
                                      const GradOptions& options = {});
// The gradient with respect to one variable (the Var carries any error). Note that a one-element
// brace list, grad(cost, {w}), picks this overload; write std::vector<Var>{w} for a list.
Var grad(const Var& cost, const Var& wrt, const GradOptions& options = {});

// Aesara's Lop: the vector-Jacobian products eval_points^T * d(f)/d(wrt).
absl::StatusOr<std::vector<Var>> Lop(const std::vector<Var>& f, const std::vector<Var>& wrt,
                                     const std::vector<Var>& eval_points,
                                     const GradOptions& options = {});
// Aesara's Rop: the Jacobian-vector products d(f)/d(wrt) * eval_points, one per f, built in the
// double-backward form (the gradient of Lop(f, wrt, u) . eval_points with respect to u).
absl::StatusOr<std::vector<Var>> Rop(const std::vector<Var>& f, const std::vector<Var>& wrt,
                                     const std::vector<Var>& eval_points);

// The Jacobian of a vector (or scalar) expression with respect to each of wrt, of shape
// (len(expression),) + wrt.shape, for any length: one backward pass batched over the rows of the
// identity (core/grad/vectorize.h), as PyTensor's jacobian(vectorize=True).
absl::StatusOr<std::vector<Var>> jacobian(const Var& expression, const std::vector<Var>& wrt,
                                          const GradOptions& options = {});
// The Hessian of a scalar cost with respect to each vector in wrt: the Jacobian of its gradient.
absl::StatusOr<std::vector<Var>> hessian(const Var& cost, const std::vector<Var>& wrt,
                                         const GradOptions& options = {});

}  // namespace kiln

#endif  // KILN_CORE_GRAD_GRADIENT_H_
