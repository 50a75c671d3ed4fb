#include "proto/convert/function_convert.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "proto/convert/options_convert.h"

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

absl::StatusOr<StoredFunction> LoadStoredFunction(std::string_view bytes, uint32_t format) {
  v1::StoredFunction stored;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !stored.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("not a stored Kiln function (kiln.v1.StoredFunction)");
  }
  if (stored.format() != format) {
    return absl::DataLossError(absl::StrCat("a stored Kiln function of format ", stored.format(),
                                            ", expected ", format));
  }
  absl::StatusOr<CheckMode> check = CheckFromProto(stored.signature().check());
  if (!check.ok()) return absl::DataLossError(check.status().message());
  absl::StatusOr<Function> f = FunctionFromOptimizedGraph(
      stored.optimized(), {.check = *check, .profile = stored.signature().profile()});
  if (!f.ok()) {
    return absl::DataLossError(
        absl::StrCat("a stored Kiln function does not load: ", f.status().message()));
  }
  stored.clear_optimized();
  const v1::FunctionSignature& signature = stored.signature();
  // Callers index the function's inputs and outputs by the signature: they must agree.
  const int n_in = static_cast<int>(f->fgraph().inputs().size());
  bool agree = signature.inputs_size() == n_in &&
               signature.output_types_size() + signature.update_inputs_size() ==
                   static_cast<int>(f->fgraph().outputs().size());
  for (uint32_t u : signature.update_inputs()) {
    agree = agree && u < static_cast<uint32_t>(n_in) && !signature.inputs(u).shared().empty();
  }
  if (!agree) return absl::DataLossError("a compiled Kiln function's signature does not fit it");
  return StoredFunction{std::move(stored), *std::move(f)};
}

}  // namespace kiln
