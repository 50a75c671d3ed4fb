// Batching a graph (PyTensor's vectorize_graph): the same computation for every row of a new
// leading dim at once, as one ordinary graph. jacobian uses it to run one backward pass over a
// batch of cotangents instead of one pass per output element.
#ifndef KILN_CORE_GRAD_VECTORIZE_H_
#define KILN_CORE_GRAD_VECTORIZE_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/grad/node_budget.h"
#include "core/graph/var.h"

namespace kiln {

// How far vectorize may grow the graph.
struct VectorizeOptions {
  // The most nodes it may create (0: no limit): RESOURCE_EXHAUSTED past it, as they are made.
  int64_t max_nodes = 0;
  // Polled every 256 nodes: a non-OK status stops vectorize with it.
  std::function<absl::Status()> interrupt;
  // A count shared with other passes (jacobian's); when set, max_nodes and interrupt are its.
  NodeBudget* node_budget = nullptr;
};

// `outputs` recomputed with each `replace` pair's first variable v (of shape S) taken as every
// row of the second, V (of shape (B,) + S): each result has shape (B,) + its output's shape, row
// b being the output computed from the rows b. Outputs that do not depend on any v are repeated
// B times. Every replaced V must have the same length B. Fails with INVALID_ARGUMENT naming the
// op when a node on the path has no batched form (an index, a shape or an axis that would
// itself be batched). No op is unrolled row by row: the result has O(graph) nodes for any B.
absl::StatusOr<std::vector<Var>> vectorize(const std::vector<Var>& outputs,
                                           const std::vector<std::pair<Var, Var>>& replace,
                                           const VectorizeOptions& options = {});

}  // namespace kiln

#endif  // KILN_CORE_GRAD_VECTORIZE_H_
