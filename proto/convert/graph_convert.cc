#include "proto/convert/graph_convert.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/graph/op.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
#include "proto/convert/tensor_convert.h"

namespace kiln {
namespace {

absl::Status Invalid(const std::string& where, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", why));
}

v1::AttrValue AttrToProto(const AttrValue& value) {
  v1::AttrValue msg;
  if (const auto* i = std::get_if<int64_t>(&value)) msg.set_i(*i);
  if (const auto* d = std::get_if<double>(&value)) msg.set_f(*d);
  if (const auto* s = std::get_if<std::string>(&value)) msg.set_s(*s);
  if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) {
    v1::Ints* ints = msg.mutable_ints();  // set even when empty
    for (int64_t e : *v) ints->add_values(e);
  }
  return msg;
}

void OpToProto(const Op& op, v1::Op* out) {
  out->set_kind(std::string(op.type_name()));
  const OpAttrs attrs = op.Attrs();
  for (const auto& [name, value] : attrs.values()) {
    v1::Attr* a = out->add_attrs();
    a->set_name(name);
    *a->mutable_value() = AttrToProto(value);
  }
}

absl::StatusOr<OpPtr> OpFromProto(const v1::Op& msg) {
  OpAttrs attrs;
  for (const v1::Attr& a : msg.attrs()) {
    const v1::AttrValue& v = a.value();
    switch (v.value_case()) {
      case v1::AttrValue::kI:
        attrs.Set(a.name(), v.i());
        break;
      case v1::AttrValue::kF:
        attrs.Set(a.name(), v.f());
        break;
      case v1::AttrValue::kS:
        attrs.Set(a.name(), v.s());
        break;
      case v1::AttrValue::kInts:
        attrs.Set(a.name(),
                  std::vector<int64_t>(v.ints().values().begin(), v.ints().values().end()));
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat("attribute '", a.name(), "' has no value"));
    }
  }
  return MakeOp(msg.kind(), attrs);
}

// A table of the compact form being written (Graph.ops or Graph.types): each distinct entry once.
// Entries are found by address first (ops and types are mostly shared instances), then by text.
class TableWriter {
 public:
  // The entry's index; `key()` gives its text and `add()` writes it, when it is new.
  template <typename Key, typename Add>
  uint32_t Index(const void* address, Key key, Add add) {
    if (auto it = by_address_.find(address); it != by_address_.end()) return it->second;
    auto [it, inserted] = by_text_.try_emplace(key(), static_cast<uint32_t>(by_text_.size()));
    if (inserted) add();
    by_address_.emplace(address, it->second);
    return it->second;
  }

 private:
  absl::flat_hash_map<const void*, uint32_t> by_address_;
  absl::flat_hash_map<std::string, uint32_t> by_text_;
};

}  // namespace

absl::StatusOr<v1::Graph> GraphToProto(const std::vector<Var>& inputs,
                                       const std::vector<Var>& outputs, GraphForm form) {
  v1::Graph g;
  RETURN_IF_ERROR(GraphToProto(inputs, outputs, &g, form));
  return g;
}

