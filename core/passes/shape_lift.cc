#include "core/passes/shape_lift.h"

#include "absl/container/flat_hash_set.h"
#include "core/graph/op.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/passes/rule_util.h"

namespace kiln {
namespace {

// True when dim is Shape_i(v) itself: the op could not infer it, and lifting would loop.
bool IsOwnDim(const VariablePtr& dim, const VariablePtr& v) {
  const Apply* node = dim->owner();
  return node != nullptr && node->op().Is<ShapeI>() && node->inputs()[0] == v;
}

// v's dims: from its op's shape inference when v is computed, else Shape_i (or the static
// size) of v itself.
std::optional<ShapeVars> DimsOf(const VariablePtr& v) {
  if (v->owner() == nullptr) return ShapeOf(v);
  absl::StatusOr<std::vector<ShapeVars>> shapes = InferOutputShapes(*v->owner());
  if (!shapes.ok()) return std::nullopt;
  return (*shapes)[v->index()];
}

// Shape(x) -> MakeVector(Shape_i{0}(x), ...), Shape(f(x)) -> MakeVector(f's inferred dims).
Replacement ShapeToShapeI(const FunctionGraph&, Apply& node) {
  const VariablePtr& v = node.inputs()[0];
  if (v->tensor_type() == nullptr || v->tensor_type()->ndim() == 0) return std::nullopt;
  std::optional<ShapeVars> dims = DimsOf(v);
  if (!dims) return std::nullopt;
  return ReplaceWith(make_vector(std::vector<Var>(dims->begin(), dims->end())), node);
}

// True when `dim`, a fresh expression, asks for at most one dim of a computed value: each lift
// then replaces a Shape_i by at most one, so lifting stays linear in the graph (where a dim that
// is the maximum of two inputs' dims, lifted again and again, would double at every level).
bool AsksForOneComputedDim(const FunctionGraph& fg, const VariablePtr& dim) {
  constexpr int kMaxWalk = 256;
  std::vector<const Variable*> stack = {dim.get()};
  absl::flat_hash_set<const Variable*> seen;
  int computed_dims = 0;
  while (!stack.empty()) {
    const Variable* v = stack.back();
    stack.pop_back();
    const Apply* node = v->owner();
    // Stop at what the graph holds already, and at leaves.
    if (node == nullptr || !fg.clients(v).empty() || !seen.insert(v).second) continue;
    if (static_cast<int>(seen.size()) > kMaxWalk) return false;
    if (node->op().Is<ShapeI>()) {
      computed_dims += node->inputs()[0]->owner() != nullptr;
      continue;
    }
    for (const VariablePtr& in : node->inputs()) stack.push_back(in.get());
  }
  return computed_dims <= 1;
}

// Shape_i{i}(f(x)) -> dim i of f's inferred shape, in terms of x's dims.
Replacement ShapeILift(const FunctionGraph& fg, Apply& node) {
  const VariablePtr& v = node.inputs()[0];
  if (v->owner() == nullptr) return std::nullopt;
  std::optional<ShapeVars> dims = DimsOf(v);
  const int i = static_cast<const ShapeI&>(node.op()).i();
  if (!dims || i >= static_cast<int>(dims->size()) || IsOwnDim((*dims)[i], v) ||
      !AsksForOneComputedDim(fg, (*dims)[i])) {
    return std::nullopt;
  }
  return ReplaceWith(Var((*dims)[i]), node);
}

}  // namespace

std::vector<RewriteRule> ShapeLiftRules() {
  return {PhaseRule("local_shape_to_shape_i", "canonicalize", {OpClassIdOf<ShapeOp>()}, ShapeToShapeI),
          PhaseRule("local_shape_i_lift", "canonicalize", {OpClassIdOf<ShapeI>()}, ShapeILift)};
}

}  // namespace kiln
