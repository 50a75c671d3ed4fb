#include "core/builders/op_from_graph.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/grad/gradient.h"
#include "core/graph/constructors.h"
#include "core/graph/fgraph.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/graph/traversal.h"
#include "core/ops/alloc.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/passes/passes.h"
#include "core/runtime/linked.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(OpFromGraph);

namespace {

// True when a value of type `given` is one of type `wanted`: the same dtype and rank, and every
// dim `wanted` knows known alike.
bool Fits(const TensorType& given, const TensorType& wanted) {
  if (given.dtype() != wanted.dtype() || given.ndim() != wanted.ndim()) return false;
  for (int d = 0; d < given.ndim(); ++d) {
    if (wanted.shape()[d] && given.shape()[d] != wanted.shape()[d]) return false;
  }
  return true;
}

// The inner outputs with the inner inputs replaced by the node's inputs, which MakeNode checked
// to fit them (a node input may know more of its shape than the inner input: the copied nodes
// keep their outputs' types, which still hold).
absl::StatusOr<std::vector<VariablePtr>> OnNodeInputs(const InnerGraph& g,
                                                      const std::vector<VariablePtr>& inputs,
                                                      std::span<const VariablePtr> outputs) {
  CloneMap memo;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const TensorType* given = inputs[i]->tensor_type();
    const TensorType* wanted = g.inputs[i]->tensor_type();
    if (given == nullptr || wanted == nullptr || !Fits(*given, *wanted)) {
      return absl::InvalidArgumentError(
          absl::StrCat("OpFromGraph: input ", i, " has type ", inputs[i]->type()->ToString(),
                       " but the inner graph takes ", g.inputs[i]->type()->ToString()));
    }
    memo[g.inputs[i].get()] = inputs[i];
  }
  return Clone({}, outputs, /*copy_inputs=*/false, &memo);
}

