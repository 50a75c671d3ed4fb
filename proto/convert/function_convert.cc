#include "proto/convert/function_convert.h"

#include "core/graph/status_macros.h"

namespace kiln {

absl::StatusOr<v1::Graph> OptimizedGraphToProto(const Function& f) {
  if (f.HoldsSharedState()) {
    return absl::FailedPreconditionError(
        "a function with shared variables or updates cannot be stored");
  }
  const FunctionGraph& fg = f.fgraph();
  ASSIGN_OR_RETURN(v1::Graph graph,
                   GraphToProto(std::vector<Var>(fg.inputs().begin(), fg.inputs().end()),
                                std::vector<Var>(fg.outputs().begin(), fg.outputs().end()),
                                GraphForm::kCompact));
  graph.clear_types();
  for (v1::Node& node : *graph.mutable_nodes()) node.clear_output_type_indices();
  return graph;
}

absl::StatusOr<Function> FunctionFromOptimizedGraph(const v1::Graph& graph,
                                                    const FunctionOptions& options,
                                                    const GraphLimits& limits) {
  ASSIGN_OR_RETURN(ProtoGraph g, GraphFromProto(graph, limits));
  return Function::FromOptimized(g.inputs, g.outputs, options);
}

}  // namespace kiln
