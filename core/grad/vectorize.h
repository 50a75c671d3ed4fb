// Batching a graph (PyTensor's vectorize_graph): the same computation for every row of a new
// leading dim at once, as one ordinary graph. jacobian uses it to run one backward pass over a
// batch of cotangents instead of one pass per output element.
#ifndef KILN_CORE_GRAD_VECTORIZE_H_
#define KILN_CORE_GRAD_VECTORIZE_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/var.h"

namespace kiln {

// `outputs` recomputed with each `replace` pair's first variable v (of shape S) taken as every
// row of the second, V (of shape (B,) + S): each result has shape (B,) + its output's shape, row
// b being the output computed from the rows b. Outputs that do not depend on any v are repeated
// B times. Every replaced V must have the same length B. Fails with INVALID_ARGUMENT naming the
// op when a node on the path has no batched form (an index, a shape or an axis that would
// itself be batched).
absl::StatusOr<std::vector<Var>> vectorize(const std::vector<Var>& outputs,
                                           const std::vector<std::pair<Var, Var>>& replace);

}  // namespace kiln

#endif  // KILN_CORE_GRAD_VECTORIZE_H_
