// A function's optimized graph as the function cache stores it (kiln.v1.StoredFunction's
// `optimized`) and back, so that a function loads without optimizing again.
#ifndef KILN_PROTO_CONVERT_FUNCTION_CONVERT_H_
#define KILN_PROTO_CONVERT_FUNCTION_CONVERT_H_

#include "absl/status/statusor.h"
#include "core/compile/function.h"
#include "kiln/v1/graph.pb.h"
#include "kiln/v1/stored.pb.h"
#include "proto/convert/graph_convert.h"

namespace kiln {

// f's optimized graph in the compact form without output types (loading infers them again: a
// rewrite may keep a replaced variable's more precise type). FAILED_PRECONDITION when f holds
// shared variables or updates, which belong to a session, not to the stored function.
absl::StatusOr<v1::Graph> OptimizedGraphToProto(const Function& f);

// The function of a stored graph, linked as it is: every node made and checked again, so a
// corrupt or hostile graph is INVALID_ARGUMENT, never a crash. `options` may set check and
// profile (Function::FromOptimized).
absl::StatusOr<Function> FunctionFromOptimizedGraph(const v1::Graph& graph,
                                                    const FunctionOptions& options = {},
                                                    const GraphLimits& limits = {});

// A stored function (kiln.v1.StoredFunction's bytes, as the function cache keeps them and
// Compile returns them) loaded: of format `format`, its graph linked as it is (with its
// signature's check and profile), and its signature fitting the graph's inputs and outputs.
// DATA_LOSS on anything else.
struct StoredFunction {
  v1::StoredFunction stored;  // without its graph (`optimized`)
  Function function;
};
absl::StatusOr<StoredFunction> LoadStoredFunction(std::string_view bytes, uint32_t format);

}  // namespace kiln

#endif  // KILN_PROTO_CONVERT_FUNCTION_CONVERT_H_
