#include "proto/onnx/import.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"
#include "proto/onnx/import_graph.h"
#include "proto/onnx/import_node.h"
#include "proto/onnx/onnx_tensor.h"

namespace kiln::onnx {
namespace {

// The oldest opset the importers are written for; older models go through the converter.
constexpr int64_t kOldestOpset = 7;
constexpr int64_t kNewestOpset = 17;

const OpTable& Importers() {
  static const OpTable* table = [] {
    auto* t = new OpTable;
    AddElementwiseImporters(*t);
    AddReduceImporters(*t);
    AddShapeImporters(*t);
    AddNetworkImporters(*t);
    AddIndexImporters(*t);
    AddRecurrentImporters(*t);
    AddResampleImporters(*t);
    AddSelectImporters(*t);
    AddEinsumImporters(*t);
    AddQuantizedImporters(*t);
    AddGridSampleImporters(*t);
    return t;
  }();
  return *table;
}

bool DefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// The dtype and static shape of a value's ONNX type; UNIMPLEMENTED for anything but a tensor.
struct OnnxTensorType {
  DType dtype;
  StaticShape shape;
  bool rank_known;
};

absl::StatusOr<OnnxTensorType> TensorTypeOf(const ::onnx::TypeProto& type, absl::string_view what) {
  if (!type.has_tensor_type()) {
    return absl::UnimplementedError(absl::StrCat(
        what, " is not a tensor (sequence, map and optional values are not supported)"));
  }
  const auto& tt = type.tensor_type();
  absl::StatusOr<DType> dtype = DTypeFromOnnx(tt.elem_type());
  if (!dtype.ok()) {
    return absl::Status(dtype.status().code(), absl::StrCat(what, ": ", dtype.status().message()));
  }
  OnnxTensorType out{*dtype, {}, tt.has_shape()};
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      out.shape.push_back(d.dim_value());
    } else {
      out.shape.push_back(kUnknownDim);
    }
  }
  return out;
}

// `v` with ONNX's dtype and what ONNX knows of its shape: a cast where Kiln's dtype rule gave
// another dtype (Aesara widens an int32 sum, ONNX keeps it), a SpecifyShape where ONNX knows
// dims Kiln's inference left unknown.
absl::StatusOr<Var> Conform(const Var& v, const OnnxTensorType& t, const ImportNode& node,
                            absl::string_view what) {
  if (!v.ok()) return v.status();
  Var out = v.dtype() == t.dtype ? v : cast(v, t.dtype);
  if (!t.rank_known) return out;
  if (out.ndim() != static_cast<int>(t.shape.size())) {
    return node.Unimplemented(absl::StrCat(what, " has rank ", out.ndim(), " in Kiln but ",
                                           t.shape.size(), " in ONNX's shape inference"));
  }
  bool refine = false;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    refine |= t.shape[d].has_value() && !out.type().shape()[d].has_value();
  }
  if (refine) {
    StaticShape merged = out.type().shape();
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (!merged[d].has_value()) merged[d] = t.shape[d];
    }
    out = specify_shape(out, merged);
  }
  if (!out.ok()) return node.Invalid(out.status().message());
  return out;
}

