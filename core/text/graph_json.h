// A graph as the console draws it (server/console/API.md): its nodes (inputs, constants,
// applies with their props and output types), the edges between them marked in-place or view,
// and its outputs; an OpFromGraph's or Scan's inner graph nested under its node.
#ifndef KILN_CORE_TEXT_GRAPH_JSON_H_
#define KILN_CORE_TEXT_GRAPH_JSON_H_

#include <string>
#include <vector>

#include "core/graph/basic.h"
#include "core/text/json.h"

namespace kiln {

// Writes the graph from `inputs` to `outputs` as one JSON object.
void WriteGraphJson(const std::vector<VariablePtr>& inputs,
                    const std::vector<VariablePtr>& outputs, Json& out);
// The same as a string. With no `inputs`, every leaf that is not a constant is an input.
std::string GraphJson(const std::vector<VariablePtr>& inputs,
                      const std::vector<VariablePtr>& outputs);

}  // namespace kiln

#endif  // KILN_CORE_TEXT_GRAPH_JSON_H_