absl::Status GraphToProto(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                          v1::Graph* out, GraphForm form) {
  v1::Graph& g = *out;
  g.Clear();
  std::vector<VariablePtr> ins, outs;
  // Where each variable is: an input, a constant or a node's output (kind, index, output).
  struct Ref {
    enum Kind { kInput, kConstant, kNodeOutput } kind;
    uint32_t index, output;
  };
  absl::flat_hash_map<const Variable*, Ref> refs;
  for (const Var& v : inputs) {
    if (!v.ok()) return v.status();
    if (v->tensor_type() == nullptr) return absl::InvalidArgumentError("a non-tensor input");
    v1::Input* in = g.add_inputs();
    in->set_name(v->name());
    *in->mutable_type() = ToProto(v.type());
    refs[v.ptr().get()] = {Ref::kInput, static_cast<uint32_t>(g.inputs_size() - 1), 0};
    ins.push_back(v.ptr());
  }
  for (const Var& v : outputs) {
    if (!v.ok()) return v.status();
    outs.push_back(v.ptr());
  }
  auto write_ref = [&](const VariablePtr& v, v1::ValueRef* out) -> absl::Status {
    auto it = refs.find(v.get());
    if (it == refs.end()) {
      if (!v->is_constant()) {
        return absl::InvalidArgumentError(absl::StrCat("MissingInputError: ", v->ToString(),
                                                       " is needed but is not among the inputs"));
      }
      const auto& c = static_cast<const Constant&>(*v);
      v1::Constant* msg = g.add_constants();
      *msg->mutable_value() = ToProto(c.data());
      ToProto(*c.tensor_type(), msg->mutable_type());
      it = refs.emplace(v.get(),
                        Ref{Ref::kConstant, static_cast<uint32_t>(g.constants_size() - 1), 0})
               .first;
    }
    const Ref& r = it->second;
    switch (r.kind) {
      case Ref::kInput:
        out->set_input(r.index);
        break;
      case Ref::kConstant:
        out->set_constant(r.index);
        break;
      case Ref::kNodeOutput:
        out->mutable_node_output()->set_node(r.index);
        out->mutable_node_output()->set_output(r.output);
        break;
    }
    return absl::OkStatus();
  };
  const std::vector<Apply*> order = IoToposort(ins, outs);
  g.mutable_nodes()->Reserve(static_cast<int>(order.size()));
  refs.reserve(refs.size() + order.size() * 2);
  // In the compact form each distinct op and type is written once, in the graph's tables.
  TableWriter op_table, type_table;
  for (Apply* node : order) {
    v1::Node* n = g.add_nodes();
    const Op& op = node->op();
    if (form == GraphForm::kCompact) {
      n->set_op_index(op_table.Index(
          &op, [&] { return op.Key(); }, [&] { OpToProto(op, g.add_ops()); }));
    } else {
      OpToProto(op, n->mutable_op());
    }
    for (const VariablePtr& in : node->inputs()) {
      RETURN_IF_ERROR(write_ref(in, n->add_inputs()));
    }
    for (int o = 0; o < node->num_outputs(); ++o) {
      const TensorType& type = *node->output_ptr(o)->tensor_type();
      if (form == GraphForm::kCompact) {
        n->add_output_type_indices(type_table.Index(
            &type, [&] { return type.ToString(); }, [&] { ToProto(type, g.add_types()); }));
      } else {
        ToProto(type, n->add_output_types());
      }
      refs[node->output_ptr(o)] = {Ref::kNodeOutput, static_cast<uint32_t>(g.nodes_size() - 1),
                                   static_cast<uint32_t>(o)};
    }
  }
  for (const VariablePtr& v : outs) {
    RETURN_IF_ERROR(write_ref(v, g.add_outputs()));
  }
  return absl::OkStatus();
}

absl::StatusOr<ProtoGraph> GraphFromProto(const v1::Graph& g, const GraphLimits& limits) {
  return GraphFromProto(g, limits, {});
}

namespace {

// GraphFromProto's phases over one message, in the order they report errors: inputs, constants,
// the compact form's tables, each node, then the outputs. Each keeps what later ones refer to.
class GraphReader {
 public:
  GraphReader(const v1::Graph& g, const GraphLimits& limits) : g_(g), limits_(limits) {}

  absl::StatusOr<ProtoGraph> Read(const std::vector<const v1::ValueRef*>& extra_outputs) {
    if (g_.nodes_size() > limits_.max_nodes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the graph has ", g_.nodes_size(), " nodes, more than the limit of ", limits_.max_nodes));
    }
    RETURN_IF_ERROR(ReadInputs());
    RETURN_IF_ERROR(ReadConstants());
    RETURN_IF_ERROR(ReadTables());
    for (int i = 0; i < g_.nodes_size(); ++i) RETURN_IF_ERROR(ReadNode(i));
    RETURN_IF_ERROR(ReadOutputs(extra_outputs));
    return std::move(result_);
  }

 private:
  absl::Status ReadInputs() {
    for (int i = 0; i < g_.inputs_size(); ++i) {
      absl::StatusOr<TensorTypePtr> t = FromProto(g_.inputs(i).type());
      if (!t.ok()) return Invalid(absl::StrCat("input ", i), t.status().message());
      result_.inputs.push_back(Var(Variable::Make(*t, g_.inputs(i).name())));
    }
    return absl::OkStatus();
  }

