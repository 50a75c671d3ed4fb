#include "proto/onnx/export.h"

#include <climits>
#include <exception>
#include <memory>
#include <span>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/graph/traversal.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/alloc.h"
#include "core/ops/composite.h"
#include "core/ops/conv.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/ifelse.h"
#include "core/ops/indexing.h"
#include "core/ops/linalg.h"
#include "core/ops/nnet.h"
#include "core/ops/pool.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/scan/scan_op.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "proto/onnx/onnx_tensor.h"

namespace kiln::onnx {
namespace {

using K = ScalarOpKind;

// The model being written: unique names for values, initializers, nodes.
class Emitter {
 public:
  explicit Emitter(::onnx::GraphProto* graph) : graph_(graph), state_(std::make_shared<State>()) {}
  // An emitter of a subgraph (an If's branch, a Loop's body): the names given so far stay
  // visible (ONNX's subgraphs read the outer scope), and new ones stay unique.
  Emitter(::onnx::GraphProto* subgraph, const Emitter& outer)
      : graph_(subgraph), state_(outer.state_) {}

  ::onnx::GraphProto* graph() { return graph_; }
  std::string Fresh(absl::string_view hint = "v") {
    return absl::StrCat(hint, "_", state_->next++);
  }
  // The name of a variable's value, given once.
  std::string& Name(const Variable* v) { return state_->names[v]; }
  bool Named(const Variable* v) const { return state_->names.contains(v); }
  // A fresh name for a variable's value.
  std::string NameAnew(const Variable* v) { return state_->names[v] = Fresh(); }
  // An initializer holding `t`; its name.
  std::string Constant(const Tensor& t) {
    const std::string name = Fresh("const");
    *graph_->add_initializer() = TensorToOnnx(t, name);
    return name;
  }
  std::string Int64s(std::vector<int64_t> values) {
    return Constant(
        *Tensor::FromValues<int64_t>(DType::kInt64, {static_cast<int64_t>(values.size())}, values));
  }
  ::onnx::NodeProto* Add(absl::string_view op, std::vector<std::string> inputs,
                         std::vector<std::string> outputs) {
    ::onnx::NodeProto* n = graph_->add_node();
    n->set_op_type(std::string(op));
    n->set_name(Fresh(op));
    for (auto& i : inputs) n->add_input(std::move(i));
    for (auto& o : outputs) n->add_output(std::move(o));
    return n;
  }
  // A one-output node; its output's name.
  std::string Op(absl::string_view op, std::vector<std::string> inputs, std::string out = "") {
    if (out.empty()) out = Fresh();
    Add(op, std::move(inputs), {out});
    return out;
  }
  std::string Cast(const std::string& x, DType from, DType to) {
    if (from == to) return x;
    ::onnx::NodeProto* n = Add("Cast", {x}, {Fresh()});
    SetInt(n, "to", DTypeToOnnx(to));
    return n->output(0);
  }
  // A 1-d tensor of the scalars `values` (each cast from `from` to `to`).
  std::string VectorOf(const std::vector<std::string>& values, const std::vector<DType>& from,
                       DType to) {
    if (values.empty()) return Constant(Tensor::Zeros(to, {0}));
    std::vector<std::string> parts;
    for (size_t i = 0; i < values.size(); ++i) {
      parts.push_back(Op("Unsqueeze", {Cast(values[i], from[i], to), Int64s({0})}));
    }
    ::onnx::NodeProto* n = Add("Concat", parts, {Fresh()});
    SetInt(n, "axis", 0);
    return n->output(0);
  }
  static void SetInt(::onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void SetInts(::onnx::NodeProto* n, const std::string& name,
                      const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

 private:
  struct State {
    absl::flat_hash_map<const Variable*, std::string> names;
    int64_t next = 0;
  };
  ::onnx::GraphProto* graph_;
  std::shared_ptr<State> state_;
};

absl::Status NoEquivalent(absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat(what, " has no ONNX equivalent in Kiln's exporter"));
}

// ONNX's op for a scalar op applied to inputs of one type (arithmetic, comparisons, logic).
const char* OnnxOf(K k) {
  switch (k) {
    case K::kAdd:
      return "Add";
    case K::kSub:
      return "Sub";
    case K::kMul:
      return "Mul";
    case K::kTrueDiv:
      return "Div";
    case K::kPow:
      return "Pow";
    case K::kMaximum:
      return "Max";
    case K::kMinimum:
      return "Min";
    case K::kLt:
      return "Less";
    case K::kGt:
      return "Greater";
    case K::kLe:
      return "LessOrEqual";
    case K::kGe:
      return "GreaterOrEqual";
    case K::kEq:
      return "Equal";
    case K::kNeg:
      return "Neg";
    case K::kAbs:
      return "Abs";
    case K::kExp:
      return "Exp";
    case K::kLog:
      return "Log";
    case K::kSqrt:
      return "Sqrt";
    case K::kTanh:
      return "Tanh";
    case K::kSigmoid:
      return "Sigmoid";
    case K::kSoftplus:
      return "Softplus";
    case K::kSin:
      return "Sin";
    case K::kCos:
      return "Cos";
    case K::kTan:
      return "Tan";
    case K::kArcsin:
      return "Asin";
    case K::kArccos:
      return "Acos";
    case K::kArctan:
      return "Atan";
    case K::kSinh:
      return "Sinh";
    case K::kCosh:
      return "Cosh";
    case K::kArcsinh:
      return "Asinh";
    case K::kArccosh:
      return "Acosh";
    case K::kArctanh:
      return "Atanh";
    case K::kErf:
      return "Erf";
    case K::kFloor:
      return "Floor";
    case K::kCeil:
      return "Ceil";
    case K::kSgn:
      return "Sign";
    case K::kReciprocal:
      return "Reciprocal";
    case K::kRoundHalfToEven:
      return "Round";
    case K::kIsNan:
      return "IsNaN";
    case K::kIsInf:
      return "IsInf";
    case K::kIdentity:
      return "Identity";
    default:
      return nullptr;
  }
}

bool IsComparison(K k) {
  return k == K::kLt || k == K::kGt || k == K::kLe || k == K::kGe || k == K::kEq || k == K::kNeq;
}

// One scalar op over named inputs of the given dtypes, giving `out` of dtype `out_dtype`.
absl::Status EmitScalar(Emitter& e, const ScalarOp& op, const std::vector<std::string>& in,
                        const std::vector<DType>& in_dtypes, DType out_dtype,
                        const std::string& out);

absl::Status EmitComposite(Emitter& e, const ScalarProgram& p, const std::vector<std::string>& in,
                           const std::vector<DType>& in_dtypes,
                           const std::vector<std::string>& outs) {
  std::vector<std::string> reg = in;
  std::vector<DType> reg_dtype = in_dtypes;
  for (const Tensor& c : p.constants) {
    reg.push_back(e.Constant(c));
    reg_dtype.push_back(c.dtype());
  }
  for (const ScalarProgram::Instr& instr : p.instrs) {
    std::vector<std::string> args;
    std::vector<DType> arg_dtypes;
    for (int r : instr.args) {
      args.push_back(reg[r]);
      arg_dtypes.push_back(reg_dtype[r]);
    }
    const std::string name = e.Fresh();
    RETURN_IF_ERROR(EmitScalar(e, instr.op, args, arg_dtypes, instr.dtype, name));
    reg.push_back(name);
    reg_dtype.push_back(instr.dtype);
  }
  for (size_t k = 0; k < outs.size(); ++k) e.Op("Identity", {reg[p.outputs[k]]}, outs[k]);
  return absl::OkStatus();
}

absl::Status EmitScalar(Emitter& e, const ScalarOp& op, const std::vector<std::string>& in,
                        const std::vector<DType>& in_dtypes, DType out_dtype,
                        const std::string& out) {
  const K k = op.kind;
  if (k == K::kComposite) return EmitComposite(e, *op.program, in, in_dtypes, {out});
  if (k == K::kCast) {
    e.Op("Identity", {e.Cast(in[0], in_dtypes[0], out_dtype)}, out);
    return absl::OkStatus();
  }
  // The dtype the inputs are computed in: the result's, or for a comparison their common one.
  DType compute = out_dtype;
  if (IsComparison(k)) {
    compute = in_dtypes[0];
    for (DType d : in_dtypes) {
      if (d != compute) compute = IsFloat(d) || IsFloat(compute) ? DType::kFloat64 : DType::kInt64;
    }
  }
  std::vector<std::string> args;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool condition = k == K::kSwitch && i == 0;
    args.push_back(condition ? e.Cast(in[i], in_dtypes[i], DType::kBool)
                             : e.Cast(in[i], in_dtypes[i], compute));
  }
  if (k == K::kSwitch) {
    e.Op("Where", args, out);
  } else if (k == K::kNeq) {
    e.Op("Not", {e.Op("Equal", args)}, out);
  } else if ((k == K::kAnd || k == K::kOr || k == K::kXor || k == K::kInvert) &&
             out_dtype == DType::kBool) {
    e.Op(k == K::kAnd ? "And" : k == K::kOr ? "Or" : k == K::kXor ? "Xor" : "Not", args, out);
  } else if (k == K::kSqr) {
    e.Op("Mul", {args[0], args[0]}, out);
  } else if (k == K::kLog1p || k == K::kExpm1) {
    const std::string one =
        e.Constant(*Tensor::FromValues<double>(compute, {}, std::vector<double>{1}));
    if (k == K::kLog1p) {
      e.Op("Log", {e.Op("Add", {args[0], one})}, out);
    } else {
      e.Op("Sub", {e.Op("Exp", {args[0]}), one}, out);
    }
  } else if (k == K::kSecond) {  // Aesara's fill: the second input broadcast to the first's shape
    e.Op("Expand", {args[1], e.Op("Shape", {args[0]})}, out);
  } else if (k == K::kMod && !IsFloat(compute)) {  // ONNX's Mod takes the divisor's sign too
    e.Op("Mod", args, out);
  } else if (k == K::kMod || k == K::kIntDiv) {  // a - floor(a / b) * b; floor(a / b)
    const bool whole = !IsFloat(compute);
    const std::string a = whole ? e.Cast(args[0], compute, DType::kFloat64) : args[0];
    const std::string b = whole ? e.Cast(args[1], compute, DType::kFloat64) : args[1];
    const std::string q = e.Op("Floor", {e.Op("Div", {a, b})});
    if (k == K::kIntDiv) {
      e.Op("Identity", {whole ? e.Cast(q, DType::kFloat64, compute) : q}, out);
    } else {
      e.Op("Sub", {a, e.Op("Mul", {q, b})}, out);
    }
  } else if (k == K::kClip) {
    e.Op("Clip", args, out);
  } else if (const char* name = OnnxOf(k); name != nullptr) {
    // Add and Mul take two inputs in ONNX: a longer sum or product is a chain.
    std::string acc = args[0];
    if (args.size() == 1) {
      e.Op(name, {acc}, out);
    } else {
      for (size_t i = 1; i < args.size(); ++i) {
        acc = e.Op(name, {acc, args[i]}, i + 1 == args.size() ? out : "");
      }
    }
  } else {
    return NoEquivalent(absl::StrCat("the scalar op ", op.Name()));
  }
  return absl::OkStatus();
}

void SetValueInfo(::onnx::ValueInfoProto* info, const std::string& name, const TensorType& t);
absl::Status EmitGraph(Emitter& e, std::span<const VariablePtr> ins,
                       std::span<const VariablePtr> outs);

// A subgraph attribute of `n` (an If's branch, a Loop's body), empty.
::onnx::GraphProto* AddGraph(::onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

// A subgraph output `value` (a name in scope) under a new name, of type t.
void AddGraphOutput(Emitter& sub, const std::string& value, const TensorType& t) {
  const std::string name = sub.Op("Identity", {value});
  SetValueInfo(sub.graph()->add_output(), name, t);
}

// IfElse as If: each branch a subgraph giving the values of its inputs (computed before the If:
// ONNX's If reads them from the outer scope).
absl::Status EmitIf(Emitter& e, const Apply& node, const std::vector<std::string>& in,
                    const std::vector<DType>& in_dtypes, const std::vector<std::string>& out) {
  const int n_outs = node.num_outputs();
  ::onnx::NodeProto* n = e.Add("If", {e.Cast(in[0], in_dtypes[0], DType::kBool)}, out);
  for (int branch = 0; branch < 2; ++branch) {
    Emitter sub(AddGraph(n, branch == 0 ? "then_branch" : "else_branch"), e);
    for (int k = 0; k < n_outs; ++k) {
      const int i = 1 + branch * n_outs + k;
      AddGraphOutput(sub, in[i], *node.inputs()[i]->tensor_type());
    }
  }
  return absl::OkStatus();
}

// Scan as Loop: each state carried as a buffer of its last `depth` values (its initial value's
// leading dim), a tap t reading entry depth + t; a sequence's tap t read at the step plus t less
// the sequence's lowest tap; the non-sequences and sequences read from the outer scope; the
// states' values at every step and the nit-sots as the Loop's scan outputs; a while loop's
// condition negated into the Loop's.
absl::Status EmitLoop(Emitter& e, const Apply& node, const Scan& scan,
                      const std::vector<std::string>& in, const std::vector<DType>& in_dtypes,
                      const std::vector<std::string>& out) {
  const ScanAttrs& a = scan.attrs();
  const InnerGraph& body = scan.inner();
  const auto& outer = node.inputs();
  const int n_states = a.n_states();
  std::vector<std::string> loop_in = {
      e.Cast(in[0], in_dtypes[0], DType::kInt64),
      e.Constant(*Tensor::FromValues<int64_t>(DType::kBool, {}, std::vector<int64_t>{1}))};
  for (int j = 0; j < n_states; ++j) loop_in.push_back(in[scan.outer_init(j)]);
  // The Loop's outputs: the final buffers, then a scan output per state kept whole and per nit-sot.
  std::vector<std::string> finals, stacked(node.num_outputs());
  for (int j = 0; j < n_states; ++j) finals.push_back(e.Fresh("buffer"));
  std::vector<std::string> loop_out = finals;
  for (int o = 0; o < node.num_outputs(); ++o) {
    const bool whole = o >= n_states || !a.state_keep_last[o];
    if (whole) loop_out.push_back(stacked[o] = e.Fresh("steps"));
  }
  ::onnx::NodeProto* n = e.Add("Loop", loop_in, loop_out);
  Emitter sub(AddGraph(n, "body"), e);
  ::onnx::GraphProto* g = sub.graph();
  const std::string step = sub.Fresh("step"), cond_in = sub.Fresh("cond");
  SetValueInfo(g->add_input(), step, TensorType(DType::kInt64, {}));
  SetValueInfo(g->add_input(), cond_in, TensorType(DType::kBool, {}));
  auto scalar = [&](int64_t v) {
    return sub.Constant(*Tensor::FromValues<int64_t>(DType::kInt64, {}, std::vector<int64_t>{v}));
  };
  // Sequences: tap t at the step + t - lowest.
  int64_t at = 0;
  for (int k = 0; k < a.n_seqs(); ++k) {
    const int64_t count = a.seq_tap_counts[k];
    int64_t lowest = a.seq_taps[at];
    for (int64_t i = 0; i < count; ++i) lowest = std::min(lowest, a.seq_taps[at + i]);
    for (int64_t i = 0; i < count; ++i, ++at) {
      const std::string index = sub.Op("Add", {step, scalar(a.seq_taps[at] - lowest)});
      sub.Op("Gather", {in[scan.outer_seq(k)], index}, sub.NameAnew(body.inputs[at].get()));
    }
  }
  // States: a buffer each, carried.
  std::vector<std::string> buffers;
  std::vector<int64_t> depths;
  for (int j = 0, tap = 0; j < n_states; ++j) {
    const TensorType& init = *outer[scan.outer_init(j)]->tensor_type();
    buffers.push_back(sub.Fresh("buffer"));
    SetValueInfo(g->add_input(), buffers[j], init);
    depths.push_back(a.StateDepth(j));
    for (int64_t i = 0; i < a.state_tap_counts[j]; ++i, ++tap) {
      sub.Op("Gather", {buffers[j], scalar(depths[j] + a.state_taps[tap])},
             sub.NameAnew(body.inputs[at + tap].get()));
    }
  }
  for (int l = 0; l < a.n_non_seqs; ++l) {
    sub.Op("Identity", {in[scan.outer_non_seq(l)]},
           sub.NameAnew(body.inputs[scan.inner_non_seq(l)].get()));
  }
  RETURN_IF_ERROR(EmitGraph(sub, body.inputs, body.outputs));
  // The body's outputs: the condition, the new buffers, then the scan outputs.
  std::string cond_out = sub.Op("Identity", {cond_in});
  if (a.as_while) {
    const Variable* until = body.outputs.back().get();
    cond_out = sub.Op("Not", {sub.Cast(sub.Name(until), until->tensor_type()->dtype(), DType::kBool)});
  }
  SetValueInfo(g->add_output(), cond_out, TensorType(DType::kBool, {}));
  for (int j = 0; j < n_states; ++j) {
    const std::string value = sub.Name(body.outputs[j].get());
    std::string next = sub.Op("Unsqueeze", {value, sub.Int64s({0})});
    if (depths[j] > 1) {
      const std::string kept =
          sub.Op("Slice", {buffers[j], sub.Int64s({1}), sub.Int64s({depths[j]}), sub.Int64s({0})});
      ::onnx::NodeProto* c = sub.Add("Concat", {kept, next}, {sub.Fresh()});
      Emitter::SetInt(c, "axis", 0);
      next = c->output(0);
    }
    AddGraphOutput(sub, next, *outer[scan.outer_init(j)]->tensor_type());
  }
  for (int o = 0; o < node.num_outputs(); ++o) {
    if (stacked[o].empty()) continue;
    const Variable* v = body.outputs[o].get();
    AddGraphOutput(sub, sub.Name(v), *v->tensor_type());
  }
  // A state kept whole is its scan output; one kept last is its final buffer's last entry.
  for (int o = 0; o < node.num_outputs(); ++o) {
    if (!stacked[o].empty()) {
      e.Op("Identity", {stacked[o]}, out[o]);
    } else {
      e.Op("Gather", {finals[o], e.Constant(*Tensor::FromValues<int64_t>(
                                      DType::kInt64, {}, std::vector<int64_t>{depths[o] - 1}))},
           out[o]);
    }
  }
  return absl::OkStatus();
}

// Subtensor: its slices as one Slice (a bound left out: the end its step's sign implies), then
// its integer indices as Gathers, the last axis first (each removes its axis).
absl::Status EmitSubtensor(Emitter& e, const Subtensor& op, const std::vector<std::string>& in,
                           const std::vector<DType>& in_dtypes, const std::string& out) {
  auto vector_of = [&](const std::vector<std::string>& scalars) {  // (already int64)
    return e.VectorOf(scalars, std::vector<DType>(scalars.size(), DType::kInt64), DType::kInt64);
  };
  auto scalar = [&](int64_t v) {
    return e.Constant(*Tensor::FromValues<int64_t>(DType::kInt64, {}, std::vector<int64_t>{v}));
  };
  std::vector<std::string> starts, ends, steps, axes;
  std::vector<std::pair<int64_t, std::string>> picks;  // (axis, index)
  size_t next = 1;
  auto bound = [&](bool given) -> std::string {  // the next bound input, as int64
    if (!given) return "";
    const size_t i = next++;
    return e.Cast(in[i], in_dtypes[i], DType::kInt64);
  };
  for (size_t axis = 0; axis < op.idx().size(); ++axis) {
    const IndexEntry& entry = op.idx()[axis];
    if (!entry.is_slice) {
      picks.push_back({static_cast<int64_t>(axis), bound(true)});
      continue;
    }
    std::string start = bound(entry.has_start), stop = bound(entry.has_stop);
    const std::string step = entry.has_step ? bound(true) : scalar(1);
    if (start.empty() || stop.empty()) {  // Python's defaults, by the step's sign
      const std::string backwards = e.Op("Less", {step, scalar(0)});
      if (start.empty()) start = e.Op("Where", {backwards, scalar(INT64_MAX), scalar(0)});
      if (stop.empty()) stop = e.Op("Where", {backwards, scalar(INT64_MIN), scalar(INT64_MAX)});
    }
    starts.push_back(start);
    ends.push_back(stop);
    steps.push_back(step);
    axes.push_back(scalar(static_cast<int64_t>(axis)));
  }
  std::string x = in[0];
  if (!starts.empty()) {
    x = e.Op("Slice", {x, vector_of(starts), vector_of(ends), vector_of(axes), vector_of(steps)});
  }
  for (auto it = picks.rbegin(); it != picks.rend(); ++it) {
    ::onnx::NodeProto* n = e.Add("Gather", {x, it->second}, {e.Fresh()});
    Emitter::SetInt(n, "axis", it->first);
    x = n->output(0);
  }
  e.Op("Identity", {x}, out);
  return absl::OkStatus();
}

// AdvancedSubtensor with full slices and integer arrays on consecutive axes: one array is a
// Gather along its axis; several from the first axis a GatherND of the arrays broadcast and
// stacked. Other index lists (boolean masks, bounded slices, new axes) are not written.
absl::Status EmitAdvancedSubtensor(Emitter& e, const Apply& node, const AdvancedSubtensor& op,
                                   const std::vector<std::string>& in,
                                   const std::vector<DType>& in_dtypes, const std::string& out) {
  std::vector<int64_t> axes;
  std::vector<std::string> arrays;
  int64_t axis = 0;
  size_t next = 1;
  for (const AdvIndexEntry& entry : op.idx()) {
    const bool full_slice = entry.kind == AdvIndexEntry::kSlice && !entry.has_start &&
                            !entry.has_stop && !entry.has_step;
    if (entry.kind == AdvIndexEntry::kTensor && IsInteger(in_dtypes[next])) {
      axes.push_back(axis++);
      arrays.push_back(e.Cast(in[next], in_dtypes[next], DType::kInt64));
      ++next;
    } else if (full_slice) {
      ++axis;
    } else {
      return NoEquivalent(absl::StrCat(node.op().Name(), " with index list ",
                                       op_decl::Codec<std::vector<AdvIndexEntry>>::Repr(op.idx())));
    }
  }
  const bool consecutive = !axes.empty() && axes.back() - axes.front() + 1 ==
                                                static_cast<int64_t>(axes.size());
  if (!consecutive || (axes.size() > 1 && axes.front() != 0)) {
    return NoEquivalent(absl::StrCat(node.op().Name(), " of integer arrays not on consecutive "
                                     "axes from the first"));
  }
  if (arrays.size() == 1) {
    ::onnx::NodeProto* n = e.Add("Gather", {in[0], arrays[0]}, {out});
    Emitter::SetInt(n, "axis", axes[0]);
    return absl::OkStatus();
  }
  // The arrays broadcast together, each given a last dim of 1, concatenated along it.
  std::string shape = e.Op("Shape", {arrays[0]});
  for (size_t k = 1; k < arrays.size(); ++k) {
    shape = e.Op("Shape", {e.Op("Add", {e.Op("Expand", {arrays[k], shape}),
                                        e.Op("Expand", {arrays[0], e.Op("Shape", {arrays[k]})})})});
  }
  std::vector<std::string> columns;
  for (const std::string& a : arrays) {
    columns.push_back(e.Op("Unsqueeze", {e.Op("Expand", {a, shape}), e.Int64s({-1})}));
  }
  ::onnx::NodeProto* stacked = e.Add("Concat", columns, {e.Fresh()});
  Emitter::SetInt(stacked, "axis", -1);
  e.Op("GatherND", {in[0], stacked->output(0)}, out);
  return absl::OkStatus();
}

// Pool as MaxPool or AveragePool over a (N, C, spatial...) input: ws, stride and pad constant;
// ignore_border=False as ceil_mode; sum as the average including pads times the window's size.
absl::Status EmitPool(Emitter& e, const Apply& node, const Pool& op,
                      const std::vector<std::string>& in, const std::string& out) {
  const auto& a = op.attrs();
  const int rank = node.inputs()[0]->tensor_type()->ndim();
  std::vector<std::vector<int64_t>> params;  // ws, stride, pad
  for (int i = 1; i <= 3; ++i) {
    const Variable& v = *node.inputs()[i];
    if (!v.is_constant()) return NoEquivalent("a Pool whose window, stride or pad is computed");
    const Tensor t = static_cast<const Constant&>(v).data().AsType(DType::kInt64).Contiguous();
    params.emplace_back(t.data<int64_t>(), t.data<int64_t>() + t.size());
  }
  if (rank != a.ndim + 2) {
    return NoEquivalent(absl::StrCat("a Pool of ", a.ndim, " dims over a rank-", rank, " input"));
  }
  const bool max_pool = a.mode == "max";
  ::onnx::NodeProto* n = e.Add(max_pool ? "MaxPool" : "AveragePool", {in[0]}, {e.Fresh()});
  Emitter::SetInts(n, "kernel_shape", params[0]);
  Emitter::SetInts(n, "strides", params[1]);
  std::vector<int64_t> pads = params[2];
  pads.insert(pads.end(), params[2].begin(), params[2].end());
  Emitter::SetInts(n, "pads", pads);
  if (!a.ignore_border) Emitter::SetInt(n, "ceil_mode", 1);
  if (!max_pool) Emitter::SetInt(n, "count_include_pad", a.mode == "average_exc_pad" ? 0 : 1);
  std::string y = n->output(0);
  if (a.mode == "sum") {
    int64_t cells = 1;
    for (int64_t w : params[0]) cells *= w;
    const DType dtype = node.outputs()[0]->tensor_type()->dtype();
    y = e.Op("Mul", {y, e.Constant(*Tensor::FromValues<double>(dtype, {},
                                                                std::vector<double>{double(cells)}))});
  }
  e.Op("Identity", {y}, out);
  return absl::OkStatus();
}

// One Apply as ONNX nodes writing its outputs' names.
absl::Status EmitNode(Emitter& e, const Apply& node) {
  const Op& op = node.op();
  std::vector<std::string> in, out;
  std::vector<DType> in_dtypes;
  for (const VariablePtr& v : node.inputs()) {
    in.push_back(e.Name(v.get()));
    in_dtypes.push_back(v->tensor_type() != nullptr ? v->tensor_type()->dtype() : DType::kFloat64);
  }
  for (int o = 0; o < node.num_outputs(); ++o) out.push_back(e.Name(node.outputs()[o].get()));
  const TensorType* t0 = node.output_ptr(0)->tensor_type();
  if (t0 == nullptr) return NoEquivalent(node.ToString());
  if (const auto* ew = dynamic_cast<const Elemwise*>(&op)) {
    if (ew->scalar_op().kind == K::kComposite) {
      return EmitComposite(e, *ew->scalar_op().program, in, in_dtypes, out);
    }
    return EmitScalar(e, ew->scalar_op(), in, in_dtypes, t0->dtype(), out[0]);
  }
  if (const auto* ds = dynamic_cast<const DimShuffle*>(&op)) {
    // Dropped dims squeezed, the kept ones permuted, the new ones inserted.
    const std::vector<int>& order = ds->new_order();
    const int n_in = static_cast<int>(ds->input_broadcastable().size());
    std::vector<int64_t> dropped, perm, inserted;
    std::vector<bool> kept(n_in, false);
    for (int d : order) {
      if (d >= 0) kept[d] = true;
    }
    for (int d = 0; d < n_in; ++d) {
      if (!kept[d]) dropped.push_back(d);
    }
    std::string x = in[0];
    if (!dropped.empty()) x = e.Op("Squeeze", {x, e.Int64s(dropped)});
    std::vector<int> rank_after(n_in, 0);  // each kept dim's position after the squeeze
    for (int d = 0, k = 0; d < n_in; ++d) rank_after[d] = kept[d] ? k++ : -1;
    for (int d : order) {
      if (d >= 0) perm.push_back(rank_after[d]);
    }
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
    if (!identity) {
      ::onnx::NodeProto* n = e.Add("Transpose", {x}, {e.Fresh()});
      Emitter::SetInts(n, "perm", perm);
      x = n->output(0);
    }
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i] < 0) inserted.push_back(static_cast<int64_t>(i));
    }
    if (!inserted.empty()) x = e.Op("Unsqueeze", {x, e.Int64s(inserted)});
    e.Op("Identity", {x}, out[0]);
    return absl::OkStatus();
  }
  if (dynamic_cast<const IfElse*>(&op) != nullptr) return EmitIf(e, node, in, in_dtypes, out);
  if (const auto* sub = dynamic_cast<const Subtensor*>(&op)) {
    return EmitSubtensor(e, *sub, in, in_dtypes, out[0]);
  }
  if (const auto* adv = dynamic_cast<const AdvancedSubtensor*>(&op)) {
    return EmitAdvancedSubtensor(e, node, *adv, in, in_dtypes, out[0]);
  }
  if (const auto* pool = dynamic_cast<const Pool*>(&op)) return EmitPool(e, node, *pool, in, out[0]);
  if (const auto* scan = dynamic_cast<const Scan*>(&op)) {
    return EmitLoop(e, node, *scan, in, in_dtypes, out);
  }
  const absl::string_view type = op.type_name();
  if (type == "MakeVector") {
    e.Op("Identity", {e.VectorOf(in, in_dtypes, t0->dtype())}, out[0]);
    return absl::OkStatus();
  }
  if (type == "Alloc") {  // the value broadcast to the dims given
    const std::vector<std::string> dims(in.begin() + 1, in.end());
    const std::vector<DType> dim_dtypes(in_dtypes.begin() + 1, in_dtypes.end());
    e.Op("Expand",
         {e.Cast(in[0], in_dtypes[0], t0->dtype()), e.VectorOf(dims, dim_dtypes, DType::kInt64)},
         out[0]);
    return absl::OkStatus();
  }
  if (type == "AdvancedSubtensor1") {
    e.Op("Gather", {in[0], e.Cast(in[1], in_dtypes[1], DType::kInt64)}, out[0]);
    return absl::OkStatus();
  }
  if (type == "Dot" || type == "Dot22" || type == "MatMul") {
    e.Op("MatMul",
         {e.Cast(in[0], in_dtypes[0], t0->dtype()), e.Cast(in[1], in_dtypes[1], t0->dtype())},
         out[0]);
    return absl::OkStatus();
  }
  if (const auto* r = dynamic_cast<const CAReduce*>(&op)) {
    static constexpr const char* kNames[] = {"ReduceSum", "ReduceProd", "ReduceMax",
                                             "ReduceMin", nullptr,      nullptr};
    const char* name = kNames[static_cast<int>(r->reduce())];
    if (name == nullptr) return NoEquivalent(node.ToString());
    std::vector<int64_t> axes;
    const int ndim = node.inputs()[0]->tensor_type()->ndim();
    if (r->axis().has_value()) {
      axes.assign(r->axis()->begin(), r->axis()->end());
    } else {
      for (int d = 0; d < ndim; ++d) axes.push_back(d);
    }
    const std::string x = e.Cast(in[0], in_dtypes[0], t0->dtype());
    if (axes.empty()) {
      e.Op("Identity", {x}, out[0]);
      return absl::OkStatus();
    }
    ::onnx::NodeProto* n;
    if (r->reduce() == ReduceKind::kSum) {
      n = e.Add(name, {x, e.Int64s(axes)}, {out[0]});
    } else {
      n = e.Add(name, {x}, {out[0]});
      Emitter::SetInts(n, "axes", axes);
    }
    Emitter::SetInt(n, "keepdims", 0);
    return absl::OkStatus();
  }
  if (type == "Reshape") {
    e.Op("Reshape", {in[0], e.Cast(in[1], in_dtypes[1], DType::kInt64)}, out[0]);
    return absl::OkStatus();
  }
  if (type == "SpecifyShape") {
    e.Op("Identity", {in[0]}, out[0]);
    return absl::OkStatus();
  }
  if (type == "Shape") {
    e.Op("Shape", {in[0]}, out[0]);
    return absl::OkStatus();
  }
  if (const auto* si = dynamic_cast<const ShapeI*>(&op)) {
    const std::string index =
        e.Constant(*Tensor::FromValues<int64_t>(DType::kInt64, {}, std::vector<int64_t>{si->i()}));
    e.Op("Gather", {e.Op("Shape", {in[0]}), index}, out[0]);
    return absl::OkStatus();
  }
  if (const auto* s = dynamic_cast<const Softmax*>(&op)) {
    ::onnx::NodeProto* n = e.Add("Softmax", {in[0]}, {out[0]});
    Emitter::SetInt(n, "axis", s->axis().value_or(-1));
    return absl::OkStatus();
  }
  if (const auto* s = dynamic_cast<const LogSoftmax*>(&op)) {
    ::onnx::NodeProto* n = e.Add("LogSoftmax", {in[0]}, {out[0]});
    Emitter::SetInt(n, "axis", s->axis().value_or(-1));
    return absl::OkStatus();
  }
  if (type == "Join") {
    const Variable& axis = *node.inputs()[0];
    if (!axis.is_constant()) return NoEquivalent("a Join along an axis computed at run time");
    ::onnx::NodeProto* n =
        e.Add("Concat", std::vector<std::string>(in.begin() + 1, in.end()), {out[0]});
    Emitter::SetInt(
        n, "axis",
        static_cast<int64_t>(static_cast<const Constant&>(axis).data().ElementAsDouble(0)));
    return absl::OkStatus();
  }
  if (const auto* conv = dynamic_cast<const AbstractConv2d*>(&op)) {
    const auto& a = conv->attrs();
    const TensorType& k = *node.inputs()[1]->tensor_type();
    std::string w = in[1];
    if (a.filter_flip) {  // ONNX's Conv is a correlation: the filters turned around
      ::onnx::NodeProto* n = e.Add("Slice",
                                   {w, e.Int64s({-1, -1}), e.Int64s({INT64_MIN, INT64_MIN}),
                                    e.Int64s({2, 3}), e.Int64s({-1, -1})},
                                   {e.Fresh()});
      w = n->output(0);
    }
    ::onnx::NodeProto* n = e.Add("Conv", {in[0], w}, {out[0]});
    std::vector<int64_t> pads(4, 0), kernel;
    for (int d = 0; d < 2; ++d) {
      std::optional<int64_t> size = k.shape()[2 + d];
      if (!size.has_value() && a.kshp.dims.size() == 4) size = a.kshp.dims[2 + d];  // the hint
      if (size.has_value()) kernel.push_back(*size);
      const int64_t dil = a.filter_dilation.empty() ? 1 : a.filter_dilation[d];
      if (a.border_mode.kind == ConvBorder::kPads) {
        const auto& p = a.border_mode.pads;
        pads[d] = p.size() == 4 ? p[2 * d] : p[d];
        pads[2 + d] = p.size() == 4 ? p[2 * d + 1] : p[d];
      } else if (a.border_mode.kind != ConvBorder::kValid) {
        if (!size.has_value()) return NoEquivalent("a half or full border of an unknown kernel");
        const int64_t extent = (*size - 1) * dil;
        pads[d] = pads[2 + d] = a.border_mode.kind == ConvBorder::kFull ? extent : extent / 2;
      }
    }
    Emitter::SetInts(n, "pads", pads);
    if (kernel.size() == 2) Emitter::SetInts(n, "kernel_shape", kernel);
    if (!a.subsample.empty())
      Emitter::SetInts(n, "strides", {a.subsample.begin(), a.subsample.end()});
    if (!a.filter_dilation.empty()) {
      Emitter::SetInts(n, "dilations", {a.filter_dilation.begin(), a.filter_dilation.end()});
    }
    Emitter::SetInt(n, "group", a.num_groups);
    return absl::OkStatus();
  }
  return NoEquivalent(node.op().Name());
}

