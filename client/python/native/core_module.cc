// kiln._core: Kiln's graph model (core/) for Python, through pybind11. Types, variables, nodes
// and ops are core's own objects, so Python sees core's type rules, printed names and wire
// encoding; every op core registers is reachable by its Aesara class name (make_node), the day
// it is added. Errors are kiln._core.GraphError (a TypeError and a ValueError, as Aesara raises
// either while building) with core's message; grad's are kiln._core.CallError(code, message),
// code the gRPC status name the server's Grad would answer.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "client/python/native/executable.h"
#include "client/python/native/lane_plain_call.h"
#include "client/python/native/lane_ring.h"
#include "core/grad/gradient.h"
#include "core/graph/basic.h"
#include "core/graph/constructors.h"
#include "core/graph/inner_graph.h"
#include "core/graph/op.h"
#include "core/graph/op_registry.h"
#include "core/graph/traversal.h"
#include "core/graph/type.h"
#include "core/ops/composite.h"
#include "core/ops/scalar_op.h"
#include "core/tensor/tensor.h"
#include "core/scan/scan.h"
#include "core/text/dot.h"
#include "core/text/dprint.h"
#include "core/text/graph_json.h"
#include "core/text/pp.h"
#include "kiln/v1/graph.pb.h"
#include "proto/convert/graph_convert.h"

namespace py = pybind11;

namespace kiln {
namespace {

// kiln._core.GraphError, made when the module loads; kiln._core.CallError, DefineExecutable's.
PyObject* graph_error = nullptr;
PyObject* call_error = nullptr;

[[noreturn]] void ThrowGraphError(const std::string& message) {
  PyErr_SetString(graph_error, message.c_str());
  throw py::error_already_set();
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  if (!value.ok()) ThrowGraphError(std::string(value.status().message()));
  return *std::move(value);
}

DType DTypeOf(const std::string& name) {
  std::optional<DType> dtype = ParseDType(name);
  if (!dtype) ThrowGraphError("unknown dtype '" + name + "'");
  return *dtype;
}

// The type of that dtype and static shape, its known dims held to a tensor's bounds (as types
// from the wire are): no dim is negative, nor their product beyond what a tensor may hold.
TensorTypePtr TypeOf(const std::string& dtype, const StaticShape& shape) {
  Shape known;
  for (const StaticDim& d : shape) {
    if (d && *d < 0) ThrowGraphError("TensorType: static shape has a negative dimension");
    if (d) known.push_back(*d);
  }
  if (absl::Status s = CheckStaticShape("TensorType", known); !s.ok()) {
    ThrowGraphError(std::string(s.message()));
  }
  return TensorType::Make(DTypeOf(dtype), shape);
}

// A Python attribute value (int, float, str, bool or a sequence of ints) as core's.
AttrValue AttrFromPython(const std::string& key, const py::handle& value) {
  if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) {
    return value.cast<int64_t>();
  }
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::sequence>(value)) return value.cast<std::vector<int64_t>>();
  ThrowGraphError("attribute '" + key + "': expected an int, float, str or list of ints");
}

OpAttrs AttrsFromPython(const py::dict& attrs) {
  OpAttrs out;
  for (const auto& [k, v] : attrs) {
    const std::string key = py::str(k);
    out.Set(key, AttrFromPython(key, v));
  }
  return out;
}

py::object AttrToPython(const AttrValue& value) {
  return std::visit([](const auto& v) -> py::object { return py::cast(v); }, value);
}

std::vector<Var> Vars(const std::vector<VariablePtr>& vs) {
  return std::vector<Var>(vs.begin(), vs.end());
}

std::vector<VariablePtr> Ptrs(const std::vector<Var>& vs) {
  std::vector<VariablePtr> out;
  for (const Var& v : vs) out.push_back(v.ptr());
  return out;
}

