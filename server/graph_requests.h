// The service's requests that transform graphs rather than run them: Grad, Optimize, Print and
// ImportOnnx,
// on kiln.v1 messages (no gRPC here, so they test without a server).
#ifndef KILN_SERVER_GRAPH_REQUESTS_H_
#define KILN_SERVER_GRAPH_REQUESTS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/var.h"
#include "kiln/v1/service.pb.h"
#include "proto/convert/graph_convert.h"

namespace kiln::server {

// The gradients of the request's cost with respect to its wrt, as a graph over the request's
// inputs (their names and shared bindings kept).
// `interrupt` is polled while differentiating (GradOptions::interrupt).
absl::StatusOr<v1::GradResponse> GradGraph(const v1::GradRequest& request,
                                           const GraphLimits& limits,
                                           const std::function<absl::Status()>& interrupt = {});
// The same, written into `response` (which may live on the call's arena).
absl::Status GradGraph(const v1::GradRequest& request, const GraphLimits& limits,
                       const std::function<absl::Status()>& interrupt, v1::GradResponse* response);

// The request's graph after the optimizer's phases for its mode, and the rewrites that fired.
absl::StatusOr<v1::OptimizeResponse> OptimizeGraph(
    const v1::OptimizeRequest& request, const GraphLimits& limits,
    const std::function<absl::Status()>& interrupt = {});
// The same, written into `response` (which may live on the call's arena).
absl::Status OptimizeGraph(const v1::OptimizeRequest& request, const GraphLimits& limits,
                           const std::function<absl::Status()>& interrupt,
                           v1::OptimizeResponse* response);

// The request's ONNX model as a Kiln graph (proto/onnx/import.h), within the server's limits:
// INVALID_ARGUMENT for a malformed model, UNIMPLEMENTED naming what Kiln does not take.
absl::Status ImportOnnxGraph(const v1::ImportOnnxRequest& request, const GraphLimits& limits,
                             v1::ImportOnnxResponse* response);

// The request's graph as an ONNX model (proto/onnx/export.h).
absl::Status ExportOnnxGraph(const v1::ExportOnnxRequest& request, const GraphLimits& limits,
                             v1::ExportOnnxResponse* response);

// dprint text, Graphviz DOT, pp text or the console's JSON of the outputs; a compiled
// function's dprint numbers its nodes in toposort order, and its JSON lists `inputs` first.
// RESOURCE_EXHAUSTED when pp's text is too long.
absl::StatusOr<std::string> PrintGraph(const std::vector<Var>& outputs,
                                       v1::PrintRequest::Format format, bool compiled,
                                       const std::vector<VariablePtr>& inputs = {});

}  // namespace kiln::server

#endif  // KILN_SERVER_GRAPH_REQUESTS_H_
