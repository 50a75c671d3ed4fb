// A graph as bytes and back: what the compiled-function cache stores, so that a function loads
// without being optimized again. The bytes hold the inputs' types, each node's op (kind and
// attributes) and input references, the constants' data and the outputs; loading re-makes every
// node and checks it, so corrupt or hostile bytes give an error, never a crash.
#ifndef KILN_CORE_RUNTIME_SERIALIZE_H_
#define KILN_CORE_RUNTIME_SERIALIZE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/fgraph.h"

namespace kiln {

// The format's version; bytes of another version do not load.
inline constexpr int kGraphFormatVersion = 2;

// The bytes of fg; shared variables cannot be stored (an error names the first).
absl::StatusOr<std::string> SerializeGraph(const FunctionGraph& fg);

// The inputs and outputs of a graph read back from SerializeGraph's bytes.
struct LoadedGraph {
  std::vector<VariablePtr> inputs, outputs;
};
absl::StatusOr<LoadedGraph> DeserializeGraph(std::string_view bytes);

}  // namespace kiln

#endif  // KILN_CORE_RUNTIME_SERIALIZE_H_