// CallError(code, message) of a failed status, as the server answers it.
[[noreturn]] void ThrowCallError(const absl::Status& status) {
  py::object args =
      py::make_tuple(absl::StatusCodeToString(status.code()), std::string(status.message()));
  PyErr_SetObject(call_error, args.ptr());
  throw py::error_already_set();
}

// A constant's value as a new NumPy array (C order, this machine's byte order).
py::array ConstantData(const Variable& v) {
  const auto* c = dynamic_cast<const Constant*>(&v);
  if (c == nullptr) ThrowGraphError(v.ToString() + " is not a constant");
  const Tensor data = c->data().Contiguous();
  std::vector<py::ssize_t> shape(data.shape().begin(), data.shape().end());
  py::array out(py::dtype(std::string(DTypeName(data.dtype()))), shape);
  if (data.nbytes() > 0) std::memcpy(out.mutable_data(), data.raw_data(), data.nbytes());
  return out;
}

// Aesara's keyword arguments of grad, by their Python spellings.
DisconnectedInputs DisconnectedInputsOf(const std::string& value) {
  if (value == "raise") return DisconnectedInputs::kRaise;
  if (value == "warn") return DisconnectedInputs::kWarn;
  if (value == "ignore") return DisconnectedInputs::kIgnore;
  ThrowGraphError(
      "Invalid value for keyword 'disconnected_inputs', valid values are 'ignore', "
      "'warn' and 'raise'.");
}

ReturnDisconnected ReturnDisconnectedOf(std::string value) {
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (value == "zero") return ReturnDisconnected::kZero;
  if (value == "none") return ReturnDisconnected::kNone;
  if (value == "disconnected") return ReturnDisconnected::kDisconnected;
  ThrowGraphError(
      "Invalid value for keyword 'return_disconnected', valid values are 'zero', "
      "'None' and 'Disconnected'.");
}

NullGradients NullGradientsOf(const std::string& value) {
  if (value == "raise") return NullGradients::kRaise;
  if (value == "return") return NullGradients::kReturn;
  ThrowGraphError(
      "Invalid value for keyword 'null_gradients', valid values are 'raise' and "
      "'return'.");
}

// aesara.gradient.grad (or, with `jacobian`, the Jacobian of a vector cost) in this process:
// (results, warnings), a result None where return_disconnected="None" asks for it. Ctrl-C
// stops it (KeyboardInterrupt); core's errors are CallError with the code the server's Grad
// would answer.
py::tuple Grad(const std::optional<VariablePtr>& cost, const std::vector<VariablePtr>& wrt,
               const std::vector<VariablePtr>& consider_constant,
               const std::vector<std::pair<VariablePtr, VariablePtr>>& known_grads,
               const std::string& disconnected_inputs, const std::string& return_disconnected,
               const std::string& null_gradients, bool jacobian) {
  GradOptions options;
  options.disconnected_inputs = DisconnectedInputsOf(disconnected_inputs);
  options.return_disconnected = ReturnDisconnectedOf(return_disconnected);
  options.null_gradients = NullGradientsOf(null_gradients);
  options.add_names = false;  // kiln.gradient names them, on the Python variables too
  for (const VariablePtr& v : consider_constant) options.consider_constant.emplace_back(v);
  for (const auto& [v, g] : known_grads) options.known_grads.emplace_back(v, g);
  std::vector<std::string> warnings;
  options.warnings = &warnings;
  bool interrupted = false;
  options.interrupt = [&interrupted]() -> absl::Status {
    if (PyErr_CheckSignals() == 0) return absl::OkStatus();
    interrupted = true;
    return absl::CancelledError("grad: interrupted");
  };
  const Var c = cost ? Var(*cost) : Var();
  absl::StatusOr<std::vector<Var>> grads =
      jacobian ? kiln::jacobian(c, Vars(wrt), options) : grad(c, Vars(wrt), options);
  if (interrupted) throw py::error_already_set();  // the signal handler's exception
  if (!grads.ok()) ThrowCallError(grads.status());
  std::vector<std::optional<VariablePtr>> out;
  for (const Var& g : *grads) out.push_back(g.ok() ? std::optional(g.ptr()) : std::nullopt);
  return py::make_tuple(out, warnings);
}

