#include "core/text/graph_json.h"

#include <algorithm>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>

#include "core/graph/inner_graph.h"
#include "core/graph/op.h"
#include "core/graph/traversal.h"
#include "core/graph/type.h"
#include "core/ops/composite.h"
#include "core/ops/elemwise.h"

namespace kiln {
namespace {

constexpr size_t kMaxConstantLabel = 48;  // characters of a constant's text shown as its label

void WriteAttr(const AttrValue& value, Json& out) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          out.Int(v);
        } else if constexpr (std::is_same_v<T, double>) {
          out.Number(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out.String(v);
        } else {
          out.BeginArray();
          for (int64_t i : v) out.Int(i);
          out.EndArray();
        }
      },
      value);
}

void WriteType(const Variable& v, Json& out) {
  out.Key("type").String(v.type()->ToString());
  if (const TensorType* t = v.tensor_type()) {
    out.Key("shape").BeginArray();
    for (const StaticDim& d : t->shape()) d.has_value() ? out.Int(*d) : out.Null();
    out.EndArray();
  }
}

// A Composite's scalar program as an inner graph: its inputs, constants and instructions as
// nodes, each register's use an edge.
void WriteScalarProgram(const ScalarProgram& p, Json& out) {
  const int inputs = p.num_inputs(), constants = static_cast<int>(p.constants.size());
  const auto scalar = [](DType dtype) { return "Scalar(" + DTypeName(dtype) + ")"; };
  const auto leaf = [&](int id, const char* kind, const std::string& label, DType dtype) {
    out.BeginObject().Key("id").Int(id).Key("kind").String(kind).Key("label").String(label);
    out.Key("type").String(scalar(dtype)).Key("shape").BeginArray().EndArray().EndObject();
  };
  out.BeginObject().Key("nodes").BeginArray();
  for (int i = 0; i < inputs; ++i) leaf(i, "input", "i" + std::to_string(i), p.input_dtypes[i]);
  for (int c = 0; c < constants; ++c) {
    leaf(inputs + c, "constant", p.constants[c].ToString(), p.constants[c].dtype());
  }
  for (size_t k = 0; k < p.instrs.size(); ++k) {
    const ScalarProgram::Instr& instr = p.instrs[k];
    out.BeginObject().Key("id").Int(inputs + constants + static_cast<int64_t>(k));
    out.Key("kind").String("apply").Key("label").String(instr.op.Name());
    out.Key("op").String("ScalarOp").Key("props").BeginObject().EndObject();
    out.Key("outputs").BeginArray().BeginObject().Key("name").String("");
    out.Key("type").String(scalar(instr.dtype)).Key("shape").BeginArray().EndArray();
    out.EndObject().EndArray().Key("inner").Null().EndObject();
  }
  out.EndArray().Key("edges").BeginArray();
  for (size_t k = 0; k < p.instrs.size(); ++k) {
    const std::vector<int>& args = p.instrs[k].args;
    for (size_t a = 0; a < args.size(); ++a) {
      out.BeginObject().Key("from").Int(args[a]).Key("output").Int(0);
      out.Key("to").Int(inputs + constants + static_cast<int64_t>(k));
      out.Key("input").Int(static_cast<int64_t>(a)).Key("destroyed").Bool(false);
      out.Key("view").Bool(false).EndObject();
    }
  }
  out.EndArray().Key("outputs").BeginArray();
  for (int r : p.outputs) out.BeginObject().Key("from").Int(r).Key("output").Int(0).EndObject();
  out.EndArray().EndObject();
}

// Where each variable of the graph comes from: a node id and its output index.
struct Source {
  int node = 0, output = 0;
};

class GraphWriter {
 public:
  GraphWriter(Json& out, int depth) : out_(out), depth_(depth) {}