void SetValueInfo(::onnx::ValueInfoProto* info, const std::string& name, const TensorType& t) {
  info->set_name(name);
  auto* tt = info->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(DTypeToOnnx(t.dtype()));
  auto* shape = tt->mutable_shape();
  for (size_t d = 0; d < t.shape().size(); ++d) {
    auto* dim = shape->add_dim();
    if (t.shape()[d].has_value()) {
      dim->set_dim_value(*t.shape()[d]);
    } else {
      dim->set_dim_param(absl::StrCat(name, "_d", d));
    }
  }
}

// The nodes between `ins` (named) and `outs`, in order; a constant they read becomes an
// initializer (named once per emitter's graph).
absl::Status EmitGraph(Emitter& e, std::span<const VariablePtr> ins,
                       std::span<const VariablePtr> outs) {
  for (Apply* node : IoToposort(ins, outs)) {
    RETURN_IF_ERROR(PollInterrupt());  // the call's deadline and cancellation
    for (const VariablePtr& v : node->inputs()) {
      if (e.Named(v.get())) continue;
      if (!v->is_constant()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the variable ", v->ToString(), " is not an input of the export"));
      }
      e.Name(v.get()) = e.Constant(static_cast<const Constant&>(*v).data());
    }
    for (const VariablePtr& o : node->outputs()) e.Name(o.get()) = e.Fresh();
    RETURN_IF_ERROR(EmitNode(e, *node));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> Export(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                                   const std::vector<std::string>& output_names,
                                   const ExportOptions& options) {
  if (options.opset < 13 || options.opset > 17) {
    return absl::InvalidArgumentError(
        absl::StrCat("opset ", options.opset, ": the exporter writes opsets 13 to 17"));
  }
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("kiln");
  model.add_opset_import()->set_version(options.opset);
  ::onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name(options.graph_name);
  Emitter e(graph);
  std::vector<VariablePtr> ins, outs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].ok()) return inputs[i].status();
    if (inputs[i]->tensor_type() == nullptr) return NoEquivalent("a non-tensor input");
    const std::string name =
        inputs[i]->name().empty() ? absl::StrCat("input", i) : inputs[i]->name();
    e.Name(inputs[i].ptr().get()) = name;
    SetValueInfo(graph->add_input(), name, *inputs[i]->tensor_type());
    ins.push_back(inputs[i].ptr());
  }
  for (const Var& o : outputs) {
    if (!o.ok()) return o.status();
    outs.push_back(o.ptr());
  }
  RETURN_IF_ERROR(EmitGraph(e, ins, outs));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Variable* v = outputs[i].ptr().get();
    if (!e.Named(v)) {  // an output that is an input or a constant
      e.Name(v) = v->is_constant() ? e.Constant(static_cast<const Constant&>(*v).data()) : "";
    }
    const std::string name = i < output_names.size() && !output_names[i].empty()
                                 ? output_names[i]
                                 : absl::StrCat("output", i);
    e.Op("Identity", {e.Name(v)}, name);
    SetValueInfo(graph->add_output(), name, *outputs[i]->tensor_type());
  }
  try {
    ::onnx::checker::check_model(model);
  } catch (const std::exception& ex) {
    return absl::InternalError(
        absl::StrCat("the exported model fails ONNX's checker: ", ex.what()));
  }
  return model.SerializeAsString();
}

}  // namespace kiln::onnx
