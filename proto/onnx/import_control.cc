// ONNX's If and Loop: their subgraphs imported into the same Kiln graph, under a scope that
// reads the enclosing graph's values (import_graph.h).
#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/ifelse.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "core/scan/scan.h"
#include "core/tensor/status_macros.h"
#include "proto/onnx/import_graph.h"
#include "proto/onnx/onnx_tensor.h"

namespace kiln::onnx {
namespace {

// The graph attribute `name` of the node.
absl::StatusOr<const ::onnx::GraphProto*> GraphAttr(const ImportNode& n, const std::string& name) {
  for (const auto& a : n.proto().attribute()) {
    if (a.name() == name && a.has_g()) return &a.g();
  }
  return n.Invalid(absl::StrCat("no graph attribute '", name, "'"));
}

// A tensor of one element (ONNX's trip count and conditions) as a scalar.
Var ScalarOf(const Var& c) {
  if (!c.ok() || c.ndim() == 0) return c;
  return subtensor(flatten(c, 1), {Index(int64_t{0})});
}
Var ScalarCondition(const Var& c) { return cast(ScalarOf(c), DType::kBool); }

// The values of g's outputs after its nodes are imported under `scope`.
absl::StatusOr<std::vector<Var>> SubgraphOutputs(const ImportNode& n, const ::onnx::GraphProto& g,
                                                 Scope& scope, const GraphContext& ctx,
                                                 int depth) {
  if (depth + 1 > kMostSubgraphDepth) {
    return n.Invalid(absl::StrCat("subgraphs nest more than ", kMostSubgraphDepth, " deep"));
  }
  scope.AddTypes(g);
  int64_t bytes = 0;  // the subgraph's initializers, held to the limit together
  for (const auto& init : g.initializer()) {
    absl::StatusOr<Tensor> value =
        TensorFromOnnx(init, absl::StrCat(n.Describe(), " initializer '", init.name(), "'"),
                       ctx.options->max_tensor_bytes - bytes);
    if (!value.ok()) return value.status();
    bytes += value->nbytes();
    scope.values[init.name()] = constant(*value, init.name());
    scope.constants[init.name()] = *std::move(value);
  }
  RETURN_IF_ERROR(ImportGraphNodes(g, scope, ctx, depth + 1));
  std::vector<Var> outs;
  for (const auto& o : g.output()) {
    const Var* v = scope.Find(o.name());
    if (v == nullptr) return n.Invalid(absl::StrCat("subgraph output '", o.name(), "' is not computed"));
    outs.push_back(*v);
  }
  return outs;
}

}  // namespace

absl::StatusOr<std::vector<Var>> ImportIf(const ImportNode& n, const Scope& scope,
                                          const GraphContext& ctx, int depth) {
  absl::StatusOr<const ::onnx::GraphProto*> then_g = GraphAttr(n, "then_branch");
  absl::StatusOr<const ::onnx::GraphProto*> else_g = GraphAttr(n, "else_branch");
  if (!then_g.ok()) return then_g.status();
  if (!else_g.ok()) return else_g.status();
  Scope then_scope{&scope}, else_scope{&scope};
  absl::StatusOr<std::vector<Var>> then_outs = SubgraphOutputs(n, **then_g, then_scope, ctx, depth);
  if (!then_outs.ok()) return then_outs.status();
  absl::StatusOr<std::vector<Var>> else_outs = SubgraphOutputs(n, **else_g, else_scope, ctx, depth);
  if (!else_outs.ok()) return else_outs.status();
  if (then_outs->size() != else_outs->size()) {
    return n.Invalid(absl::StrCat("the branches give ", then_outs->size(), " and ",
                                  else_outs->size(), " outputs"));
  }
  std::vector<Var> out = ifelse(ScalarCondition(n.in(0)), *then_outs, *else_outs);
  for (const Var& v : out) {
    if (!v.ok()) return n.Invalid(v.status().message());
  }
  return out;
}

absl::StatusOr<std::vector<Var>> ImportLoop(const ImportNode& n, const Scope& scope,
                                            const GraphContext& ctx, int depth) {
  absl::StatusOr<const ::onnx::GraphProto*> body_g = GraphAttr(n, "body");
  if (!body_g.ok()) return body_g.status();
  const ::onnx::GraphProto& body = **body_g;
  if (!n.has(0)) return n.Unimplemented("a Loop without a trip count");
  const int carried = n.num_inputs() - 2;
  if (carried < 0 || body.input_size() != carried + 2 || body.output_size() < carried + 1) {
    return n.Invalid("the body's inputs and outputs do not match the Loop's");
  }
  const int scanned = body.output_size() - 1 - carried;
  // No step when the initial condition is false.
  const Var trips = cast(ScalarOf(n.in(0)), DType::kInt64);
  const Var steps =
      n.has(1) ? switch_(ScalarCondition(n.in(1)), trips, scalar_constant(int64_t{0}, DType::kInt64))
               : trips;
  ScanArgs args;
  args.name = "onnx_loop";
  args.n_steps = steps;
  args.sequences.push_back(ScanSequence{arange(steps)});
  for (int k = 0; k < carried; ++k) args.outputs_info.push_back(ScanOutput{n.in(2 + k)});
  for (int k = 0; k < scanned; ++k) args.outputs_info.push_back(ScanOutput{std::nullopt});
  absl::StatusOr<ScanBuilder> builder = ScanBuilder::Start(args);
  if (!builder.ok()) return n.Invalid(builder.status().message());
  const std::vector<Var>& step_args = builder->step_args();
  Scope inner{&scope};
  inner.values[body.input(0).name()] = step_args[0];
  inner.values[body.input(1).name()] = scalar_constant(int64_t{1}, DType::kBool);
  for (int k = 0; k < carried; ++k) inner.values[body.input(2 + k).name()] = step_args[1 + k];
  absl::StatusOr<std::vector<Var>> outs = SubgraphOutputs(n, body, inner, ctx, depth);
  if (!outs.ok()) return outs.status();
  ScanStep step;
  step.outputs.assign(outs->begin() + 1, outs->end());
  step.until = invert(ScalarCondition((*outs)[0]));
  absl::StatusOr<ScanResult> result = builder->Finish(step);
  if (!result.ok()) return n.Invalid(result.status().message());
  // The final carried values: each state's last, or its initial value after no step.
  std::vector<Var> loop_outs;
  for (int k = 0; k < carried; ++k) {
    const Var init = n.in(2 + k);
    std::vector<int> lead{kX};
    for (int d = 0; d < init.ndim(); ++d) lead.push_back(d);
    const Var all = concatenate({dimshuffle(init, lead), result->outputs[k]}, 0);
    loop_outs.push_back(subtensor(all, {Index(int64_t{-1})}));
  }
  for (int k = 0; k < scanned; ++k) loop_outs.push_back(result->outputs[carried + k]);
  return loop_outs;
}

absl::StatusOr<std::vector<Var>> ImportScan(const ImportNode& n, const Scope& scope,
                                            const GraphContext& ctx, int depth) {
  if (n.opset() < 9) return n.Unimplemented("Scan before opset 9 (batched, with sequence_lens)");
  absl::StatusOr<const ::onnx::GraphProto*> body_g = GraphAttr(n, "body");
  if (!body_g.ok()) return body_g.status();
  const ::onnx::GraphProto& body = **body_g;
  const int scanned_in = static_cast<int>(n.Int("num_scan_inputs", 0));
  const int states = n.num_inputs() - scanned_in;
  const int scanned_out = body.output_size() - states;
  if (scanned_in < 1 || states < 0 || scanned_out < 0 || body.input_size() != n.num_inputs()) {
    return n.Invalid("the body's inputs and outputs do not match the Scan's");
  }
  auto ints = [&](const char* name, int count) -> absl::StatusOr<std::vector<int64_t>> {
    std::vector<int64_t> v = n.Ints(name);
    if (v.empty()) v.assign(count, 0);
    if (static_cast<int>(v.size()) != count) {
      return n.Invalid(absl::StrCat(name, " has ", v.size(), " entries, not ", count));
    }
    return v;
  };
  absl::StatusOr<std::vector<int64_t>> in_axes = ints("scan_input_axes", scanned_in);
  absl::StatusOr<std::vector<int64_t>> in_dirs = ints("scan_input_directions", scanned_in);
  absl::StatusOr<std::vector<int64_t>> out_axes = ints("scan_output_axes", scanned_out);
  absl::StatusOr<std::vector<int64_t>> out_dirs = ints("scan_output_directions", scanned_out);
  for (const auto* v : {&in_axes, &in_dirs, &out_axes, &out_dirs}) {
    if (!v->ok()) return v->status();
  }
  // x along `axis` first, reversed when `reverse` (and back: `to` the axis, for the outputs).
  auto reversed = [](const Var& x) {
    return subtensor(x, {Index(kiln::Slice{std::nullopt, std::nullopt, -1})});
  };
  ScanArgs args;
  args.name = "onnx_scan";
  for (int j = 0; j < scanned_in; ++j) {
    const Var x = n.in(states + j);
    if (!x.ok()) return x.status();
    absl::StatusOr<int> axis = NormalizeAxis(n, (*in_axes)[j], x.ndim());
    if (!axis.ok()) return axis.status();
    std::vector<int> order{*axis};
    for (int d = 0; d < x.ndim(); ++d) {
      if (d != *axis) order.push_back(d);
    }
    const Var seq = dimshuffle(x, order);
    args.sequences.push_back(ScanSequence{(*in_dirs)[j] != 0 ? reversed(seq) : seq});
  }
  for (int k = 0; k < states; ++k) args.outputs_info.push_back(ScanOutput{n.in(k)});
  for (int k = 0; k < scanned_out; ++k) args.outputs_info.push_back(ScanOutput{std::nullopt});
  absl::StatusOr<ScanBuilder> builder = ScanBuilder::Start(args);
  if (!builder.ok()) return n.Invalid(builder.status().message());
  const std::vector<Var>& step_args = builder->step_args();  // the scanned slices, then states
  Scope inner{&scope};
  for (int k = 0; k < states; ++k) inner.values[body.input(k).name()] = step_args[scanned_in + k];
  for (int j = 0; j < scanned_in; ++j) inner.values[body.input(states + j).name()] = step_args[j];
  absl::StatusOr<std::vector<Var>> outs = SubgraphOutputs(n, body, inner, ctx, depth);
  if (!outs.ok()) return outs.status();
  absl::StatusOr<ScanResult> result = builder->Finish(ScanStep{*outs});
  if (!result.ok()) return n.Invalid(result.status().message());
  std::vector<Var> scan_outs;
  for (int k = 0; k < states; ++k) {  // the final states (the initial ones after no step)
    const Var init = n.in(k);
    std::vector<int> lead{kX};
    for (int d = 0; d < init.ndim(); ++d) lead.push_back(d);
    const Var all = concatenate({dimshuffle(init, lead), result->outputs[k]}, 0);
    scan_outs.push_back(subtensor(all, {Index(int64_t{-1})}));
  }
  for (int k = 0; k < scanned_out; ++k) {
    Var y = result->outputs[states + k];
    if ((*out_dirs)[k] != 0) y = reversed(y);
    absl::StatusOr<int> axis = NormalizeAxis(n, (*out_axes)[k], y.ndim());
    if (!axis.ok()) return axis.status();
    std::vector<int> order;  // the step dim moved to `axis`
    for (int d = 1; d < y.ndim(); ++d) order.push_back(d);
    order.insert(order.begin() + *axis, 0);
    scan_outs.push_back(dimshuffle(y, order));
  }
  return scan_outs;
}

}  // namespace kiln::onnx
