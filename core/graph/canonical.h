// The canonical form of a graph and its function id, the compiled-function cache's key: a
// SHA-256 of a text that names every node by its structure, so it does not depend on variable
// names, on the order nodes were built in or on duplicated subexpressions, and does depend on
// ops, props, types, constant bytes (NaN and -0.0 included; a constant of more than 64 bytes
// by their SHA-256) and input and output positions.
#ifndef KILN_CORE_GRAPH_CANONICAL_H_
#define KILN_CORE_GRAPH_CANONICAL_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/var.h"

namespace kiln {

struct CanonicalGraph {
  // Every distinct node once, numbered in depth-first order from the outputs; then the outputs.
  std::string form;
  // Hex SHA-256 of the form and the salt.
  std::string id;
};

// The canonical graph computing `outputs` from `inputs`. `salt` holds what else the id must
// depend on (the compile mode, updates, the compiler's version). Leaves other than the inputs
// must be constants.
absl::StatusOr<CanonicalGraph> Canonicalize(const std::vector<Var>& inputs,
                                            const std::vector<Var>& outputs,
                                            std::string_view salt = "");

// Hex SHA-256 of bytes.
std::string Sha256Hex(std::string_view bytes);

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_CANONICAL_H_
