// A count of the nodes that grad, jacobian, hessian and vectorize create, kept as the graph grows
// so that a limit (the server's --max_nodes) stops them before the graph is built, not after.
#ifndef KILN_CORE_GRAD_NODE_BUDGET_H_
#define KILN_CORE_GRAD_NODE_BUDGET_H_

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/graph/basic.h"
#include "core/graph/var.h"

namespace kiln {

// Counts the Apply nodes above the variables it is shown that it has not seen before.
class NodeBudget {
 public:
  // At most `max_nodes` new nodes (0: no limit); `interrupt`, when set, is polled every 256.
  // `what` begins the error: "<what> grew past N new nodes (in kiln-server, 5 x --max_nodes)".
  explicit NodeBudget(int64_t max_nodes, std::function<absl::Status()> interrupt = {},
                      std::string what = "grad: the gradient graph")
      : max_nodes_(max_nodes), interrupt_(std::move(interrupt)), what_(std::move(what)) {}
  NodeBudget(const NodeBudget&) = delete;
  NodeBudget& operator=(const NodeBudget&) = delete;

  // Whether there is anything to count for: a limit or an interrupt.
  bool active() const { return max_nodes_ > 0 || interrupt_ != nullptr; }

  // Marks the nodes above `vars` as already there (the graph being differentiated): not counted.
  void Existing(const std::vector<Var>& vars);

  // Counts the nodes above `vars` not seen before: RESOURCE_EXHAUSTED once more than max_nodes
  // have been counted, or the interrupt's status.
  absl::Status Count(const std::vector<Var>& vars);

  // The nodes counted so far.
  int64_t created() const { return created_; }

 private:
  // Visits the nodes above v not seen before, counting them when `count`.
  absl::Status Walk(const Var& v, bool count);

  int64_t max_nodes_;
  std::function<absl::Status()> interrupt_;
  std::string what_;
  int64_t created_ = 0;
  std::unordered_set<const Apply*> seen_;
  std::vector<VariablePtr> anchors_;
};

}  // namespace kiln

#endif  // KILN_CORE_GRAD_NODE_BUDGET_H_
