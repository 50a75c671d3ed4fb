// Conversion of graphs between kiln.v1.Graph and core, validating every graph that arrives
// from a client: each defect is INVALID_ARGUMENT naming the node (or input, constant, output)
// and what is wrong.
#ifndef KILN_PROTO_CONVERT_GRAPH_CONVERT_H_
#define KILN_PROTO_CONVERT_GRAPH_CONVERT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/var.h"
#include "core/tensor/tensor.h"
#include "kiln/v1/graph.pb.h"

namespace kiln {

// What an untrusted graph may hold.
struct GraphLimits {
  int64_t max_nodes = 1000000;  // nodes, and also their outputs
  int64_t max_constant_bytes = int64_t{1} << 30;  // in all constants together
};

// How GraphToProto writes ops and types: inline in each node (what clients send), or once each
// in the graph's tables (Graph.ops, Graph.types), which the server's replies use: a 500,000-node
// gradient is then a third of the bytes and the memory. GraphFromProto reads both.
enum class GraphForm { kInline, kCompact };

// The graph computing `outputs` from `inputs`: every leaf must be an input or a constant
// (MissingInputError otherwise), nodes in topological order, output types included.
absl::StatusOr<v1::Graph> GraphToProto(const std::vector<Var>& inputs,
                                       const std::vector<Var>& outputs,
                                       GraphForm form = GraphForm::kInline);
// The same, written into `out` (which may live on a protobuf Arena: building a large graph there
// costs a fraction of the heap's allocations).
absl::Status GraphToProto(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                          v1::Graph* out, GraphForm form = GraphForm::kInline);

struct ProtoGraph {
  std::vector<Var> inputs, outputs;
};
// The core graph of a message: ops made with MakeOp and type-checked by their MakeNode.
absl::StatusOr<ProtoGraph> GraphFromProto(const v1::Graph& graph, const GraphLimits& limits = {});
// The same, with `extra_outputs` resolved after the graph's own outputs (and numbered after them
// in errors): the references a request makes besides its graph (Grad's wrt, known grads...).
absl::StatusOr<ProtoGraph> GraphFromProto(const v1::Graph& graph, const GraphLimits& limits,
                                          const std::vector<const v1::ValueRef*>& extra_outputs);

// A graph input bound to the session's shared variable `name`, typed as `value` (every dim
// known): how ListShared describes a session's variables.
v1::Input SharedInputToProto(const std::string& name, const Tensor& value);

}  // namespace kiln

#endif  // KILN_PROTO_CONVERT_GRAPH_CONVERT_H_