// The text of the graph from (inputs, outputs, output gradients) to the gradient of each input
// (Aesara's default L_op graph): an input the outputs do not reach, or whose gradient is
// undefined, gets zeros there and its kind (kDisconnected, kNull with the reason) in `kinds`.
absl::StatusOr<std::string> OwnGradientGraph(const InnerGraph& g, std::vector<int>* kinds,
                                             std::vector<std::string>* nulls) {
  std::vector<VariablePtr> in = g.inputs;
  GradOptions options;
  options.disconnected_inputs = DisconnectedInputs::kIgnore;
  options.return_disconnected = ReturnDisconnected::kDisconnected;
  options.null_gradients = NullGradients::kReturn;
  // The outputs are inputs of the gradient graph (read, not recomputed), unless one is an
  // input or a constant or comes twice: then a slot of its type.
  std::vector<VariablePtr> output_slots;
  for (const VariablePtr& out : g.outputs) {
    const bool taken = out->owner() == nullptr || std::find(in.begin(), in.end(), out) != in.end();
    const TensorType& type = *out->tensor_type();
    in.push_back(taken ? tensor(type.dtype(), type.shape()).ptr() : out);
  }
  for (const VariablePtr& out : g.outputs) {
    const TensorType& type = *out->tensor_type();
    const Var og = tensor(type.dtype(), type.shape());
    in.push_back(og.ptr());
    options.known_grads.push_back({Var(out), og});
  }
  std::vector<Var> wrt(g.inputs.begin(), g.inputs.end());
  ASSIGN_OR_RETURN(std::vector<Var> grads, grad(Var(), wrt, options));
  std::vector<VariablePtr> outs;
  for (size_t i = 0; i < grads.size(); ++i) {
    const bool disconnected = IsDisconnected(*grads[i]);
    const NullType* null = AsNullType(*grads[i]);
    if (disconnected || null != nullptr) {
      (*kinds)[i] = disconnected ? kDisconnected : kNull;
      if (null != nullptr) (*nulls)[i] = null->why_null();
      const Var zeros = zeros_like(wrt[i]);
      RETURN_IF_ERROR(zeros.status());
      outs.push_back(zeros.ptr());
    } else {
      outs.push_back(grads[i].ptr());
    }
  }
  return EncodeInnerGraph(in, outs);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const OpFromGraph>> OpFromGraph::Make(OpFromGraphAttrs attrs) {
  std::shared_ptr<OpFromGraph> op(new OpFromGraph(std::move(attrs)));
  ASSIGN_OR_RETURN(op->inner_, DecodeInnerGraph(op->attrs_.inner));
  for (const VariablePtr& v : op->inner_.outputs) {
    if (v->tensor_type() == nullptr) return Invalid(*op, "an inner output is not a tensor");
  }
  RETURN_IF_ERROR(op->MakeOverrides());
  return std::shared_ptr<const OpFromGraph>(std::move(op));
}

absl::Status OpFromGraph::MakeOverrides() {
  const size_t n_in = inner_.inputs.size(), n_out = inner_.outputs.size();
  // The kinds and their NullType reasons.
  const std::vector<std::string> reasons = attrs_.null_reasons.empty()
                                               ? std::vector<std::string>()
                                               : absl::StrSplit(attrs_.null_reasons, '\n');
  size_t next_reason = 0;
  auto read_kinds = [&](const std::vector<int>& kinds, size_t n, const char* what,
                        std::vector<std::string>* nulls) -> absl::Status {
    if (!kinds.empty() && kinds.size() != n) {
      return Invalid(*this,
                     absl::StrCat(what, " has ", kinds.size(), " entries for ", n, " ",
                                  what == std::string("grad_kinds") ? "input(s)" : "output(s)"));
    }
    nulls->assign(n, "");
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i] < kFromGraph || kinds[i] > kNull) {
        return Invalid(*this, absl::StrCat(what, "[", i, "] is ", kinds[i],
                                           "; 0 (the graph's), 1 (disconnected) or 2 (null) "
                                           "are meant"));
      }
      if (kinds[i] != kNull) continue;
      if (next_reason >= reasons.size()) {
        return Invalid(*this, "null_reasons has fewer lines than null entries");
      }
      (*nulls)[i] = reasons[next_reason++];
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(read_kinds(attrs_.grad_kinds, n_in, "grad_kinds", &grad_null_));
  grad_kinds_ = attrs_.grad_kinds.empty() ? std::vector<int>(n_in, kFromGraph) : attrs_.grad_kinds;
  // An R_op override describes this op's outputs, or (rop_transposed) those of the op this one
  // is the gradient of: its outputs are that op's inputs' gradients, its inputs (inputs,
  // outputs, output gradients) of that op.
  const size_t rop_in = attrs_.rop_transposed ? n_out : n_in;
  const size_t rop_out = attrs_.rop_transposed ? (n_in >= n_out ? (n_in - n_out) / 2 : 0) : n_out;
  if (attrs_.rop_transposed && (attrs_.rop.empty() || n_in != n_out + 2 * rop_out)) {
    return Invalid(*this,
                   "rop_transposed is set on an op that is not the gradient of an "
                   "OpFromGraph with an R_op override");
  }
  std::vector<std::string> rop_null;
  if (!attrs_.rop.empty()) {
    RETURN_IF_ERROR(read_kinds(attrs_.rop_kinds, rop_out, "rop_kinds", &rop_null));
  } else if (!attrs_.rop_kinds.empty()) {
    return Invalid(*this, "rop_kinds is set without an R_op override (rop)");
  }
  if (next_reason != reasons.size()) {
    return Invalid(*this, "null_reasons has more lines than null entries");
  }
  if (!attrs_.connections.empty()) {
    if (attrs_.connections.size() != n_in * n_out) {
      return Invalid(*this, absl::StrCat("connections (the connection pattern) has ",
                                         attrs_.connections.size(), " entries; ", n_in,
                                         " input(s) x ", n_out, " output(s) are needed"));
    }
    for (int c : attrs_.connections) {
      if (c != 0 && c != 1)
        return Invalid(*this, "connections (the connection pattern) must be 0s and 1s");
    }
  }
  const std::string base = attrs_.name;
  auto suffixed = [&](const char* suffix) {
    return base.empty() ? std::string() : absl::StrCat(base, suffix);
  };
  if (!attrs_.rop.empty()) {
    ASSIGN_OR_RETURN(InnerGraph rop, DecodeInnerGraph(attrs_.rop));
    if (rop.inputs.size() != 2 * rop_in || rop.outputs.size() != rop_out) {
      return Invalid(*this, absl::StrCat("the R_op override takes ", rop.inputs.size(),
                                         " input(s) to ", rop.outputs.size(), " output(s); ",
                                         2 * rop_in, " inputs (inputs, eval points) to ", rop_out,
                                         " R_op results are needed"));
    }
  }
  if (attrs_.rop_transposed) {
    // Named as Aesara names the R_op op, after the op whose gradient this is.
    std::string name;
    for (const char* suffix : {"_lop", "_grad"}) {
      if (absl::EndsWith(base, suffix)) {
        name = absl::StrCat(base.substr(0, base.size() - std::strlen(suffix)), "_rop");
      }
    }
    ASSIGN_OR_RETURN(rop_op_,
                     Make(OpFromGraphAttrs{
                         .inner = attrs_.rop, .inline_ = attrs_.inline_, .name = std::move(name)}));
    rop_null_ = std::move(rop_null);
  }
  const bool carry_rop = !attrs_.rop.empty() && !attrs_.rop_transposed;
  OpFromGraphAttrs grad_attrs{.inline_ = attrs_.inline_};
  if (carry_rop) {
    grad_attrs.rop = attrs_.rop;
    grad_attrs.rop_kinds = attrs_.rop_kinds;
    grad_attrs.rop_transposed = true;
    std::vector<std::string> lines;
    for (size_t o = 0; o < rop_null.size(); ++o) {
      if (!attrs_.rop_kinds.empty() && attrs_.rop_kinds[o] == kNull) lines.push_back(rop_null[o]);
    }
    grad_attrs.null_reasons = absl::StrJoin(lines, "\n");
  }
  if (!attrs_.grad.empty()) {
    grad_attrs.inner = attrs_.grad;
    grad_attrs.name = suffixed(attrs_.lop ? "_lop" : "_grad");
  } else if (carry_rop) {  // the inner graph's own gradient, as an op that carries the R_op
    ASSIGN_OR_RETURN(grad_attrs.inner, OwnGradientGraph(inner_, &grad_kinds_, &grad_null_));
    grad_attrs.name = suffixed("_lop");
  } else {
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(grad_op_, Make(std::move(grad_attrs)));
  const InnerGraph& g = grad_op_->inner();
  if (g.inputs.size() != n_in + 2 * n_out || g.outputs.size() != n_in) {
    return Invalid(*this,
                   absl::StrCat("the gradient override takes ", g.inputs.size(), " input(s) to ",
                                g.outputs.size(), " output(s); ", n_in + 2 * n_out,
                                " inputs (inputs, outputs, output gradients) to ", n_in,
                                " gradients are needed"));
  }
  return absl::OkStatus();
}

const std::vector<std::vector<bool>>& OpFromGraph::Reaches() const {
  std::call_once(reaches_once_, [this] {
    for (const VariablePtr& out : inner_.outputs) {
      const std::vector<Variable*> above = Ancestors(std::span<const VariablePtr>(&out, 1));
      const absl::flat_hash_set<const Variable*> set(above.begin(), above.end());
      std::vector<bool> row;
      for (const VariablePtr& in : inner_.inputs) row.push_back(set.contains(in.get()));
      reaches_.push_back(std::move(row));
    }
  });
  return reaches_;
}

std::vector<std::vector<bool>> OpFromGraph::ConnectionPattern(const Apply& node) const {
  const size_t n_in = node.num_inputs(), n_out = node.num_outputs();
  std::vector<std::vector<bool>> pattern(n_in, std::vector<bool>(n_out, false));
  for (size_t i = 0; i < n_in; ++i) {
    for (size_t o = 0; o < n_out; ++o) {
      if (!attrs_.connections.empty()) {
        pattern[i][o] = attrs_.connections[i * n_out + o] != 0;
        continue;
      }
      const bool disconnected = i < grad_kinds_.size() && grad_kinds_[i] == kDisconnected;
      pattern[i][o] = !disconnected && Reaches()[o][i];
      // (Aesara's cpmat_grad: the gradient op's output i reads the op's output o.)
      if (grad_op_ != nullptr && !disconnected) {
        pattern[i][o] = pattern[i][o] || grad_op_->Reaches()[i][n_in + o];
      }
    }
  }
  return pattern;
}

absl::StatusOr<OpPtr> OpFromGraph::FromAttrs(const OpAttrs& wire) {
  ASSIGN_OR_RETURN(OpFromGraphAttrs attrs, DecodeAttrs<OpFromGraphAttrs>(wire));
  ASSIGN_OR_RETURN(std::shared_ptr<const OpFromGraph> op, Make(std::move(attrs)));
  return OpPtr(std::move(op));
}

std::string OpFromGraph::Name() const {
  return absl::StrCat(attrs_.name.empty() ? "OpFromGraph" : attrs_.name,
                      "{inline=", attrs_.inline_ ? "True" : "False", "}");
}

absl::StatusOr<ApplyPtr> OpFromGraph::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != inner_.inputs.size()) {
    return Invalid(
        *this, absl::StrCat("expected ", inner_.inputs.size(), " input(s), got ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType* wanted = inner_.inputs[i]->tensor_type();
    const TensorType* given = inputs[i]->tensor_type();
    if (given == nullptr || !Fits(*given, *wanted)) {
      const std::string name = inputs[i]->name().empty() ? "it" : inputs[i]->name();
      return Invalid(
          *this, absl::StrCat("input ", i, ": Cannot convert Type ", inputs[i]->type()->ToString(),
                              " (of Variable ", inputs[i]->ToString(), ") into Type ",
                              wanted->ToString(), ". You can try to manually convert ", name,
                              " into a ", wanted->ToString(), "."));
    }
  }
  std::vector<TypePtr> types;
  for (const VariablePtr& v : inner_.outputs) types.push_back(v->type());
  return Apply::Make(self(), std::move(inputs), std::move(types));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> OpFromGraph::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>&) const {
  std::vector<VariablePtr> dims;
  std::vector<size_t> ranks;
  for (const VariablePtr& out : inner_.outputs) {
    ASSIGN_OR_RETURN(ShapeVars shape, infer_shape(Var(out)));
    ranks.push_back(shape.size());
    dims.insert(dims.end(), shape.begin(), shape.end());
  }
  ASSIGN_OR_RETURN(std::vector<VariablePtr> outer, OnNodeInputs(inner_, node.inputs(), dims));
  std::vector<std::vector<VariablePtr>> shapes;
  size_t at = 0;
  for (size_t r : ranks) {
    shapes.emplace_back(outer.begin() + at, outer.begin() + at + r);
    at += r;
  }
  return shapes;
}

absl::Status OpFromGraph::Perform(const Apply&, std::span<const Tensor> inputs,
                                  std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(const LinkedProgram* linked, program_.Get(inner_, true));
  const LinkedProgram& program = *linked;
  std::vector<Tensor> slots = program.NewSlots();
  for (size_t i = 0; i < inputs.size(); ++i) slots[i] = inputs[i];
  CallContext ctx;  // the inner program polls the call's interrupt, installed on this thread
  RETURN_IF_ERROR(program.Run(slots, ctx));
  for (size_t o = 0; o < outputs.size(); ++o) {
    Tensor& value = slots[program.output_slots()[o]];
    // The op has no view_map: an output that is an input (or a view of one) is copied.
    bool aliased = false;
    for (const Tensor& in : inputs) aliased = aliased || value.SharesBufferWith(in);
    outputs[o] = aliased ? value.AsType(value.dtype()) : std::move(value);
  }
  return absl::OkStatus();
}

std::vector<Var> OpFromGraph::ApplyKinds(std::vector<Var> grads) const {
  for (size_t i = 0; i < grads.size() && i < grad_kinds_.size(); ++i) {
    if (grad_kinds_[i] == kDisconnected) grads[i] = disconnected_type();
    if (grad_kinds_[i] == kNull) grads[i] = null_type(grad_null_[i]);
  }
  return grads;
}

std::vector<Var> OpFromGraph::LOp(const Apply& node, const std::vector<Var>& output_grads) const {
  const size_t n_in = node.inputs().size();
  // Each output's gradient, zeros for a disconnected one (the gradient op takes all).
  auto filled = [&](size_t o) -> Var {
    return IsDisconnected(*output_grads[o]) ? zeros_like(Var(node.output(o))) : output_grads[o];
  };
  std::vector<Var> grads;
  if (grad_op_ != nullptr) {  // the override, on (inputs, outputs, output grads or zeros)
    std::vector<VariablePtr> args = node.inputs();
    const std::vector<VariablePtr> outputs = node.outputs();
    args.insert(args.end(), outputs.begin(), outputs.end());
    for (size_t o = 0; o < outputs.size(); ++o) {
      const Var g = filled(o);
      if (!g.ok()) return std::vector<Var>(n_in, g);
      args.push_back(g.ptr());
    }
    absl::StatusOr<ApplyPtr> applied = grad_op_->MakeNode(std::move(args));
    if (!applied.ok()) return std::vector<Var>(n_in, Var(applied.status()));
    for (const VariablePtr& g : (*applied)->outputs()) grads.push_back(Var(g));
    grads = ApplyKinds(std::move(grads));
  } else {
    // The inner graph on fresh leaves of the node inputs' types (so that grad does not walk
    // past the node into the graph above it, where one input may depend on another), its
    // gradients then moved onto the node inputs.
    std::vector<VariablePtr> leaves;
    for (const VariablePtr& in : node.inputs()) leaves.push_back(Variable::Make(in->type(), ""));
    absl::StatusOr<std::vector<VariablePtr>> outs = OnNodeInputs(inner_, leaves, inner_.outputs);
    if (!outs.ok()) return std::vector<Var>(n_in, Var(outs.status()));
    GradOptions options;
    options.disconnected_inputs = DisconnectedInputs::kIgnore;
    options.return_disconnected = ReturnDisconnected::kDisconnected;
    options.null_gradients = NullGradients::kReturn;
    for (size_t o = 0; o < outs->size(); ++o) {
      if (IsDisconnected(*output_grads[o])) continue;
      options.known_grads.push_back({Var((*outs)[o]), output_grads[o]});
    }
    std::vector<Var> wrt(leaves.begin(), leaves.end());
    if (options.known_grads.empty()) {
      grads.assign(wrt.size(), disconnected_type());
    } else {
      absl::StatusOr<std::vector<Var>> own = grad(Var(), wrt, options);
      if (!own.ok()) return std::vector<Var>(wrt.size(), Var(own.status()));
      std::vector<VariablePtr> computed;
      for (const Var& g : *own) {
        if (!IsDisconnected(*g) && !IsNullType(*g)) computed.push_back(g.ptr());
      }
      std::vector<std::pair<VariablePtr, VariablePtr>> onto;
      for (size_t i = 0; i < leaves.size(); ++i) onto.push_back({leaves[i], node.inputs()[i]});
      absl::StatusOr<std::vector<VariablePtr>> moved = CloneReplace(computed, onto);
      if (!moved.ok()) return std::vector<Var>(wrt.size(), Var(moved.status()));
      size_t next = 0;
      for (const Var& g : *own) {
        grads.push_back(IsDisconnected(*g) || IsNullType(*g) ? g : Var((*moved)[next++]));
      }
      grads = ApplyKinds(std::move(grads));
    }
  }
  if (rop_op_ != nullptr) {
    // This op computes the gradients of an op whose R_op is overridden: its inputs are that
    // op's inputs x, outputs and output gradients u, its outputs the gradients of x, linear in
    // u. The gradient with respect to u given the gradients w of these outputs is that R_op
    // at x with eval points w.
    const size_t n_x = node.num_outputs();
    const size_t n_u = (n_in - n_x) / 2;
    std::vector<VariablePtr> args(node.inputs().begin(), node.inputs().begin() + n_x);
    for (size_t i = 0; i < n_x; ++i) {
      const Var w = filled(i);
      if (!w.ok()) return std::vector<Var>(n_in, w);
      args.push_back(w.ptr());
    }
    absl::StatusOr<ApplyPtr> applied = rop_op_->MakeNode(std::move(args));
    if (!applied.ok()) return std::vector<Var>(n_in, Var(applied.status()));
    for (size_t o = 0; o < n_u; ++o) {
      const bool null = !attrs_.rop_kinds.empty() && attrs_.rop_kinds[o] == kNull;
      grads[n_x + n_u + o] = null ? null_type(rop_null_[o]) : Var((*applied)->output(o));
    }
  }
  return grads;
}

absl::StatusOr<std::vector<VariablePtr>> InlineOpFromGraph(const Apply& node) {
  const auto& op = static_cast<const OpFromGraph&>(node.op());
  return OnNodeInputs(op.inner(), node.inputs(), op.inner().outputs);
}

absl::StatusOr<std::shared_ptr<const OpFromGraph>> op_from_graph(const std::vector<Var>& inputs,
                                                                 const std::vector<Var>& outputs,
                                                                 bool inline_, std::string name) {
  std::vector<VariablePtr> in, out;
  for (const Var& v : inputs) {
    RETURN_IF_ERROR(v.status());
    if (v->owner() != nullptr || v->is_constant()) {
      return absl::InvalidArgumentError(
          absl::StrCat("OpFromGraph: inputs must be non-constant variables without an owner; got ",
                       v.ToString()));
    }
    in.push_back(v.ptr());
  }
  for (const Var& v : outputs) {
    RETURN_IF_ERROR(v.status());
    out.push_back(v.ptr());
  }
  ASSIGN_OR_RETURN(std::string text, EncodeInnerGraph(in, out));
  return OpFromGraph::Make(OpFromGraphAttrs{std::move(text), inline_, std::move(name), ""});
}

absl::StatusOr<std::shared_ptr<const OpFromGraph>> op_from_graph_with_grad(
    const std::vector<Var>& inputs, const std::vector<Var>& outputs,
    const std::vector<Var>& output_grads, const std::vector<Var>& grads, bool inline_,
    std::string name) {
  ASSIGN_OR_RETURN(std::shared_ptr<const OpFromGraph> plain,
                   op_from_graph(inputs, outputs, inline_, name));
  std::vector<VariablePtr> in, out;
  for (const Var& v : inputs) in.push_back(v.ptr());
  for (const VariablePtr& v : plain->inner().outputs) {  // the outputs' slots, unread by grads
    const TensorType& type = *v->tensor_type();
    in.push_back(tensor(type.dtype(), type.shape()).ptr());
  }
  for (const Var& v : output_grads) {
    RETURN_IF_ERROR(v.status());
    in.push_back(v.ptr());
  }
  for (const Var& v : grads) {
    RETURN_IF_ERROR(v.status());
    out.push_back(v.ptr());
  }
  ASSIGN_OR_RETURN(std::string text, EncodeInnerGraph(in, out));
  OpFromGraphAttrs attrs = plain->attrs();
  attrs.grad = std::move(text);
  return OpFromGraph::Make(std::move(attrs));
}

namespace {

// inline_ofg_expansion: OpFromGraph{inline=True}(x...) -> its inner graph on x..., before merge.
absl::StatusOr<bool> InlinePass(FunctionGraph& fg, RewriteContext&) {
  std::vector<ApplyPtr> nodes;  // owned: replacing a node's last use drops it from fg
  for (Apply* node : fg.Toposort()) {
    const auto* op = node->op().As<OpFromGraph>();
    if (op != nullptr && op->is_inline()) nodes.push_back(node->shared_from_this());
  }
  for (const ApplyPtr& node : nodes) {
    if (!fg.Contains(node.get())) continue;
    ASSIGN_OR_RETURN(std::vector<VariablePtr> outs, InlineOpFromGraph(*node));
    for (int o = 0; o < node->num_outputs(); ++o) {
      if (fg.clients(node->output_ptr(o)).empty()) continue;
      RETURN_IF_ERROR(fg.Replace(node->output_ptr(o), outs[o], "inline_ofg_expansion"));
    }
  }
  return !nodes.empty();
}

[[maybe_unused]] const bool kRegistered = RegisterExtraPhase(
    Phase{"inline_ofg_expansion", -0.01, {"fast_compile", "fast_run"}, {}, InlinePass});

}  // namespace

}  // namespace kiln
