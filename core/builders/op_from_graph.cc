#include "core/builders/op_from_graph.h"

#include "absl/strings/str_cat.h"
#include "core/grad/gradient.h"
#include "core/graph/fgraph.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
#include "core/ops/alloc.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/passes/passes.h"
#include "core/runtime/linked.h"

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

}  // namespace

absl::StatusOr<std::shared_ptr<const OpFromGraph>> OpFromGraph::Make(OpFromGraphAttrs attrs) {
  std::shared_ptr<OpFromGraph> op(new OpFromGraph(std::move(attrs)));
  ASSIGN_OR_RETURN(op->inner_, DecodeInnerGraph(op->attrs_.inner));
  for (const VariablePtr& v : op->inner_.outputs) {
    if (v->tensor_type() == nullptr) return Invalid(*op, "an inner output is not a tensor");
  }
  if (!op->attrs_.grad.empty()) {
    const std::string name = op->attrs_.name.empty() ? "" : absl::StrCat(op->attrs_.name, "_grad");
    ASSIGN_OR_RETURN(op->grad_op_,
                     Make(OpFromGraphAttrs{op->attrs_.grad, op->attrs_.inline_, name, ""}));
    const size_t n_in = op->inner_.inputs.size(), n_out = op->inner_.outputs.size();
    const InnerGraph& g = op->grad_op_->inner();
    if (g.inputs.size() != n_in + 2 * n_out || g.outputs.size() != n_in) {
      return Invalid(*op,
                     absl::StrCat("the gradient override takes ", g.inputs.size(), " input(s) to ",
                                  g.outputs.size(), " output(s); ", n_in + 2 * n_out,
                                  " inputs (inputs, outputs, output gradients) to ", n_in,
                                  " gradients are needed"));
    }
  }
  return std::shared_ptr<const OpFromGraph>(std::move(op));
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

std::vector<Var> OpFromGraph::LOp(const Apply& node, const std::vector<Var>& output_grads) const {
  if (grad_op_ != nullptr) {  // the override, on (inputs, outputs, output grads or zeros)
    std::vector<VariablePtr> args = node.inputs();
    const std::vector<VariablePtr> outputs = node.outputs();
    args.insert(args.end(), outputs.begin(), outputs.end());
    for (size_t o = 0; o < outputs.size(); ++o) {
      const Var g =
          IsDisconnected(*output_grads[o]) ? zeros_like(Var(outputs[o])) : output_grads[o];
      if (!g.ok()) return std::vector<Var>(node.inputs().size(), g);
      args.push_back(g.ptr());
    }
    absl::StatusOr<ApplyPtr> applied = grad_op_->MakeNode(std::move(args));
    if (!applied.ok()) return std::vector<Var>(node.inputs().size(), Var(applied.status()));
    std::vector<Var> grads;
    for (const VariablePtr& g : (*applied)->outputs()) grads.push_back(Var(g));
    return grads;
  }
  absl::StatusOr<std::vector<VariablePtr>> outs =
      OnNodeInputs(inner_, node.inputs(), inner_.outputs);
  if (!outs.ok()) return std::vector<Var>(node.inputs().size(), Var(outs.status()));
  GradOptions options;
  options.disconnected_inputs = DisconnectedInputs::kIgnore;
  options.return_disconnected = ReturnDisconnected::kDisconnected;
  for (size_t o = 0; o < outs->size(); ++o) {
    if (IsDisconnected(*output_grads[o])) continue;
    options.known_grads.push_back({Var((*outs)[o]), output_grads[o]});
  }
  std::vector<Var> wrt;
  for (const VariablePtr& in : node.inputs()) wrt.push_back(Var(in));
  if (options.known_grads.empty()) {
    return std::vector<Var>(wrt.size(), disconnected_type());
  }
  absl::StatusOr<std::vector<Var>> grads = grad(Var(), wrt, options);
  if (!grads.ok()) return std::vector<Var>(wrt.size(), Var(grads.status()));
  return *grads;
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
