// DOT text of a graph in pydotprint's conventions, for graphviz.
#ifndef KILN_CORE_TEXT_DOT_H_
#define KILN_CORE_TEXT_DOT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/graph/var.h"

namespace kiln {

struct DotOptions {
  // Draw unnamed intermediate variables as edge labels rather than boxes (pydotprint's default).
  bool compact = true;
  // Label named variables by name only, not "name=x TensorType(...)".
  bool var_with_name_simple = false;
};

// pydotprint's picture as DOT: Apply nodes are ellipses labelled by op (Elemwise ones filled
// #FFAABB), variables are boxes, inputs and constants filled green, outputs blue; an edge into
// an op with several inputs is labelled with the input index; view edges are blue.
std::string ToDot(const std::vector<Var>& outputs, const DotOptions& options = {});

// Writes ToDot(outputs) to `path` and, when `format` is not "dot", renders it with graphviz's
// `dot -T<format>` (png, svg, pdf) into `path`.
absl::Status WriteDot(const std::vector<Var>& outputs, const std::string& path,
                      const std::string& format = "png", const DotOptions& options = {});

}  // namespace kiln

#endif  // KILN_CORE_TEXT_DOT_H_
