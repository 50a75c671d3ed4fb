#include "proto/convert/graph_convert.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/graph/op.h"
#include "core/graph/op_registry.h"
#include "core/graph/status_macros.h"
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

absl::StatusOr<ProtoGraph> GraphFromProto(const v1::Graph& g, const GraphLimits& limits,
                                          const std::vector<const v1::ValueRef*>& extra_outputs) {
  if (g.nodes_size() > limits.max_nodes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the graph has ", g.nodes_size(), " nodes, more than the limit of ", limits.max_nodes));
  }
  ProtoGraph result;
  for (int i = 0; i < g.inputs_size(); ++i) {
    absl::StatusOr<TensorTypePtr> t = FromProto(g.inputs(i).type());
    if (!t.ok()) return Invalid(absl::StrCat("input ", i), t.status().message());
    result.inputs.push_back(Var(Variable::Make(*t, g.inputs(i).name())));
  }
  std::vector<VariablePtr> constants;
  int64_t constant_bytes = 0;
  for (int i = 0; i < g.constants_size(); ++i) {
    const std::string where = absl::StrCat("constant ", i);
    const v1::Constant& c = g.constants(i);
    absl::StatusOr<Tensor> value = FromProto(c.value(), limits.max_constant_bytes - constant_bytes);
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
    constants.push_back(*constant);
  }
  std::vector<std::vector<VariablePtr>> node_outputs;
  auto resolve = [&](const v1::ValueRef& r, const std::string& where,
                     int current_node) -> absl::StatusOr<VariablePtr> {
    switch (r.ref_case()) {
      case v1::ValueRef::kInput:
        if (r.input() >= result.inputs.size()) {
          return Invalid(where,
                         absl::StrCat("refers to input ", r.input(), " of ", result.inputs.size()));
        }
        return result.inputs[r.input()].ptr();
      case v1::ValueRef::kConstant:
        if (r.constant() >= constants.size()) {
          return Invalid(
              where, absl::StrCat("refers to constant ", r.constant(), " of ", constants.size()));
        }
        return constants[r.constant()];
      case v1::ValueRef::kNodeOutput: {
        const uint32_t n = r.node_output().node(), o = r.node_output().output();
        if (n >= node_outputs.size()) {
          return Invalid(where, absl::StrCat("refers to node ", n, ", which does not come before ",
                                             current_node < 0 ? "the outputs"
                                                              : absl::StrCat("node ", current_node),
                                             " (references must point to earlier nodes)"));
        }
        if (o >= node_outputs[n].size()) {
          return Invalid(where, absl::StrCat("refers to output ", o, " of node ", n, ", which has ",
                                             node_outputs[n].size()));
        }
        return node_outputs[n][o];
      }
      default:
        return Invalid(where, "an empty reference");
    }
  };
  // The compact form's tables, decoded once: their nodes share ops and types. A table needs no
  // more entries than the graph has nodes (each distinct one used at least once).
  if (g.ops_size() > g.nodes_size() || g.types_size() > g.nodes_size()) {
    return absl::InvalidArgumentError(absl::StrCat("the graph's tables have ", g.ops_size(),
                                                   " ops and ", g.types_size(), " types for ",
                                                   g.nodes_size(), " nodes"));
  }
  std::vector<OpPtr> op_table;
  for (int i = 0; i < g.ops_size(); ++i) {
    absl::StatusOr<OpPtr> op = OpFromProto(g.ops(i));
    if (!op.ok()) return Invalid(absl::StrCat("op ", i), op.status().message());
    op_table.push_back(*std::move(op));
  }
  std::vector<TensorTypePtr> type_table;
  for (int i = 0; i < g.types_size(); ++i) {
    absl::StatusOr<TensorTypePtr> t = FromProto(g.types(i));
    if (!t.ok()) return Invalid(absl::StrCat("type ", i), t.status().message());
    type_table.push_back(*std::move(t));
  }
  int64_t node_values = 0;  // the nodes' outputs, which max_nodes bounds too (Split has many)
  for (int i = 0; i < g.nodes_size(); ++i) {
    const v1::Node& n = g.nodes(i);
    const std::string where = absl::StrCat("node ", i);
    absl::StatusOr<OpPtr> op;
    if (n.has_op() || op_table.empty()) {
      op = OpFromProto(n.op());
    } else if (n.op_index() < op_table.size()) {
      op = op_table[n.op_index()];
    } else {
      op = absl::InvalidArgumentError(
          absl::StrCat("op_index ", n.op_index(), " of ", op_table.size(), " ops"));
    }
    if (!op.ok()) return Invalid(where, op.status().message());
    std::vector<VariablePtr> inputs;
    for (int k = 0; k < n.inputs_size(); ++k) {
      ASSIGN_OR_RETURN(VariablePtr v, resolve(n.inputs(k), absl::StrCat(where, " input ", k), i));
      inputs.push_back(v);
    }
    absl::StatusOr<ApplyPtr> node = (*op)->MakeNode(inputs);
    if (!node.ok()) return Invalid(where, node.status().message());
    node_values += (*node)->num_outputs();
    if (node_values > limits.max_nodes) {
      return absl::InvalidArgumentError(absl::StrCat("the graph's nodes have more than ",
                                                     limits.max_nodes, " outputs, the limit"));
    }
    if (n.output_types_size() > 0 && n.output_type_indices_size() > 0) {
      return Invalid(where, "both output_types and output_type_indices");
    }
    const int given = n.output_types_size() + n.output_type_indices_size();
    if (given > 0 && given != (*node)->num_outputs()) {
      return Invalid(where,
                     absl::StrCat(given, " output types for ", (*node)->num_outputs(), " outputs"));
    }
    for (int o = 0; o < given; ++o) {
      absl::StatusOr<TensorTypePtr> t;
      if (n.output_types_size() > 0) {
        t = FromProto(n.output_types(o));
      } else if (n.output_type_indices(o) < type_table.size()) {
        t = type_table[n.output_type_indices(o)];
      } else {
        t = absl::InvalidArgumentError(absl::StrCat(
            "output_type_indices ", n.output_type_indices(o), " of ", type_table.size(), " types"));
      }
      if (!t.ok()) return Invalid(where, t.status().message());
      const Type& inferred = *(*node)->output_ptr(o)->type();
      if (!inferred.Equals(**t)) {
        return Invalid(where, absl::StrCat("output ", o, " has type ", inferred.ToString(),
                                           " but the graph says ", (*t)->ToString()));
      }
    }
    node_outputs.push_back((*node)->outputs());
  }
  std::vector<const v1::ValueRef*> outputs;
  for (const v1::ValueRef& r : g.outputs()) outputs.push_back(&r);
  outputs.insert(outputs.end(), extra_outputs.begin(), extra_outputs.end());
  for (size_t i = 0; i < outputs.size(); ++i) {
    ASSIGN_OR_RETURN(VariablePtr v, resolve(*outputs[i], absl::StrCat("output ", i), -1));
    result.outputs.push_back(Var(v));
  }
  return result;
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