  void Write(const std::vector<VariablePtr>& inputs, const std::vector<VariablePtr>& outputs) {
    const std::vector<Apply*> order = IoToposort(inputs, outputs);
    out_.BeginObject().Key("nodes").BeginArray();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Variable& v = *inputs[i];
      Leaf(v, "input", v.name().empty() ? "input " + std::to_string(i) : v.name());
    }
    for (const Apply* node : order) {
      for (const VariablePtr& in : node->inputs()) SourceOf(*in);
      Node(*node);
    }
    for (const VariablePtr& v : outputs) SourceOf(*v);  // an output that is a leaf
    out_.EndArray().Key("edges").BeginArray();
    for (const Apply* node : order) Edges(*node);
    out_.EndArray().Key("outputs").BeginArray();
    for (const VariablePtr& v : outputs) {
      const Source s = sources_.at(v.get());
      out_.BeginObject().Key("from").Int(s.node).Key("output").Int(s.output).EndObject();
    }
    out_.EndArray().EndObject();
  }

 private:
  // The source of `v`, written as a constant or input node when it is a leaf first seen here.
  Source SourceOf(const Variable& v) {
    auto it = sources_.find(&v);
    if (it != sources_.end()) return it->second;
    if (v.is_constant()) {
      std::string label = v.ToString();
      if (label.size() > kMaxConstantLabel) label = label.substr(0, kMaxConstantLabel - 3) + "...";
      return Leaf(v, "constant", label);
    }
    return Leaf(v, "input", v.name().empty() ? "input" : v.name());  // a leaf not listed
  }

  Source Leaf(const Variable& v, const char* kind, const std::string& label) {
    const int id = next_id_++;
    out_.BeginObject().Key("id").Int(id).Key("kind").String(kind).Key("label").String(label);
    WriteType(v, out_);
    out_.EndObject();
    return sources_[&v] = Source{id, 0};
  }

  void Node(const Apply& node) {
    const int id = next_id_++;
    ids_[&node] = id;
    const Op& op = node.op();
    out_.BeginObject().Key("id").Int(id).Key("kind").String("apply");
    out_.Key("label").String(op.Name()).Key("op").String(std::string(op.type_name()));
    out_.Key("props").BeginObject();
    const OpAttrs attrs = op.Attrs();  // (values() is a view into it)
    for (const auto& [key, value] : attrs.values()) {
      out_.Key(key);
      WriteAttr(value, out_);
    }
    out_.EndObject().Key("outputs").BeginArray();
    for (int i = 0; i < node.num_outputs(); ++i) {
      const Variable& v = *node.output_ptr(i);
      sources_[&v] = Source{id, i};
      out_.BeginObject().Key("name").String(v.name());
      WriteType(v, out_);
      out_.EndObject();
    }
    out_.EndArray().Key("inner");
    const HasInnerGraph* inner = InnerGraphOf(op);
    const Elemwise* elemwise = op.As<Elemwise>();
    if (inner != nullptr && depth_ < kMaxInnerGraphDepth) {
      GraphWriter(out_, depth_ + 1).Write(inner->inner().inputs, inner->inner().outputs);
    } else if (elemwise != nullptr && elemwise->scalar_op().program != nullptr) {
      WriteScalarProgram(*elemwise->scalar_op().program, out_);
    } else {
      out_.Null();
    }
    out_.EndObject();
  }

  void Edges(const Apply& node) {
    const auto marks = [&](const std::vector<std::pair<int, int>>& map, int input) {
      return std::any_of(map.begin(), map.end(), [&](const auto& p) { return p.second == input; });
    };
    const auto destroyed = node.op().destroy_map(), views = node.op().view_map();
    for (int i = 0; i < node.num_inputs(); ++i) {
      const Source s = sources_.at(node.inputs()[i].get());
      out_.BeginObject().Key("from").Int(s.node).Key("output").Int(s.output);
      out_.Key("to").Int(ids_.at(&node)).Key("input").Int(i);
      out_.Key("destroyed").Bool(marks(destroyed, i)).Key("view").Bool(marks(views, i));
      out_.EndObject();
    }
  }

  Json& out_;
  const int depth_;
  int next_id_ = 0;
  std::unordered_map<const Variable*, Source> sources_;
  std::unordered_map<const Apply*, int> ids_;
};

}  // namespace

void WriteGraphJson(const std::vector<VariablePtr>& inputs,
                    const std::vector<VariablePtr>& outputs, Json& out) {
  GraphWriter(out, 0).Write(inputs, outputs);
}

std::string GraphJson(const std::vector<VariablePtr>& inputs,
                      const std::vector<VariablePtr>& outputs) {
  Json out;
  WriteGraphJson(inputs, outputs, out);
  return out.text();
}

}  // namespace kiln