  absl::Status ReadConstants() {
    int64_t constant_bytes = 0;
    for (int i = 0; i < g_.constants_size(); ++i) {
      const std::string where = absl::StrCat("constant ", i);
      const v1::Constant& c = g_.constants(i);
      absl::StatusOr<Tensor> value =
          FromProto(c.value(), limits_.max_constant_bytes - constant_bytes);
      if (!value.ok()) return Invalid(where, value.status().message());
      constant_bytes += value->nbytes();
      TypePtr type;
      if (c.has_type()) {
        absl::StatusOr<TensorTypePtr> t = FromProto(c.type());
        if (!t.ok()) return Invalid(where, t.status().message());
        type = *t;
      } else {
        StaticShape shape(value->shape().begin(), value->shape().end());
        type = TensorType::Make(value->dtype(), shape);
      }
      absl::StatusOr<std::shared_ptr<Constant>> constant = Constant::MakeChecked(type, *value);
      if (!constant.ok()) return Invalid(where, constant.status().message());
      constants_.push_back(*constant);
    }
    return absl::OkStatus();
  }

  // The compact form's tables, decoded once: their nodes share ops and types. A table needs no
  // more entries than the graph has nodes (each distinct one used at least once).
  absl::Status ReadTables() {
    if (g_.ops_size() > g_.nodes_size() || g_.types_size() > g_.nodes_size()) {
      return absl::InvalidArgumentError(absl::StrCat("the graph's tables have ", g_.ops_size(),
                                                     " ops and ", g_.types_size(), " types for ",
                                                     g_.nodes_size(), " nodes"));
    }
    for (int i = 0; i < g_.ops_size(); ++i) {
      absl::StatusOr<OpPtr> op = OpFromProto(g_.ops(i));
      if (!op.ok()) return Invalid(absl::StrCat("op ", i), op.status().message());
      op_table_.push_back(*std::move(op));
    }
    for (int i = 0; i < g_.types_size(); ++i) {
      absl::StatusOr<TensorTypePtr> t = FromProto(g_.types(i));
      if (!t.ok()) return Invalid(absl::StrCat("type ", i), t.status().message());
      type_table_.push_back(*std::move(t));
    }
    return absl::OkStatus();
  }

  // Node i: its op, its inputs, the node its op makes of them, and the output types it states.
  absl::Status ReadNode(int i) {
    const v1::Node& n = g_.nodes(i);
    const std::string where = absl::StrCat("node ", i);
    absl::StatusOr<OpPtr> op = NodeOp(n);
    if (!op.ok()) return Invalid(where, op.status().message());
    std::vector<VariablePtr> inputs;
    for (int k = 0; k < n.inputs_size(); ++k) {
      ASSIGN_OR_RETURN(VariablePtr v, Resolve(n.inputs(k), absl::StrCat(where, " input ", k), i));
      inputs.push_back(v);
    }
    absl::StatusOr<ApplyPtr> node = (*op)->MakeNode(inputs);
    if (!node.ok()) return Invalid(where, node.status().message());
    node_values_ += (*node)->num_outputs();
    if (node_values_ > limits_.max_nodes) {
      return absl::InvalidArgumentError(absl::StrCat("the graph's nodes have more than ",
                                                     limits_.max_nodes, " outputs, the limit"));
    }
    RETURN_IF_ERROR(CheckOutputTypes(n, **node, where));
    node_outputs_.push_back((*node)->outputs());
    return absl::OkStatus();
  }

  // A node's op: inline, or an index into the ops table.
  absl::StatusOr<OpPtr> NodeOp(const v1::Node& n) const {
    if (n.has_op() || op_table_.empty()) return OpFromProto(n.op());
    if (n.op_index() < op_table_.size()) return op_table_[n.op_index()];
    return absl::InvalidArgumentError(
        absl::StrCat("op_index ", n.op_index(), " of ", op_table_.size(), " ops"));
  }