// ONNX's library throws; the importer's callers get a Status.
template <typename F>
absl::Status Guarded(absl::string_view stage, absl::StatusCode code, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return absl::Status(code, absl::StrCat("ONNX ", stage, ": ", e.what()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> ConstantNodeValue(const ImportNode& node) {
  absl::StatusOr<std::optional<Tensor>> t = node.TensorAttr("value");
  if (!t.ok()) return t.status();
  if (t->has_value()) return **t;
  if (node.has_attr("value_float")) {
    return Tensor::Of<float>(DType::kFloat32, {}, {node.Float("value_float", 0)});
  }
  if (node.has_attr("value_int")) {
    return Tensor::Of<int64_t>(DType::kInt64, {}, {node.Int("value_int", 0)});
  }
  if (node.has_attr("value_floats")) {
    const std::vector<float> v = node.Floats("value_floats");
    return Tensor::FromValues<float>(DType::kFloat32, {static_cast<int64_t>(v.size())}, v);
  }
  if (node.has_attr("value_ints")) {
    const std::vector<int64_t> v = node.Ints("value_ints");
    return Tensor::FromValues<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
  }
  return node.Unimplemented("a Constant of strings or a sparse tensor");
}

// Libonnx 1.12's shape inference divides by some attributes unchecked (a Conv stride of 0 or a
// DepthToSpace blocksize whose square wraps is a SIGFPE): every node's geometry attributes,
// subgraphs' too, are held to [least, kLargestAttribute] before any of libonnx runs.
absl::Status CheckGeometryAttributes(const ::onnx::GraphProto& root) {
  static const absl::flat_hash_map<std::string, int64_t>* const kLeast =
      new absl::flat_hash_map<std::string, int64_t>{
          {"strides", 1},        {"dilations", 1},   {"kernel_shape", 1}, {"blocksize", 1},
          {"group", 1},          {"hidden_size", 1}, {"size", 1},         {"pads", 0},
          {"output_padding", 0}, {"output_shape", 0}};
  std::vector<const ::onnx::GraphProto*> graphs = {&root};  // a stack: no recursion
  while (!graphs.empty()) {
    const ::onnx::GraphProto* g = graphs.back();
    graphs.pop_back();
    for (const ::onnx::NodeProto& n : g->node()) {
      for (const ::onnx::AttributeProto& a : n.attribute()) {
        if (a.has_g()) graphs.push_back(&a.g());
        for (const auto& sub : a.graphs()) graphs.push_back(&sub);
        auto least = kLeast->find(a.name());
        // (Pad's pads may be negative: they crop.)
        if (least == kLeast->end() || (n.op_type() == "Pad" && a.name() == "pads")) continue;
        std::vector<int64_t> values(a.ints().begin(), a.ints().end());
        if (a.type() == ::onnx::AttributeProto::INT) values.push_back(a.i());
        for (int64_t v : values) {
          if (v < least->second || v > kLargestAttribute) {
            return absl::InvalidArgumentError(
                absl::StrCat(n.op_type(), " node '", n.name(), "': attribute ", a.name(), " holds ",
                             v, ", outside [", least->second, ", ", kLargestAttribute, "]"));
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> SupportedOperators() {
  std::vector<std::string> ops = {"Constant"};
  for (const auto& [name, f] : Importers()) ops.push_back(name);
  std::sort(ops.begin(), ops.end());
  return ops;
}

const Var* Scope::Find(const std::string& name) const {
  for (const Scope* s = this; s != nullptr; s = s->outer) {
    if (auto it = s->values.find(name); it != s->values.end()) return &it->second;
  }
  return nullptr;
}

const Tensor* Scope::FindConstant(const std::string& name) const {
  for (const Scope* s = this; s != nullptr; s = s->outer) {
    if (s->values.contains(name)) {  // the innermost value of that name decides
      auto it = s->constants.find(name);
      return it == s->constants.end() ? nullptr : &it->second;
    }
  }
  return nullptr;
}

const ::onnx::TypeProto* Scope::FindType(const std::string& name) const {
  for (const Scope* s = this; s != nullptr; s = s->outer) {
    if (auto it = s->types.find(name); it != s->types.end()) return it->second;
  }
  return nullptr;
}

void Scope::AddTypes(const ::onnx::GraphProto& g) {
  for (const auto& v : g.value_info()) types[v.name()] = &v.type();
  for (const auto& v : g.output()) types[v.name()] = &v.type();
}

absl::Status ImportGraphNodes(const ::onnx::GraphProto& g, Scope& scope, const GraphContext& ctx,
                              int depth) {
  const OpTable& importers = Importers();
  for (const ::onnx::NodeProto& proto : g.node()) {
    RETURN_IF_ERROR(PollInterrupt());  // the call's deadline and cancellation
    std::vector<Var> inputs;
    std::vector<std::optional<Tensor>> input_constants;
    for (const std::string& name : proto.input()) {
      if (name.empty()) {
        inputs.emplace_back();
        input_constants.emplace_back();
        continue;
      }
      const Var* value = scope.Find(name);
      if (value == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(proto.op_type(), " node '", proto.name(),
                                                       "': input '", name,
                                                       "' is not defined before it"));
      }
      inputs.push_back(*value);
      const Tensor* c = scope.FindConstant(name);
      input_constants.push_back(c == nullptr ? std::nullopt : std::optional<Tensor>(*c));
    }
    std::vector<std::optional<StaticShape>> output_shapes;
    for (const std::string& name : proto.output()) {
      const ::onnx::TypeProto* t = scope.FindType(name);
      absl::StatusOr<OnnxTensorType> onnx_type =
          t == nullptr ? absl::StatusOr<OnnxTensorType>(absl::NotFoundError(name))
                       : TensorTypeOf(*t, name);
      output_shapes.push_back(onnx_type.ok() && onnx_type->rank_known
                                  ? std::optional<StaticShape>(onnx_type->shape)
                                  : std::nullopt);
    }
    const ImportNode node(proto, ctx.opset, std::move(inputs), std::move(input_constants),
                          std::move(output_shapes), ctx.options->max_tensor_bytes);
    std::vector<Var> results;
    if (proto.op_type() == "Constant") {
      absl::StatusOr<Tensor> value = ConstantNodeValue(node);
      if (!value.ok()) return value.status();
      if (proto.output_size() == 1) scope.constants[proto.output(0)] = *value;
      results.push_back(constant(*value));
    } else if (proto.op_type() == "If" || proto.op_type() == "Loop" ||
               proto.op_type() == "Scan") {
      absl::StatusOr<std::vector<Var>> made =
          proto.op_type() == "If"     ? ImportIf(node, scope, ctx, depth)
          : proto.op_type() == "Loop" ? ImportLoop(node, scope, ctx, depth)
                                      : ImportScan(node, scope, ctx, depth);
      if (!made.ok()) return made.status();
      results = *std::move(made);
    } else {
      auto it = importers.find(proto.op_type());
      if (it == importers.end()) {
        return absl::UnimplementedError(absl::StrCat("ONNX operator ", proto.op_type(), " (opset ",
                                                     ctx.opset,
                                                     ") is not supported by Kiln's importer"));
      }
      absl::StatusOr<std::vector<Var>> made = it->second(node);
      if (!made.ok()) return made.status();
      results = *std::move(made);
    }
    for (int o = 0; o < proto.output_size(); ++o) {
      const std::string& name = proto.output(o);
      if (name.empty()) continue;
      if (o >= static_cast<int>(results.size())) {
        return node.Unimplemented(absl::StrCat("its output ", o, " ('", name, "')"));
      }
      Var v = results[o];
      if (!v.ok()) {
        return absl::Status(v.status().code(),
                            absl::StrCat(node.Describe(), ": ", v.status().message()));
      }
      if (const ::onnx::TypeProto* t = scope.FindType(name); t != nullptr) {
        absl::StatusOr<OnnxTensorType> onnx_type =
            TensorTypeOf(*t, absl::StrCat("output '", name, "' of ", node.Describe()));
        if (!onnx_type.ok()) return onnx_type.status();
        absl::StatusOr<Var> conformed =
            Conform(v, *onnx_type, node, absl::StrCat("output '", name, "'"));
        if (!conformed.ok()) return conformed.status();
        v = *conformed;
      }
      scope.values[name] = v;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ImportedModel> Import(absl::string_view model_bytes, const ImportOptions& options) {
  if (static_cast<int64_t>(model_bytes.size()) > options.max_model_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("the ONNX model holds ", model_bytes.size(),
                                                     " bytes, more than the limit of ",
                                                     options.max_model_bytes));
  }
  ::onnx::ModelProto model;
  if (!model.ParseFromArray(model_bytes.data(), static_cast<int>(model_bytes.size()))) {
    return absl::InvalidArgumentError("the bytes are not an ONNX ModelProto");
  }
  // Nodes and their inputs, subgraphs' too (each input may become a Kiln node: a variadic
  // Sum, a Concat), are held to the node limit.
  int64_t nodes = 0, edges = 0;
  {
    std::vector<const ::onnx::GraphProto*> graphs = {&model.graph()};  // a stack: no recursion
    while (!graphs.empty()) {
      const ::onnx::GraphProto* g = graphs.back();
      graphs.pop_back();
      nodes += g->node_size();
      for (const auto& n : g->node()) {
        edges += n.input_size();
        for (const auto& a : n.attribute()) {
          if (a.has_g()) graphs.push_back(&a.g());
          for (const auto& sub : a.graphs()) graphs.push_back(&sub);
        }
      }
    }
  }
  if (nodes > options.max_nodes) {
    return absl::ResourceExhaustedError(absl::StrCat("the ONNX model has ", nodes,
                                                     " nodes, more than the limit of ",
                                                     options.max_nodes));
  }
  if (edges > options.max_nodes) {
    return absl::ResourceExhaustedError(absl::StrCat("the ONNX model's nodes have ", edges,
                                                     " inputs in all, more than the limit of ",
                                                     options.max_nodes));
  }
  ImportedModel out;
  for (const auto& op : model.opset_import()) {
    if (DefaultDomain(op.domain())) out.opset = op.version();
  }
  for (const auto& n : model.graph().node()) {
    if (!DefaultDomain(n.domain())) {
      return absl::UnimplementedError(absl::StrCat("node '", n.name(), "' (", n.op_type(),
                                                   ") is in the domain '", n.domain(),
                                                   "': only the default domain is supported"));
    }
  }
  if (out.opset == 0)
    return absl::InvalidArgumentError("the model imports no default-domain opset");
  if (out.opset > kNewestOpset) {
    return absl::UnimplementedError(absl::StrCat("opset ", out.opset, " is newer than ",
                                                 kNewestOpset, ", the newest supported"));
  }
  RETURN_IF_ERROR(CheckGeometryAttributes(model.graph()));
  RETURN_IF_ERROR(Guarded("checker", absl::StatusCode::kInvalidArgument,
                          [&] { ::onnx::checker::check_model(model); }));
  int64_t opset = out.opset;
  if (opset < kOldestOpset) {
    RETURN_IF_ERROR(Guarded("version converter", absl::StatusCode::kUnimplemented, [&] {
      model = ::onnx::version_conversion::ConvertVersion(model, kOldestOpset);
    }));
    opset = kOldestOpset;
  }
  // Shapes and dtypes of every value where ONNX can tell (errors are not fatal: a node whose
  // shape is not inferred is imported by Kiln's own inference).
  (void)Guarded("shape inference", absl::StatusCode::kInvalidArgument,
                [&] { ::onnx::shape_inference::InferShapes(model); });
  const ::onnx::GraphProto& graph = model.graph();
  Scope scope;
  scope.AddTypes(graph);
  absl::flat_hash_set<std::string> initializer_names;
  int64_t initializer_bytes = 0;
  for (const auto& init : graph.initializer()) {
    const std::string what = absl::StrCat("initializer '", init.name(), "'");
    absl::StatusOr<Tensor> value =
        TensorFromOnnx(init, what, options.max_tensor_bytes - initializer_bytes);
    if (!value.ok()) return value.status();
    initializer_bytes += value->nbytes();
    initializer_names.insert(init.name());
    if (options.trainable && IsFloat(value->dtype())) {
      StaticShape shape(value->shape().begin(), value->shape().end());
      Var w = tensor(value->dtype(), shape, init.name());
      scope.values[init.name()] = w;
      out.weights.push_back(w);
      out.weight_names.push_back(init.name());
      out.weight_values.push_back(*value);
    } else {
      scope.values[init.name()] = constant(*value, init.name());
      scope.constants[init.name()] = *value;
    }
  }
  for (const auto& in : graph.input()) {
    if (initializer_names.contains(in.name())) continue;  // (IR < 4 lists them as inputs too)
    absl::StatusOr<OnnxTensorType> t =
        TensorTypeOf(in.type(), absl::StrCat("graph input '", in.name(), "'"));
    if (!t.ok()) return t.status();
    Var v = tensor(t->dtype, t->shape, in.name());
    scope.values[in.name()] = v;
    out.inputs.push_back(v);
    out.input_names.push_back(in.name());
  }
  const GraphContext ctx{opset, &options};
  RETURN_IF_ERROR(ImportGraphNodes(graph, scope, ctx, 0));
  const auto& values = scope.values;
  for (const auto& o : graph.output()) {
    auto it = values.find(o.name());
    if (it == values.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", o.name(), "' is not computed by any node"));
    }
    out.outputs.push_back(it->second);
    out.output_names.push_back(o.name());
  }
  return out;
}

}  // namespace kiln::onnx
