#include "server/graph_requests.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/grad/gradient.h"
#include "core/graph/fgraph.h"
#include "core/passes/passes.h"
#include "core/tensor/status_macros.h"
#include "core/text/dot.h"
#include "core/text/dprint.h"
#include "core/text/graph_json.h"
#include "core/text/pp.h"
#include "proto/convert/options_convert.h"
#include "proto/convert/tensor_convert.h"
#include "proto/onnx/export.h"
#include "proto/onnx/import.h"

namespace kiln::server {
namespace {

// The response graph keeps the request's input names and shared bindings.
void KeepInputs(const v1::Graph& request, v1::Graph& response) {
  for (int i = 0; i < request.inputs_size() && i < response.inputs_size(); ++i) {
    response.mutable_inputs(i)->set_name(request.inputs(i).name());
    response.mutable_inputs(i)->set_shared(request.inputs(i).shared());
  }
}

std::vector<Var> AsVars(const std::vector<VariablePtr>& vs) {
  return std::vector<Var>(vs.begin(), vs.end());
}

}  // namespace

absl::StatusOr<v1::GradResponse> GradGraph(const v1::GradRequest& request,
                                           const GraphLimits& limits,
                                           const std::function<absl::Status()>& interrupt) {
  v1::GradResponse response;
  RETURN_IF_ERROR(GradGraph(request, limits, interrupt, &response));
  return response;
}

absl::Status GradGraph(const v1::GradRequest& request, const GraphLimits& limits,
                       const std::function<absl::Status()>& interrupt, v1::GradResponse* response) {
  const v1::Graph& g = request.graph();
  if (!request.no_cost() && request.cost() >= static_cast<uint32_t>(g.outputs_size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost: output ", request.cost(), " of ", g.outputs_size(), " graph outputs"));
  }
  if (request.wrt_size() == 0) return absl::InvalidArgumentError("wrt: no variables");
  if (request.jacobian() && request.no_cost()) {
    return absl::InvalidArgumentError("jacobian: the request has no cost to differentiate");
  }
  GradOptions options;
  ASSIGN_OR_RETURN(options.disconnected_inputs,
                   DisconnectedInputsFromProto(request.disconnected_inputs()));
  std::vector<std::string> warnings;
  options.warnings = &warnings;
  options.interrupt = interrupt;
  // A gradient graph is a few times its cost's (a chain of 100k nodes has one of 400k more): it
  // may add up to 5 x --max_nodes, counted as it grows.
  options.max_nodes = 5 * limits.max_nodes;
  // The wrt, consider_constant and known_grads references are resolved as extra outputs, so that
  // conversion checks them.
  std::vector<const v1::ValueRef*> refs;
  for (const v1::ValueRef& ref : request.wrt()) refs.push_back(&ref);
  for (const v1::ValueRef& ref : request.consider_constant()) refs.push_back(&ref);
  for (const v1::KnownGrad& k : request.known_grads()) {
    refs.push_back(&k.variable());
    refs.push_back(&k.grad());
  }
  ASSIGN_OR_RETURN(ProtoGraph graph, GraphFromProto(g, limits, refs));
  auto extra = graph.outputs.begin() + g.outputs_size();
  const std::vector<Var> wrt(extra, extra + request.wrt_size());
  extra += request.wrt_size();
  options.consider_constant.assign(extra, extra + request.consider_constant_size());
  extra += request.consider_constant_size();
  for (int k = 0; k < request.known_grads_size(); ++k, extra += 2) {
    options.known_grads.emplace_back(extra[0], extra[1]);
  }
  const Var cost = request.no_cost() ? Var() : graph.outputs[request.cost()];
  absl::StatusOr<std::vector<Var>> grads =
      request.jacobian() ? jacobian(cost, wrt, options) : grad(cost, wrt, options);
  if (!grads.ok()) return grads.status();
  response->Clear();
  RETURN_IF_ERROR(
      GraphToProto(graph.inputs, *grads, response->mutable_graph(), GraphForm::kCompact));
  KeepInputs(g, *response->mutable_graph());
  for (std::string& w : warnings) response->add_warnings(std::move(w));
  return absl::OkStatus();
}

absl::StatusOr<v1::OptimizeResponse> OptimizeGraph(const v1::OptimizeRequest& request,
                                                   const GraphLimits& limits,
                                                   const std::function<absl::Status()>& interrupt) {
  v1::OptimizeResponse response;
  RETURN_IF_ERROR(OptimizeGraph(request, limits, interrupt, &response));
  return response;
}

absl::Status OptimizeGraph(const v1::OptimizeRequest& request, const GraphLimits& limits,
                           const std::function<absl::Status()>& interrupt,
                           v1::OptimizeResponse* response) {
  absl::StatusOr<ProtoGraph> graph = GraphFromProto(request.graph(), limits);
  if (!graph.ok()) return graph.status();
  std::vector<VariablePtr> ins, outs;
  for (const Var& v : graph->inputs) ins.push_back(v.ptr());
  for (const Var& v : graph->outputs) outs.push_back(v.ptr());
  auto fg = FunctionGraph::Make(std::move(ins), std::move(outs));
  if (!fg.ok()) return fg.status();
  RewriteOptions options;
  ASSIGN_OR_RETURN(options.mode, FromProto(request.mode()));
  options.trace = false;
  options.interrupt = interrupt;
  ASSIGN_OR_RETURN(RewriteReport report, optimize(**fg, options));
  response->Clear();
  RETURN_IF_ERROR(GraphToProto(AsVars((*fg)->inputs()), AsVars((*fg)->outputs()),
                               response->mutable_graph(), GraphForm::kCompact));
  KeepInputs(request.graph(), *response->mutable_graph());
  for (const auto& [rule, stats] : report.rules) {
    if (stats.count > 0) response->add_rewrites(absl::StrCat(rule, ": ", stats.count));
  }
  return absl::OkStatus();
}

absl::Status ImportOnnxGraph(const v1::ImportOnnxRequest& request, const GraphLimits& limits,
                             v1::ImportOnnxResponse* response) {
  onnx::ImportOptions options;
  options.trainable = request.trainable();
  options.max_nodes = limits.max_nodes;
  options.max_tensor_bytes = limits.max_constant_bytes;
  ASSIGN_OR_RETURN(onnx::ImportedModel model, onnx::Import(request.model(), options));
  std::vector<Var> inputs = model.inputs;
  inputs.insert(inputs.end(), model.weights.begin(), model.weights.end());
  response->Clear();
  v1::Graph* graph = response->mutable_graph();
  RETURN_IF_ERROR(GraphToProto(inputs, model.outputs, graph, GraphForm::kCompact));
  for (size_t i = 0; i < model.input_names.size(); ++i) {
    graph->mutable_inputs(static_cast<int>(i))->set_name(model.input_names[i]);
  }
  for (size_t i = 0; i < model.weight_names.size(); ++i) {
    graph->mutable_inputs(static_cast<int>(model.inputs.size() + i))
        ->set_name(model.weight_names[i]);
    *response->add_weights() = ToProto(model.weight_values[i]);
  }
  for (const std::string& name : model.output_names) response->add_output_names(name);
  response->set_opset(model.opset);
  return absl::OkStatus();
}

absl::Status ExportOnnxGraph(const v1::ExportOnnxRequest& request, const GraphLimits& limits,
                             v1::ExportOnnxResponse* response) {
  ASSIGN_OR_RETURN(ProtoGraph graph, GraphFromProto(request.graph(), limits));
  for (int i = 0; i < request.graph().inputs_size(); ++i) {
    if (!request.graph().inputs(i).shared().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " is the shared variable '", request.graph().inputs(i).shared(),
                       "': export a graph of plain inputs (shared values have no place in ONNX)"));
    }
  }
  onnx::ExportOptions options;
  if (request.opset() != 0) options.opset = request.opset();
  ASSIGN_OR_RETURN(
      std::string model,
      onnx::Export(graph.inputs, graph.outputs,
                   {request.output_names().begin(), request.output_names().end()}, options));
  response->set_model(std::move(model));
  return absl::OkStatus();
}

absl::StatusOr<std::string> PrintGraph(const std::vector<Var>& outputs,
                                       v1::PrintRequest::Format format, bool compiled,
                                       const std::vector<VariablePtr>& inputs) {
  if (format == v1::PrintRequest::DOT) return ToDot(outputs);
  if (format == v1::PrintRequest::GRAPH_JSON) {
    std::vector<VariablePtr> outs;
    for (const Var& v : outputs) outs.push_back(v.ptr());
    return GraphJson(inputs, outs);
  }
  if (format != v1::PrintRequest::PP) return DebugPrint(outputs, {.print_order = compiled});
  // One budget for all the lines: pp's 1 MiB is the limit of the whole text.
  PpOptions options;
  std::vector<std::string> lines;
  for (const Var& out : outputs) {
    ASSIGN_OR_RETURN(std::string line, PrettyPrint(out, options));
    options.max_chars -= std::min(options.max_chars, line.size() + 1);
    lines.push_back(std::move(line));
  }
  return absl::StrJoin(lines, "\n");
}

}  // namespace kiln::server