  // The output types a node states (inline or by index into the types table), if any, must be
  // the ones its op inferred.
  absl::Status CheckOutputTypes(const v1::Node& n, const Apply& node,
                                const std::string& where) const {
    if (n.output_types_size() > 0 && n.output_type_indices_size() > 0) {
      return Invalid(where, "both output_types and output_type_indices");
    }
    const int given = n.output_types_size() + n.output_type_indices_size();
    if (given > 0 && given != node.num_outputs()) {
      return Invalid(where,
                     absl::StrCat(given, " output types for ", node.num_outputs(), " outputs"));
    }
    for (int o = 0; o < given; ++o) {
      absl::StatusOr<TensorTypePtr> t;
      if (n.output_types_size() > 0) {
        t = FromProto(n.output_types(o));
      } else if (n.output_type_indices(o) < type_table_.size()) {
        t = type_table_[n.output_type_indices(o)];
      } else {
        t = absl::InvalidArgumentError(absl::StrCat("output_type_indices ",
                                                    n.output_type_indices(o), " of ",
                                                    type_table_.size(), " types"));
      }
      if (!t.ok()) return Invalid(where, t.status().message());
      const Type& inferred = *node.output_ptr(o)->type();
      if (!inferred.Equals(**t)) {
        return Invalid(where, absl::StrCat("output ", o, " has type ", inferred.ToString(),
                                           " but the graph says ", (*t)->ToString()));
      }
    }
    return absl::OkStatus();
  }

  // The graph's outputs, then `extra_outputs`, numbered after them.
  absl::Status ReadOutputs(const std::vector<const v1::ValueRef*>& extra_outputs) {
    std::vector<const v1::ValueRef*> outputs;
    for (const v1::ValueRef& r : g_.outputs()) outputs.push_back(&r);
    outputs.insert(outputs.end(), extra_outputs.begin(), extra_outputs.end());
    for (size_t i = 0; i < outputs.size(); ++i) {
      ASSIGN_OR_RETURN(VariablePtr v, Resolve(*outputs[i], absl::StrCat("output ", i), -1));
      result_.outputs.push_back(Var(v));
    }
    return absl::OkStatus();
  }

  // What a reference names, among what has been read so far; `current_node` is the node whose
  // input it is, -1 for an output.
  absl::StatusOr<VariablePtr> Resolve(const v1::ValueRef& r, const std::string& where,
                                      int current_node) const {
    switch (r.ref_case()) {
      case v1::ValueRef::kInput:
        if (r.input() >= result_.inputs.size()) {
          return Invalid(
              where, absl::StrCat("refers to input ", r.input(), " of ", result_.inputs.size()));
        }
        return result_.inputs[r.input()].ptr();
      case v1::ValueRef::kConstant:
        if (r.constant() >= constants_.size()) {
          return Invalid(
              where, absl::StrCat("refers to constant ", r.constant(), " of ", constants_.size()));
        }
        return constants_[r.constant()];
      case v1::ValueRef::kNodeOutput: {
        const uint32_t n = r.node_output().node(), o = r.node_output().output();
        if (n >= node_outputs_.size()) {
          return Invalid(where, absl::StrCat("refers to node ", n, ", which does not come before ",
                                             current_node < 0 ? "the outputs"
                                                              : absl::StrCat("node ", current_node),
                                             " (references must point to earlier nodes)"));
        }
        if (o >= node_outputs_[n].size()) {
          return Invalid(where, absl::StrCat("refers to output ", o, " of node ", n, ", which has ",
                                             node_outputs_[n].size()));
        }
        return node_outputs_[n][o];
      }
      default:
        return Invalid(where, "an empty reference");
    }
  }

  const v1::Graph& g_;
  const GraphLimits& limits_;
  ProtoGraph result_;
  std::vector<VariablePtr> constants_;
  std::vector<OpPtr> op_table_;            // the compact form's ops
  std::vector<TensorTypePtr> type_table_;  // and types
  std::vector<std::vector<VariablePtr>> node_outputs_;
  int64_t node_values_ = 0;  // the nodes' outputs, which max_nodes bounds too (Split has many)
};

}  // namespace

absl::StatusOr<ProtoGraph> GraphFromProto(const v1::Graph& g, const GraphLimits& limits,
                                          const std::vector<const v1::ValueRef*>& extra_outputs) {
  return GraphReader(g, limits).Read(extra_outputs);
}

v1::Input SharedInputToProto(const std::string& name, const Tensor& value) {
  v1::Input input;
  input.set_name(name);
  input.set_shared(name);
  input.mutable_type()->set_dtype(ToProto(value.dtype()));
  for (int64_t d : value.shape()) {
    v1::StaticDim* dim = input.mutable_type()->add_shape();
    dim->set_known(true);
    dim->set_size(d);
  }
  return input;
}

}  // namespace kiln
