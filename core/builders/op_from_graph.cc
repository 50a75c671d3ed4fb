#include "core/builders/op_from_graph.h"

#include "absl/strings/str_cat.h"
#include "core/grad/gradient.h"
#include "core/graph/fgraph.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"
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

// The inner outputs with the inner inputs replaced by the node's inputs.
absl::StatusOr<std::vector<VariablePtr>> OnNodeInputs(const InnerGraph& g,
                                                      const std::vector<VariablePtr>& inputs,
                                                      std::span<const VariablePtr> outputs) {
  std::vector<std::pair<VariablePtr, VariablePtr>> replace;
  for (size_t i = 0; i < g.inputs.size(); ++i) replace.push_back({g.inputs[i], inputs[i]});
  return CloneReplace(outputs, replace);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const OpFromGraph>> OpFromGraph::Make(OpFromGraphAttrs attrs) {
  std::shared_ptr<OpFromGraph> op(new OpFromGraph(std::move(attrs)));
  ASSIGN_OR_RETURN(op->inner_, DecodeInnerGraph(op->attrs_.inner));
  for (const VariablePtr& v : op->inner_.outputs) {
    if (v->tensor_type() == nullptr) return Invalid(*op, "an inner output is not a tensor");
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
  return OpFromGraph::Make(OpFromGraphAttrs{std::move(text), inline_, std::move(name)});
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
