#include "core/ops/shape_infer.h"

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/op.h"
#include "core/tensor/status_macros.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"

namespace kiln {

VariablePtr ConstDim(int64_t value) { return scalar_constant(value, DType::kInt64).ptr(); }

VariablePtr ProductOf(const ShapeVars& dims) {
  Var size = Var(ConstDim(1));
  for (const VariablePtr& d : dims) size = size * Var(d);
  return size.ptr();
}

VariablePtr DimOf(const VariablePtr& v, int d) {
  const TensorType* t = v->tensor_type();
  if (t != nullptr && t->shape()[d]) return ConstDim(*t->shape()[d]);
  return shape_i(Var(v), d).ptr();
}

ShapeVars ShapeOf(const VariablePtr& v) {
  ShapeVars dims;
  const TensorType* t = v->tensor_type();
  for (int d = 0; t != nullptr && d < t->ndim(); ++d) dims.push_back(DimOf(v, d));
  return dims;
}

absl::StatusOr<std::vector<ShapeVars>> InferOutputShapes(const Apply& node) {
  std::vector<ShapeVars> in;
  for (const VariablePtr& v : node.inputs()) in.push_back(ShapeOf(v));
  absl::StatusOr<std::vector<ShapeVars>> out = node.op().InferShape(node, in);
  if (!out.ok()) return out.status();
  if (static_cast<int>(out->size()) != node.num_outputs()) {
    return absl::InternalError(absl::StrCat(node.op().Name(), ": InferShape gave ", out->size(),
                                            " shapes for ", node.num_outputs(), " outputs"));
  }
  return out;
}

absl::StatusOr<ShapeVars> infer_shape(const Var& v) {
  if (!v.ok()) return v.status();
  if (v->owner() == nullptr) return ShapeOf(v.ptr());
  ASSIGN_OR_RETURN(std::vector<ShapeVars> shapes, InferOutputShapes(*v->owner()));
  return (shapes)[v->index()];
}

VariablePtr BroadcastDim(const std::vector<VariablePtr>& dims) {
  std::vector<VariablePtr> symbolic;
  for (const VariablePtr& d : dims) {
    if (!d->is_constant()) {
      symbolic.push_back(d);
    } else if (static_cast<const Constant&>(*d).data().ElementAsDouble(0) != 1) {
      return d;  // a known size other than 1 is the size
    }
  }
  if (symbolic.empty()) return ConstDim(1);
  // Valid broadcasting makes the dims equal or 1, so their maximum is the size.
  Var result = symbolic[0];
  for (size_t i = 1; i < symbolic.size(); ++i) result = maximum(result, Var(symbolic[i]));
  return result.ptr();
}

}  // namespace kiln
