#include "core/ops/ifelse.h"

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/alloc.h"
#include "core/ops/grad_util.h"
#include "core/ops/op_util.h"

namespace kiln {

KILN_REGISTER_OP(IfElse);

absl::Status IfElseAttrs::Check() const {
  if (n_outs < 1 || n_outs > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute 'n_outs' is ", n_outs, ", not between 1 and 4096"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> IfElse::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(attrs().Check());
  const int n = n_outs();
  if (static_cast<int>(inputs.size()) != 1 + 2 * n) {
    return Invalid(*this, absl::StrCat("expects ", 1 + 2 * n, " inputs (cond, ", n,
                                       " then values, ", n, " else values), got ", inputs.size()));
  }
  RETURN_IF_ERROR(ExpectTensor(*this, inputs, 0, 0, false, "a scalar condition").status());
  std::vector<TypePtr> outputs;
  for (int i = 0; i < n; ++i) {
    const TensorType* t = inputs[1 + i]->tensor_type();
    const TensorType* e = inputs[1 + n + i]->tensor_type();
    if (t == nullptr || e == nullptr || t->dtype() != e->dtype() || t->ndim() != e->ndim()) {
      return Invalid(
          *this,
          absl::StrCat("the then value ", i, " has type ", inputs[1 + i]->type()->ToString(),
                       " but the else value has type ", inputs[1 + n + i]->type()->ToString(),
                       ": both branches need one dtype and rank"));
    }
    StaticShape shape = t->shape();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] != e->shape()[d]) shape[d] = std::nullopt;
    }
    outputs.push_back(TensorType::Make(t->dtype(), std::move(shape)));
  }
  return Apply::Make(self(), std::move(inputs), std::move(outputs));
}

// Each output's dims: a dim the branches share, else the chosen branch's, by one IfElse over
// the dims that may differ (so that the other branch is not computed for its shape either).
absl::StatusOr<std::vector<std::vector<VariablePtr>>> IfElse::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const int n = n_outs();
  std::vector<std::vector<VariablePtr>> out(n);
  std::vector<Var> then_dims, else_dims;
  std::vector<VariablePtr*> chosen_at;
  for (int i = 0; i < n; ++i) {
    out[i] = in[1 + i];
    for (size_t d = 0; d < out[i].size(); ++d) {
      const VariablePtr& t = in[1 + i][d];
      const VariablePtr& e = in[1 + n + i][d];
      if (t == e || (ConstantInt(t) && ConstantInt(t) == ConstantInt(e))) continue;
      then_dims.push_back(Var(t));
      else_dims.push_back(Var(e));
      chosen_at.push_back(&out[i][d]);
    }
  }
  if (chosen_at.empty()) return out;
  const std::vector<Var> chosen = ifelse(Var(node.inputs()[0]), then_dims, else_dims);
  if (chosen.size() != chosen_at.size()) return chosen[0].status();  // ifelse failed
  for (size_t k = 0; k < chosen.size(); ++k) {
    ASSIGN_OR_RETURN(*chosen_at[k], Unwrap(chosen[k]));
  }
  return out;
}

absl::Status IfElse::Perform(const Apply&, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  const bool then = IsTrue(inputs[0]);
  const int n = n_outs();
  for (int i = 0; i < n; ++i) outputs[i] = inputs[then ? 1 + i : 1 + n + i];
  return absl::OkStatus();
}

// As Aesara's: the output's gradient flows to the chosen branch and zeros to the other, by
// IfElse again; the condition gets zeros.
std::vector<Var> IfElse::LOp(const Apply& node, const std::vector<Var>& output_grads) const {
  const int n = n_outs();
  const Var cond(node.inputs()[0]);
  std::vector<Var> grads, zeros_then, zeros_else;
  for (int i = 0; i < n; ++i) {
    const Var& g = output_grads[i];
    grads.push_back(g.ok() && IsDisconnected(*g) ? FloatZerosLike(Var(node.outputs()[i])) : g);
    // Zeros in the gradient's dtype (an integer value's gradient is a float), as Aesara's.
    const std::optional<DType> dtype = grads[i].ok() && grads[i]->tensor_type() != nullptr
                                           ? std::optional<DType>(grads[i].dtype())
                                           : std::nullopt;
    zeros_then.push_back(zeros_like(Var(node.inputs()[1 + i]), dtype));
    zeros_else.push_back(zeros_like(Var(node.inputs()[1 + n + i]), dtype));
  }
  std::vector<Var> out = {FloatZerosLike(cond)};
  for (const Var& g : ifelse(cond, grads, zeros_then)) out.push_back(g);
  for (const Var& g : ifelse(cond, zeros_else, grads)) out.push_back(g);
  return out;
}

std::vector<std::pair<int, int>> IfElse::view_map() const {
  std::vector<std::pair<int, int>> views;
  for (int i = 0; i < n_outs(); ++i) {
    views.push_back({i, 1 + i});
    views.push_back({i, 1 + n_outs() + i});
  }
  return views;
}


std::vector<Var> ifelse(const Var& cond, const std::vector<Var>& then_branch,
                        const std::vector<Var>& else_branch) {
  if (then_branch.size() != else_branch.size() || then_branch.empty()) {
    return {Var(absl::InvalidArgumentError(
        absl::StrCat("ifelse: the branches give ", then_branch.size(), " and ", else_branch.size(),
                     " values; they need the same number, at least one")))};
  }
  std::vector<Var> inputs = {cond};
  inputs.insert(inputs.end(), then_branch.begin(), then_branch.end());
  inputs.insert(inputs.end(), else_branch.begin(), else_branch.end());
  std::vector<VariablePtr> ptrs;
  for (const Var& v : inputs) {
    if (!v.ok()) return {v};
    ptrs.push_back(v.ptr());
  }
  auto op = std::make_shared<IfElse>(IfElseAttrs{static_cast<int>(then_branch.size())});
  absl::StatusOr<ApplyPtr> node = op->MakeNode(std::move(ptrs));
  if (!node.ok()) return {Var(node.status())};
  std::vector<Var> out;
  for (const VariablePtr& o : (*node)->outputs()) out.push_back(Var(o));
  return out;
}

Var ifelse(const Var& cond, const Var& then_value, const Var& else_value) {
  return ifelse(cond, std::vector<Var>{then_value}, std::vector<Var>{else_value})[0];
}

}  // namespace kiln
