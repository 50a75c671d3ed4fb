#include "core/ops/blockwise.h"

#include <algorithm>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/attr_text.h"
#include "core/graph/op_registry.h"
#include "core/graph/traversal.h"
#include "core/graph/type.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"

namespace kiln {

KILN_REGISTER_OP(Blockwise);

namespace {

// "(m,n)" of one signature argument.
std::string ArgText(const std::vector<std::string>& dims) {
  return absl::StrCat("(", absl::StrJoin(dims, ","), ")");
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Blockwise>> Blockwise::Make(OpPtr core,
                                                                 absl::string_view signature) {
  if (core == nullptr) return absl::InvalidArgumentError("Blockwise: no core op");
  if (core->Is<Blockwise>()) {
    return absl::InvalidArgumentError(absl::StrCat("Blockwise: the core op ", core->Name(),
                                                   " is a Blockwise; give its own core op"));
  }
  absl::StatusOr<GufuncSignature> sig = ParseGufuncSignature(signature);
  if (!sig.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Blockwise{", core->Name(), "}: ", sig.status().message()));
  }
  BlockwiseAttrs attrs{std::string(core->type_name()), core->Attrs().Text(), sig->ToString()};
  return std::shared_ptr<const Blockwise>(
      new Blockwise(std::move(attrs), std::move(core), *std::move(sig)));
}

absl::StatusOr<OpPtr> Blockwise::FromAttrs(const OpAttrs& wire) {
  absl::StatusOr<BlockwiseAttrs> attrs = DecodeAttrs<BlockwiseAttrs>(wire);
  if (!attrs.ok()) return attrs.status();
  if (attrs->core == kTypeName) {
    return absl::InvalidArgumentError("Blockwise: the core op may not be a Blockwise");
  }
  absl::StatusOr<OpAttrs> core_attrs = ParseAttrText(attrs->core_attrs);
  if (!core_attrs.ok()) {
    return absl::InvalidArgumentError("Blockwise: attribute 'core_attrs' is malformed");
  }
  absl::StatusOr<OpPtr> core = MakeOp(attrs->core, *core_attrs);
  if (!core.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Blockwise: core op: ", core.status().message()));
  }
  absl::StatusOr<std::shared_ptr<const Blockwise>> op = Make(*std::move(core), attrs->signature);
  if (!op.ok()) return op.status();
  return OpPtr(*std::move(op));
}

std::string Blockwise::Name() const {
  return absl::StrCat("Blockwise{", core_->Name(), ", ", attrs_.signature, "}");
}

int Blockwise::BatchNdim(const Apply& node) const {
  int batch = 0;
  for (size_t i = 0; i < node.inputs().size() && i < signature_.inputs.size(); ++i) {
    const TensorType* t = node.inputs()[i]->tensor_type();
    if (t == nullptr) continue;
    batch = std::max(batch, t->ndim() - static_cast<int>(signature_.inputs[i].size()));
  }
  return batch;
}

absl::StatusOr<ApplyPtr> Blockwise::CoreNode(const std::vector<VariablePtr>& inputs) const {
  std::vector<VariablePtr> core_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType* t = inputs[i]->tensor_type();
    const int core_ndim = static_cast<int>(signature_.inputs[i].size());
    if (t->ndim() == core_ndim && inputs[i]->is_constant()) {
      core_inputs.push_back(inputs[i]);  // an unbatched constant stays one (ops read its value)
      continue;
    }
    StaticShape shape(t->shape().end() - core_ndim, t->shape().end());
    core_inputs.push_back(Variable::Make(TensorType::Make(t->dtype(), std::move(shape))));
  }
  const std::vector<VariablePtr> given = core_inputs;
  absl::StatusOr<ApplyPtr> core = core_->MakeNode(std::move(core_inputs));
  if (!core.ok()) {
    return Invalid(*this,
                   absl::StrCat("the core op refuses the core inputs: ", core.status().message()));
  }
  const Apply& n = **core;
  for (size_t i = 0; i < given.size(); ++i) {
    if (n.inputs().size() != given.size() || n.inputs()[i] != given[i]) {
      return Invalid(*this,
                     "the core op converts its inputs, so it cannot be batched; "
                     "convert them before the Blockwise");
    }
  }
  if (n.num_outputs() != static_cast<int>(signature_.outputs.size())) {
    return Invalid(*this,
                   absl::StrCat("the core op has ", n.num_outputs(),
                                " outputs but the signature names ", signature_.outputs.size()));
  }
  for (int o = 0; o < n.num_outputs(); ++o) {
    const TensorType* t = n.output_ptr(o)->tensor_type();
    if (t == nullptr || t->ndim() != static_cast<int>(signature_.outputs[o].size())) {
      return Invalid(
          *this, absl::StrCat("the core op's output ", o, " has type ",
                              n.output_ptr(o)->type()->ToString(),
                              " but the signature's output is ", ArgText(signature_.outputs[o])));
    }
  }
  return core;
}

absl::StatusOr<ApplyPtr> Blockwise::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != signature_.inputs.size()) {
    return Invalid(
        *this, absl::StrCat("expects ", signature_.inputs.size(), " inputs, got ", inputs.size()));
  }
  int batch = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType* t = inputs[i]->tensor_type();
    const int core_ndim = static_cast<int>(signature_.inputs[i].size());
    if (t == nullptr || t->ndim() < core_ndim) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                         " but its core dims ", ArgText(signature_.inputs[i]),
                                         " need a tensor of at least ", core_ndim, " dims"));
    }
    batch = std::max(batch, t->ndim() - core_ndim);
  }
  // Core dims of one name must agree where both are known.
  std::vector<std::pair<std::string, std::pair<size_t, int64_t>>> known;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType* t = inputs[i]->tensor_type();
    const int offset = t->ndim() - static_cast<int>(signature_.inputs[i].size());
    for (size_t j = 0; j < signature_.inputs[i].size(); ++j) {
      const StaticDim d = t->shape()[offset + j];
      if (!d) continue;
      for (const auto& [name, at] : known) {
        if (name == signature_.inputs[i][j] && at.second != *d) {
          return Invalid(
              *this, absl::StrCat("core dim '", name, "' is ", at.second, " in input ", at.first,
                                  " (type ", inputs[at.first]->type()->ToString(), ") but ", *d,
                                  " in input ", i, " (type ", t->ToString(), ")"));
        }
      }
      known.push_back({signature_.inputs[i][j], {i, *d}});
    }
  }
  // The batch dims broadcast: a known size other than 1 wins, 1 only when every input has 1.
  StaticShape batch_shape(batch);
  for (int p = 0; p < batch; ++p) {
    StaticDim out = 1;
    bool all_one = true;
    std::optional<size_t> fixed_by;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorType* t = inputs[i]->tensor_type();
      const int b = t->ndim() - static_cast<int>(signature_.inputs[i].size());
      const int d = p - (batch - b);
      if (d < 0) continue;
      const StaticDim s = t->shape()[d];
      if (s == 1) continue;
      all_one = false;
      if (!s) continue;
      if (fixed_by && *out != *s) {
        return Invalid(*this, absl::StrCat("the batch dims of input ", *fixed_by, " (type ",
                                           inputs[*fixed_by]->type()->ToString(), ") and input ", i,
                                           " (type ", t->ToString(), ") do not broadcast"));
      }
      out = s;
      fixed_by = i;
    }
    batch_shape[p] = fixed_by ? out : (all_one ? StaticDim(1) : std::nullopt);
  }
  absl::StatusOr<ApplyPtr> core = CoreNode(inputs);
  if (!core.ok()) return core.status();
  std::vector<TypePtr> out_types;
  for (int o = 0; o < (*core)->num_outputs(); ++o) {
    const TensorType* t = (*core)->output_ptr(o)->tensor_type();
    StaticShape shape = batch_shape;
    shape.insert(shape.end(), t->shape().begin(), t->shape().end());
    // A core dim named like an input's known dim has its size.
    for (size_t j = 0; j < signature_.outputs[o].size(); ++j) {
      for (const auto& [name, at] : known) {
        if (name == signature_.outputs[o][j]) shape[batch + j] = at.second;
      }
    }
    if (absl::Status st = CheckKnownDims(*this, shape); !st.ok()) return st;
    out_types.push_back(TensorType::Make(t->dtype(), std::move(shape)));
  }
  return Apply::Make(self(), std::move(inputs), std::move(out_types));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Blockwise::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const int batch = BatchNdim(node);
  ShapeVars batch_dims;
  for (int p = 0; p < batch; ++p) {
    std::vector<VariablePtr> dims;
    for (size_t i = 0; i < in.size(); ++i) {
      const int b = static_cast<int>(in[i].size() - signature_.inputs[i].size());
      const int d = p - (batch - b);
      if (d >= 0) dims.push_back(in[i][d]);
    }
    batch_dims.push_back(BroadcastDim(dims));
  }
  std::vector<std::vector<VariablePtr>> out;
  std::optional<std::vector<ShapeVars>> core_shapes;  // the core op's, when a name is not found
  std::vector<VariablePtr> core_leaves;
  for (size_t o = 0; o < signature_.outputs.size(); ++o) {
    ShapeVars shape = batch_dims;
    for (size_t j = 0; j < signature_.outputs[o].size(); ++j) {
      VariablePtr dim;
      for (size_t i = 0; i < in.size() && dim == nullptr; ++i) {
        const size_t b = in[i].size() - signature_.inputs[i].size();
        for (size_t k = 0; k < signature_.inputs[i].size(); ++k) {
          if (signature_.inputs[i][k] == signature_.outputs[o][j]) {
            dim = in[i][b + k];
            break;
          }
        }
      }
      if (dim == nullptr) {
        if (!core_shapes) {
          absl::StatusOr<ApplyPtr> core = CoreNode(node.inputs());
          if (!core.ok()) return core.status();
          std::vector<ShapeVars> core_in;
          for (size_t i = 0; i < in.size(); ++i) {
            core_in.emplace_back(in[i].end() - signature_.inputs[i].size(), in[i].end());
          }
          absl::StatusOr<std::vector<ShapeVars>> s = core_op()->InferShape(**core, core_in);
          if (!s.ok()) return s.status();
          core_shapes = *std::move(s);
          for (const VariablePtr& v : (*core)->inputs()) {
            if (!v->is_constant()) core_leaves.push_back(v);
          }
        }
        dim = (*core_shapes)[o][j];
        // A dim computed from a core input's value (not its shape) cannot be batched.
        const std::vector<Variable*> leaves = GraphInputs(std::span<const VariablePtr>(&dim, 1));
        for (const VariablePtr& leaf : core_leaves) {
          if (std::find(leaves.begin(), leaves.end(), leaf.get()) != leaves.end()) {
            return Invalid(*this, absl::StrCat("the core op's output ", o, " dim ", j,
                                               " depends on its inputs' values"));
          }
        }
      }
      shape.push_back(dim);
    }
    out.push_back(std::move(shape));
  }
  return out;
}

absl::StatusOr<std::vector<VariablePtr>> blockwise_outputs(const OpPtr& core_op,
                                                           absl::string_view signature,
                                                           std::vector<Var> inputs) {
  absl::StatusOr<std::shared_ptr<const Blockwise>> op = Blockwise::Make(core_op, signature);
  if (!op.ok()) return op.status();
  std::vector<VariablePtr> in;
  for (const Var& v : inputs) {
    absl::StatusOr<VariablePtr> p = Unwrap(v);
    if (!p.ok()) return p.status();
    in.push_back(*std::move(p));
  }
  absl::StatusOr<ApplyPtr> node = (*op)->MakeNode(std::move(in));
  if (!node.ok()) return node.status();
  return (*node)->outputs();
}

Var blockwise(const OpPtr& core_op, absl::string_view signature, std::vector<Var> inputs) {
  absl::StatusOr<std::vector<VariablePtr>> out =
      blockwise_outputs(core_op, signature, std::move(inputs));
  if (!out.ok()) return Var(out.status());
  return Var((*out)[0]);
}

}  // namespace kiln
