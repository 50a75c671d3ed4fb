// Helpers for Op::InferShape: symbolic dims as int64 scalar variables (constants where the static
// shape knows them, Shape_i otherwise), and the inferred shape of a variable.
#ifndef KILN_CORE_OPS_SHAPE_INFER_H_
#define KILN_CORE_OPS_SHAPE_INFER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/basic.h"
#include "core/graph/var.h"

namespace kiln {

// One shape: an int64 scalar variable per dim.
using ShapeVars = std::vector<VariablePtr>;

// The int64 constant `value`.
VariablePtr ConstDim(int64_t value);
// Dim d of v: its static size as a constant, else Shape_i{d}(v).
VariablePtr DimOf(const VariablePtr& v, int d);
// Every dim of v.
ShapeVars ShapeOf(const VariablePtr& v);
// The shapes of the outputs of v's owner, from its op's InferShape on the inputs' ShapeOf.
absl::StatusOr<std::vector<ShapeVars>> InferOutputShapes(const Apply& node);
// The inferred shape of v (ShapeOf for a variable without owner).
absl::StatusOr<ShapeVars> infer_shape(const Var& v);

// The number of elements of a shape: the int64 product of its dims.
VariablePtr ProductOf(const ShapeVars& dims);

// The dim of several broadcast operands: the first that is not statically 1, else 1.
VariablePtr BroadcastDim(const std::vector<VariablePtr>& dims);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SHAPE_INFER_H_
