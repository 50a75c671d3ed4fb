// A graph as the console draws it (server/console/API.md): its nodes (inputs, constants,
// applies with their props and output types), the edges between them marked in-place or view,
// and its outputs; an OpFromGraph's or Scan's inner graph nested under its node.
#ifndef KILN_SERVER_CONSOLE_GRAPH_JSON_H_
#define KILN_SERVER_CONSOLE_GRAPH_JSON_H_

#include <vector>

#include "core/graph/basic.h"
#include "server/console/json.h"

namespace kiln::server {

// Writes the graph from `inputs` to `outputs` as one JSON object.
void WriteGraphJson(const std::vector<VariablePtr>& inputs,
                    const std::vector<VariablePtr>& outputs, Json& out);

}  // namespace kiln::server

#endif  // KILN_SERVER_CONSOLE_GRAPH_JSON_H_