// The nodes computing `outputs` that are not behind `known` (variables Python already has),
// each after the nodes computing its inputs, as (op, inputs, outputs, output types) with a
// type as (dtype, shape), or None when not a tensor: what a Python view of a graph core built
// adds, in one call.
py::list NewNodes(const std::vector<VariablePtr>& outputs, const std::vector<VariablePtr>& known) {
  std::unordered_set<const Variable*> stop;
  for (const VariablePtr& v : known) stop.insert(v.get());
  py::list nodes;
  for (Apply* node :
       ToposortUntil(outputs, [&stop](const Variable* v) { return stop.contains(v); })) {
    py::list types;
    for (int i = 0; i < node->num_outputs(); ++i) {
      const TensorType* t = node->output_ptr(i)->tensor_type();
      if (t == nullptr) {
        types.append(py::none());
      } else {
        types.append(py::make_tuple(DTypeName(t->dtype()), py::tuple(py::cast(t->shape()))));
      }
    }
    nodes.append(py::make_tuple(std::const_pointer_cast<Op>(node->op_ptr()), node->inputs(),
                                node->outputs(), types));
  }
  return nodes;
}

}  // namespace
}  // namespace kiln

PYBIND11_MODULE(_core, m) {
  using namespace kiln;
  m.doc() = "Kiln's graph model (core) for Python";
  py::object bases = py::make_tuple(py::handle(PyExc_TypeError), py::handle(PyExc_ValueError));
  graph_error = PyErr_NewException("kiln._core.GraphError", bases.ptr(), nullptr);
  m.attr("GraphError") = py::handle(graph_error);
  DefineExecutable(m);
  DefineLaneRing(m);
  DefinePlainLaneCall(m);
  call_error = m.attr("CallError").ptr();

  py::class_<Type, std::shared_ptr<Type>>(m, "Type")
      .def("__str__", &Type::ToString)
      .def("__eq__", [](const Type& a, const Type& b) { return a.Equals(b); })
      .def("__hash__", &Type::Hash);

  py::class_<TensorType, Type, std::shared_ptr<TensorType>>(m, "TensorType")
      .def(py::init([](const std::string& dtype, const StaticShape& shape) {
             return std::const_pointer_cast<TensorType>(TypeOf(dtype, shape));
           }),
           py::arg("dtype"), py::arg("shape"))
      .def_property_readonly("dtype", [](const TensorType& t) { return DTypeName(t.dtype()); })
      .def_property_readonly("shape",
                             [](const TensorType& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("ndim", &TensorType::ndim)
      .def("__repr__", &TensorType::ToString);

  py::class_<Op, std::shared_ptr<Op>>(m, "Op")
      .def_property_readonly("type_name", [](const Op& op) { return std::string(op.type_name()); })
      .def_property_readonly("attrs",
                             [](const Op& op) {
                               py::dict out;
                               const OpAttrs attrs = op.Attrs();
                               for (const auto& [k, v] : attrs.values()) {
                                 out[py::str(k)] = AttrToPython(v);
                               }
                               return out;
                             })
      .def_property_readonly("destroy_map",
                             [](const Op& op) {
                               py::dict out;
                               for (const auto& [o, i] : op.destroy_map()) {
                                 if (!out.contains(py::int_(o))) out[py::int_(o)] = py::list();
                                 out[py::int_(o)].cast<py::list>().append(i);
                               }
                               return out;
                             })
      .def("__str__", &Op::Name)
      .def("__eq__", [](const Op& a, const Op& b) { return a == b; })
      .def("__hash__", &Op::Hash);

  py::class_<Apply, ApplyPtr>(m, "Apply")
      .def_property_readonly("op",
                             [](const Apply& a) { return std::const_pointer_cast<Op>(a.op_ptr()); })
      .def_property_readonly("inputs", &Apply::inputs)
      .def_property_readonly("outputs", &Apply::outputs)
      .def_property_readonly(
          "connection_pattern", [](const Apply& a) { return a.op().ConnectionPattern(a); },
          "The op's connection pattern on this node: per input, per output, connected.")
      .def("__str__", &Apply::ToString);

  py::class_<Variable, VariablePtr>(m, "Variable")
      .def_property_readonly(
          "type", [](const Variable& v) { return std::const_pointer_cast<Type>(v.type()); })
      .def_property_readonly("owner",
                             [](const Variable& v) -> ApplyPtr {
                               return v.owner() ? v.owner()->shared_from_this() : nullptr;
                             })
      .def_property_readonly("index", &Variable::index)
      .def_property("name", &Variable::name, &Variable::set_name)
      .def_property_readonly("is_constant", &Variable::is_constant)
      .def_property_readonly("data", &ConstantData, "A constant's value, as a new array.")
      .def("__str__", &Variable::ToString);

  m.def(
      "tensor",
      [](const std::string& dtype, const StaticShape& shape, const std::string& name) {
        return Variable::Make(TypeOf(dtype, shape), name);
      },
      py::arg("dtype"), py::arg("shape"), py::arg("name") = "",
      "A graph input of that dtype and static shape (None: an unknown dim).");
  m.def(
      "constant",
      [](const std::string& dtype, const Shape& shape, const py::bytes& data,
         const std::string& name) {
        Tensor t = ValueOrThrow(Tensor::FromBytes(DTypeOf(dtype), shape, std::string(data)));
        return constant(std::move(t), name).ptr();
      },
      py::arg("dtype"), py::arg("shape"), py::arg("data"), py::arg("name") = "",
      "A constant from its C-order little-endian bytes.");
  m.def(
      "make_op",
      [](const std::string& type_name, const py::dict& attrs) {
        return std::const_pointer_cast<Op>(ValueOrThrow(MakeOp(type_name, AttrsFromPython(attrs))));
      },
      py::arg("type_name"), py::arg("attrs"),
      "The op registered as type_name with these attributes (its str is Aesara's name).");
  m.def(
      "make_node",
      [](const std::string& type_name, const py::dict& attrs,
         const std::vector<VariablePtr>& inputs) {
        OpPtr op = ValueOrThrow(MakeOp(type_name, AttrsFromPython(attrs)));
        return ValueOrThrow(op->MakeNode(inputs));
      },
      py::arg("type_name"), py::arg("attrs"), py::arg("inputs"),
      "The node of the op registered as type_name with these attributes, type-checked.");
  m.def("grad", &Grad, py::arg("cost"), py::arg("wrt"), py::arg("consider_constant"),
        py::arg("known_grads"), py::arg("disconnected_inputs") = "raise",
        py::arg("return_disconnected") = "zero", py::arg("null_gradients") = "raise",
        py::arg("jacobian") = false,
        "aesara.gradient.grad in this process (jacobian: the Jacobian of a vector cost, one "
        "backward pass batched over its rows): (gradients, warnings).");
  m.def(
      "inplace_node",
      [](const std::vector<VariablePtr>& outputs) -> std::optional<std::string> {
        for (const Apply* node : ToposortUntil(outputs, [](const Variable*) { return false; })) {
          if (!node->op().destroy_map().empty()) return node->ToString();
        }
        return std::nullopt;
      },
      py::arg("outputs"),
      "The first node above the outputs whose op overwrites an input (its str, as Aesara "
      "prints a node), or None: function()'s accept_inplace check, in one walk in C++.");
  m.def("new_nodes", &NewNodes, py::arg("outputs"), py::arg("known"),
        "The nodes computing outputs that are not behind the `known` variables, in a "
        "topological order: (op, inputs, outputs, output types as (dtype, shape) or None).");
  m.def("registered_ops", &RegisteredOps, "The Aesara class names of every registered op.");
  m.def(
      "op_fields",
      [] {
        py::dict out;
        for (const std::string& name : RegisteredOps()) {
          py::list fields;
          for (const OpField& f : ValueOrThrow(FieldsOfOp(name))) {
            fields.append(py::make_tuple(
                f.name, f.default_value ? AttrToPython(*f.default_value) : py::none()));
          }
          out[py::str(name)] = fields;
        }
        return out;
      },
      "Each registered op's fields, in wire order: {class name: [(field, default or None)]}, "
      "what kiln.ops generates the op classes from.");
  m.def(
      "scalar_ops",
      [] {
        py::dict ops;
        for (int k = 0; k < NumScalarOps(); ++k) {
          const auto kind = static_cast<ScalarOpKind>(k);
          if (kind == ScalarOpKind::kComposite) continue;
          ops[py::str(ScalarOpName(kind))] = ScalarOpArity(kind);
        }
        return ops;
      },
      "Elemwise's scalar ops: name -> arity (-1: two or more).");
  m.def(
      "scalar_program",
      [](const std::vector<VariablePtr>& inputs, const std::vector<VariablePtr>& outputs) {
        auto program = ValueOrThrow(
            ScalarProgram::FromGraph(std::vector<Var>(inputs.begin(), inputs.end()),
                                     std::vector<Var>(outputs.begin(), outputs.end())));
        return py::make_tuple(EncodeScalarProgram(*program), program->ToString());
      },
      py::arg("inputs"), py::arg("outputs"),
      "Aesara's Composite of an elementwise graph: (the program as Elemwise's `program` "
      "attribute, its text \"(i0 + exp(i1))\"); errors name the first node that is not "
      "elementwise.");
  m.def(
      "dprint",
      [](const std::vector<VariablePtr>& outputs, bool print_type, const std::string& ids,
         int depth, bool stop_on_name, int max_nesting) {
        DprintOptions options;
        options.print_type = print_type;
        options.ids = ids == "CHAR" ? DprintIds::kChar
                      : ids == ""   ? DprintIds::kNone
                                    : DprintIds::kInt;
        options.depth = depth;
        options.stop_on_name = stop_on_name;
        options.max_nesting = max_nesting;
        return DebugPrint(Vars(outputs), options);
      },
      py::arg("outputs"), py::arg("print_type") = false, py::arg("ids") = "CHAR",
      py::arg("depth") = -1, py::arg("stop_on_name") = false, py::arg("max_nesting") = 100,
      "Aesara's debugprint text of the outputs' graph (ids: CHAR, int or \"\").");
  m.def(
      "dot",
      [](const std::vector<VariablePtr>& outputs, bool compact, bool var_with_name_simple) {
        DotOptions options;
        options.compact = compact;
        options.var_with_name_simple = var_with_name_simple;
        return ToDot(Vars(outputs), options);
      },
      py::arg("outputs"), py::arg("compact") = true, py::arg("var_with_name_simple") = false,
      "pydotprint's DOT text of the outputs' graph, for graphviz.");
  m.def(
      "graph_json",
      [](const std::vector<VariablePtr>& outputs) { return GraphJson({}, outputs); },
      py::arg("outputs"),
      "The outputs' graph as the console and kiln.d3viz draw it (server/console/API.md).");
  m.def(
      "pp", [](const VariablePtr& output) { return ValueOrThrow(PrettyPrint(Var(output))); },
      py::arg("output"), "Aesara's pp text of the output's expression.");
  m.def(
      "graph_to_proto",
      [](const std::vector<VariablePtr>& inputs, const std::vector<VariablePtr>& outputs) {
        v1::Graph g = ValueOrThrow(GraphToProto(Vars(inputs), Vars(outputs)));
        return py::bytes(g.SerializeAsString());
      },
      "The kiln.v1.Graph bytes computing outputs from inputs.");
  // aesara.scan in two calls around the Python step function (kiln/scan/basic.py).
  py::class_<ScanBuilder>(m, "ScanBuilder")
      .def_property_readonly("step_args", [](const ScanBuilder& b) { return Ptrs(b.step_args()); })
      .def(
          "finish",
          [](const ScanBuilder& b, const std::vector<VariablePtr>& outputs,
             const std::vector<std::pair<VariablePtr, VariablePtr>>& updates,
             const std::optional<VariablePtr>& until) {
            ScanStep step{Vars(outputs)};
            for (const auto& [k, v] : updates) step.updates.push_back({Var(k), Var(v)});
            if (until) step.until = Var(*until);
            ScanResult r = ValueOrThrow(b.Finish(step));
            std::vector<std::pair<VariablePtr, VariablePtr>> ups;
            std::vector<VariablePtr> all = Ptrs(r.outputs);
            for (const auto& [k, v] : r.updates) {
              ups.push_back({k.ptr(), v.ptr()});
              all.push_back(v.ptr());
            }
            std::vector<VariablePtr> leaves;
            for (const VariablePtr& o : all) {  // (an output that is a leaf itself)
              if (o->owner() == nullptr && !o->is_constant()) leaves.push_back(o);
            }
            for (Variable* v : Ancestors(all)) {
              if (v->owner() == nullptr) continue;
              for (const VariablePtr& in : v->owner()->inputs()) {
                if (in->owner() == nullptr && !in->is_constant()) leaves.push_back(in);
              }
            }
            return py::make_tuple(Ptrs(r.outputs), ups, leaves);
          },
          "(outputs, updates, the outer graph's leaves) of the loop.");
  m.def(
      "scan_start",
      [](const std::vector<std::pair<VariablePtr, std::vector<int64_t>>>& sequences,
         const std::vector<std::pair<std::optional<VariablePtr>, std::vector<int64_t>>>&
             outputs_info,
         const std::vector<VariablePtr>& non_sequences, const std::optional<VariablePtr>& n_steps,
         int64_t truncate_gradient, bool go_backwards, const std::string& name, bool strict) {
        ScanArgs args;
        for (const auto& [x, taps] : sequences) args.sequences.push_back({Var(x), taps});
        for (const auto& [init, taps] : outputs_info) {
          ScanOutput o;
          if (init) o.initial = Var(*init);
          o.taps = taps;
          args.outputs_info.push_back(std::move(o));
        }
        args.non_sequences = Vars(non_sequences);
        if (n_steps) args.n_steps = Var(*n_steps);
        args.truncate_gradient = truncate_gradient;
        args.go_backwards = go_backwards;
        args.name = name;
        args.strict = strict;
        return ValueOrThrow(ScanBuilder::Start(std::move(args)));
      },
      "The ScanBuilder of aesara.scan's arguments (sequences and outputs_info as (variable, "
      "taps) pairs).");
  m.def(
      "encode_inner_graph",
      [](const std::vector<VariablePtr>& inputs, const std::vector<VariablePtr>& outputs) {
        return ValueOrThrow(EncodeInnerGraph(inputs, outputs));
      },
      "The text of the graph from inputs to outputs, as ops with an inner graph carry it "
      "(OpFromGraph's `inner`).");
  m.def(
      "graph_from_proto",
      [](const py::bytes& bytes) {
        v1::Graph g;
        if (!g.ParseFromString(std::string(bytes))) ThrowGraphError("not a kiln.v1.Graph");
        ProtoGraph pg = ValueOrThrow(GraphFromProto(g));
        return py::make_tuple(Ptrs(pg.inputs), Ptrs(pg.outputs));
      },
      "(inputs, outputs) of kiln.v1.Graph bytes, every node made and type-checked by core.");
}
