// Inner graphs: the graph an op such as Scan carries (its loop body), as values and as text. The
// text is an op attribute, so the wire format, the function cache and op identity carry inner
// graphs with no code of their own; it names no variables, so it depends only on structure.
#ifndef KILN_CORE_GRAPH_INNER_GRAPH_H_
#define KILN_CORE_GRAPH_INNER_GRAPH_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/basic.h"
#include "core/graph/op.h"

namespace kiln {

// A graph from owner-less input variables to outputs.
struct InnerGraph {
  std::vector<VariablePtr> inputs, outputs;
};

// The text of the graph between `inputs` and `outputs` (each distinct node once, in a
// depth-first order from the outputs), or INVALID_ARGUMENT naming a leaf that is neither an
// input nor a constant.
absl::StatusOr<std::string> EncodeInnerGraph(const std::vector<VariablePtr>& inputs,
                                             const std::vector<VariablePtr>& outputs);

// The graph of EncodeInnerGraph's text, with fresh unnamed inputs, every node made (and so
// type-checked) by its op; INVALID_ARGUMENT saying what is wrong with a malformed text. Inner
// graphs nest at most kMaxInnerGraphDepth deep.
absl::StatusOr<InnerGraph> DecodeInnerGraph(absl::string_view text);
inline constexpr int kMaxInnerGraphDepth = 16;

// An op holding an inner graph (Scan): dprint shows it under "Inner graphs:".
class HasInnerGraph {
 public:
  virtual ~HasInnerGraph() = default;
  virtual const InnerGraph& inner() const = 0;
  // The outer input (of the op's node) that inner input `i` reads from, or -1.
  virtual int OuterInputOf(int i) const = 0;
  // How the op runs its inner graph: once per call (OpFromGraph) or as a loop's body (Scan).
  enum class Use { kCall, kLoop };
  virtual Use inner_use() const = 0;
};

// The inner graph `op` carries, or null.
inline const HasInnerGraph* InnerGraphOf(const Op& op) {
  return dynamic_cast<const HasInnerGraph*>(&op);
}

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_INNER_GRAPH_H_
