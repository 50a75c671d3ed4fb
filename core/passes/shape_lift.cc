#include "core/passes/shape_lift.h"

#include "core/graph/op.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/passes/rule_util.h"

namespace kiln {
namespace {

// True when dim is Shape_i(v) itself: the op could not infer it, and lifting would loop.
bool IsOwnDim(const VariablePtr& dim, const VariablePtr& v) {
  const Apply* node = dim->owner();
  return node != nullptr && node->op().kind() == OpKind::kShapeI && node->inputs()[0] == v;
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

// Shape_i{i}(f(x)) -> dim i of f's inferred shape, in terms of x's dims.
Replacement ShapeILift(const FunctionGraph&, Apply& node) {
  const VariablePtr& v = node.inputs()[0];
  if (v->owner() == nullptr) return std::nullopt;
  std::optional<ShapeVars> dims = DimsOf(v);
  const int i = static_cast<const ShapeI&>(node.op()).i();
  if (!dims || i >= static_cast<int>(dims->size()) || IsOwnDim((*dims)[i], v)) {
    return std::nullopt;
  }
  return ReplaceWith(Var((*dims)[i]), node);
}

}  // namespace

std::vector<RewriteRule> ShapeLiftRules() {
  return {PhaseRule("local_shape_to_shape_i", "canonicalize", {OpKind::kShape}, ShapeToShapeI),
          PhaseRule("local_shape_i_lift", "canonicalize", {OpKind::kShapeI}, ShapeILift)};
}

}  // namespace kiln
