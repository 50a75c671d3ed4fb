#include "core/passes/rule_util.h"

#include <algorithm>

#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "core/rewrite/pattern.h"
#include "core/ops/elemwise.h"

namespace kiln {

std::optional<VariablePtr> FitTo(const Var& v, const Variable& out) {
  if (!v.ok() || v->tensor_type() == nullptr) return std::nullopt;
  const TensorType& want = *out.tensor_type();
  Var r = v;
  if (r.dtype() != want.dtype()) r = cast(r, want.dtype());
  if (!r.ok() || r.ndim() != want.ndim()) return std::nullopt;
  bool less_specific = false;
  for (int d = 0; d < want.ndim(); ++d) {
    const StaticDim have = r.type().shape()[d];
    if (have && want.shape()[d] && *have != *want.shape()[d]) return std::nullopt;
    // v broadcast along a dim of static size 1 that the output does not know: v is smaller.
    if (have == StaticDim(1) && !want.shape()[d]) return std::nullopt;
    if (!have && want.shape()[d]) {
      // Where the output has static size 1, v must be 1 too and may say so; a larger known
      // size might come from broadcasting v, so v cannot stand for the output.
      if (*want.shape()[d] != 1) return std::nullopt;
      less_specific = true;
    }
  }
  if (less_specific) r = specify_shape(r, want.shape());
  if (!r.ok()) return std::nullopt;
  return r.ptr();
}

Replacement ReplaceWith(const Var& v, const Apply& node) {
  std::optional<VariablePtr> fitted = FitTo(v, *node.output_ptr(0));
  if (!fitted) return std::nullopt;
  return std::vector<VariablePtr>{*std::move(fitted)};
}

Replacement ReplaceFilled(const Var& v, const Apply& node) {
  if (Replacement r = ReplaceWith(v, node)) return r;
  Var filled = v;
  const std::vector<VariablePtr>& in = node.inputs();
  for (size_t i = 0; i < in.size(); ++i) {
    const bool seen = std::find(in.begin(), in.begin() + i, in[i]) != in.begin() + i;
    if (!seen && in[i]->tensor_type() != nullptr && in[i]->tensor_type()->ndim() > 0) {
      filled = second(Var(in[i]), filled);
    }
  }
  return ReplaceWith(filled, node);
}

bool InsideTree(const FunctionGraph& fg, const Apply& node,
                std::initializer_list<ScalarOpKind> kinds) {
  const std::vector<FunctionGraph::Client>& uses = fg.clients(node.output_ptr(0));
  if (uses.size() != 1 || uses[0].node == nullptr) return false;
  const Variable& parent = *uses[0].node->output_ptr(0);
  const std::optional<ScalarOpKind> k = ElemwiseKind(parent);
  return k && std::find(kinds.begin(), kinds.end(), *k) != kinds.end() &&
         parent.tensor_type()->dtype() == node.output_ptr(0)->tensor_type()->dtype();
}

std::optional<FlatProduct> FlattenProduct(const VariablePtr& v, int budget) {
  FlatProduct p;
  std::vector<VariablePtr> stack = {v};
  for (int visited = 0; !stack.empty(); ++visited) {
    if (visited == budget) return std::nullopt;
    VariablePtr u = std::move(stack.back());
    stack.pop_back();
    const std::optional<ScalarOpKind> kind = ElemwiseKind(*u);
    if (std::optional<double> c = ScalarConstantValue(*u)) {
      p.coefficient *= *c;
    } else if (kind == ScalarOpKind::kNeg) {
      p.coefficient = -p.coefficient;
      stack.push_back(u->owner()->inputs()[0]);
    } else if (kind == ScalarOpKind::kMul) {
      for (const VariablePtr& in : u->owner()->inputs()) stack.push_back(in);
    } else {
      p.factors.push_back(std::move(u));
    }
  }
  return p;
}

Var Negate(const Var& v) {
  if (v.ok() && ElemwiseKind(*v.ptr()) == ScalarOpKind::kNeg) return Var(v->owner()->inputs()[0]);
  return -v;
}

RewriteRule PhaseRule(std::string name, std::string phase, std::vector<OpClassId> tracks,
                      std::function<Replacement(const FunctionGraph&, Apply&)> apply) {
  return RewriteRule{std::move(name), {std::move(phase)}, std::move(tracks), std::move(apply)};
}

RewriteRule ElemwiseRule(std::string name, std::string phase, std::vector<ScalarOpKind> scalar_ops,
                         std::function<Replacement(const FunctionGraph&, Apply&)> apply) {
  return RewriteRule{std::move(name),
                     {std::move(phase)},
                     {OpClassIdOf<Elemwise>()},
                     std::move(apply),
                     std::move(scalar_ops)};
}

bool BroadcastsAsScalar(const Variable& v) {
  const std::vector<StaticDim>& dims = v.tensor_type()->shape();
  return std::all_of(dims.begin(), dims.end(),
                     [](const StaticDim& d) { return d == StaticDim(1); });
}

}  // namespace kiln
