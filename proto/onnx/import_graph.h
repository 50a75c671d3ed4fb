// The importer's walk over a graph's nodes (import.cc), and the control-flow operators whose
// subgraphs it walks in turn (If, Loop: import_control.cc).
#ifndef KILN_PROTO_ONNX_IMPORT_GRAPH_H_
#define KILN_PROTO_ONNX_IMPORT_GRAPH_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/graph/var.h"
#include "core/tensor/tensor.h"
#include "onnx/onnx_pb.h"
#include "proto/onnx/import.h"
#include "proto/onnx/import_node.h"

namespace kiln::onnx {

// The values a graph's nodes read by name: its own, then its enclosing graphs' (an ONNX
// subgraph reads the outer scope), with the constants among them and ONNX's inferred types.
struct Scope {
  const Scope* outer = nullptr;
  absl::flat_hash_map<std::string, Var> values;
  absl::flat_hash_map<std::string, Tensor> constants;
  absl::flat_hash_map<std::string, const ::onnx::TypeProto*> types;

  const Var* Find(const std::string& name) const;
  const Tensor* FindConstant(const std::string& name) const;
  const ::onnx::TypeProto* FindType(const std::string& name) const;
  // Records the types a graph's value_info and outputs give.
  void AddTypes(const ::onnx::GraphProto& g);
};

// What every node of one model is imported with.
struct GraphContext {
  int64_t opset;
  const ImportOptions* options;
};

// Subgraphs (If's branches, Loop's body) nest at most this deep.
inline constexpr int kMostSubgraphDepth = 16;

// Imports g's nodes in order into `scope` (a graph `depth` subgraphs deep).
absl::Status ImportGraphNodes(const ::onnx::GraphProto& g, Scope& scope, const GraphContext& ctx,
                              int depth);

// If: both branches' nodes imported (Kiln's IfElse runs only the chosen one's), their outputs
// chosen by the condition.
absl::StatusOr<std::vector<Var>> ImportIf(const ImportNode& node, const Scope& scope,
                                          const GraphContext& ctx, int depth);
// Loop (with a trip count): a Kiln Scan whose body is the Loop's; the carried values are its
// states, the iteration number a sequence, the scan outputs its nit-sots, and the condition
// its until (negated).
absl::StatusOr<std::vector<Var>> ImportLoop(const ImportNode& node, const Scope& scope,
                                            const GraphContext& ctx, int depth);

// Scan (opset 9 up): a Kiln Scan whose sequences are the scanned inputs (their axis moved first,
// reversed as the directions say) and whose states the carried values; the scan outputs stacked
// along their axes.
absl::StatusOr<std::vector<Var>> ImportScan(const ImportNode& node, const Scope& scope,
                                            const GraphContext& ctx, int depth);

}  // namespace kiln::onnx

#endif  // KILN_PROTO_ONNX_IMPORT_GRAPH_H_
