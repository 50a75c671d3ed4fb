// specialize: take-like advanced indexing as AdvancedSubtensor1 and AdvancedIncSubtensor1
// (Aesara's local_replace_AdvancedSubtensor, local_AdvancedIncSubtensor_to_AdvancedIncSubtensor1
// and their transform_take).
#include "core/passes/advanced_indexing_rules.h"

#include <memory>
#include <optional>

#include "core/ops/advanced_indexing.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/shape.h"
#include "core/passes/rule_util.h"

namespace kiln {
namespace {

// The axis of the one integer array of an index list that is otherwise full slices (Aesara's
// get_advsubtensor_axis), or nullopt; `index` is the array's input.
std::optional<int> TakeAxis(const std::vector<AdvIndexEntry>& idx, const Apply& node, int first,
                            VariablePtr* index) {
  std::optional<int> axis;
  for (size_t k = 0; k < idx.size(); ++k) {
    const AdvIndexEntry& e = idx[k];
    const bool full = e.kind == AdvIndexEntry::kSlice && !e.has_start && !e.has_stop && !e.has_step;
    if (full) continue;
    if (e.kind != AdvIndexEntry::kTensor || axis) return std::nullopt;
    axis = static_cast<int>(k);
  }
  if (!axis) return std::nullopt;
  *index = node.inputs()[first];  // full slices have no inputs: the array is the only one
  const TensorType* t = (*index)->tensor_type();
  if (t->dtype() == DType::kBool || t->ndim() == 0) return std::nullopt;
  return axis;
}

// The order that swaps dims 0 and `axis` of an ndim tensor (its own inverse).
std::vector<int> Swap(int ndim, int axis) {
  std::vector<int> order;
  for (int d = 0; d < ndim; ++d) order.push_back(d);
  std::swap(order[0], order[axis]);
  return order;
}

// a's entries at the integer array `indices` along `axis` (Aesara's transform_take): a vector
// is AdvancedSubtensor1 of a with `axis` moved first and back; an array of more dims is
// flattened first and the result reshaped to a.shape[:axis] + indices.shape + a.shape[axis+1:].
Var TransformTake(const Var& a, const Var& indices, int axis) {
  const int ndim = a->tensor_type()->ndim();
  if (indices->tensor_type()->ndim() == 1) {
    if (axis == 0) return take(a, indices);
    const std::vector<int> order = Swap(ndim, axis);
    return dimshuffle(take(dimshuffle(a, order), indices), order);
  }
  std::vector<Var> dims;
  for (int d = 0; d < axis; ++d) dims.push_back(shape_i(a, d));
  for (int d = 0; d < indices->tensor_type()->ndim(); ++d) dims.push_back(shape_i(indices, d));
  for (int d = axis + 1; d < ndim; ++d) dims.push_back(shape_i(a, d));
  return reshape(TransformTake(a, flatten(indices), axis), make_vector(dims));
}

// AdvancedSubtensor(x, i) with i an integer array among full slices -> TransformTake.
Replacement ReplaceAdvancedSubtensor(const FunctionGraph&, Apply& node) {
  const AdvancedSubtensor* op = node.op().As<AdvancedSubtensor>();
  if (op == nullptr) return std::nullopt;
  VariablePtr index;
  const std::optional<int> axis = TakeAxis(op->idx(), node, 1, &index);
  if (!axis) return std::nullopt;
  return ReplaceWith(TransformTake(Var(node.inputs()[0]), Var(index), *axis), node);
}

// AdvancedIncSubtensor(x, y, i) for an integer vector i among full slices, duplicates
// accumulating -> AdvancedIncSubtensor1 of x (and y) with i's axis moved first, moved back.
Replacement AdvancedIncToIncSubtensor1(const FunctionGraph&, Apply& node) {
  const AdvancedIncSubtensor* op = node.op().As<AdvancedIncSubtensor>();
  if (op == nullptr || op->attrs().ignore_duplicates) return std::nullopt;
  VariablePtr index;
  const std::optional<int> axis = TakeAxis(op->idx(), node, 2, &index);
  if (!axis || index->tensor_type()->ndim() != 1) return std::nullopt;
  const Var x(node.inputs()[0]);
  Var y(node.inputs()[1]);
  const int ndim = x->tensor_type()->ndim(), y_ndim = y->tensor_type()->ndim();
  const OpPtr inc = std::make_shared<AdvancedIncSubtensor1>(
      AdvancedIncSubtensor1Attrs{op->attrs().set_instead_of_inc});
  if (*axis == 0) return ReplaceWith(ApplyOp(inc, {x, y, Var(index)}), node);
  if (y_ndim < ndim) {  // y's missing leading dims made broadcastable, then swapped as x's
    std::vector<int> pad(ndim - y_ndim, -1);
    for (int d = 0; d < y_ndim; ++d) pad.push_back(d);
    y = dimshuffle(y, pad);
  }
  const std::vector<int> order = Swap(ndim, *axis);
  return ReplaceWith(
      dimshuffle(ApplyOp(inc, {dimshuffle(x, order), dimshuffle(y, order), Var(index)}), order),
      node);
}

}  // namespace

std::vector<RewriteRule> AdvancedIndexingRules() {
  return {
      PhaseRule("local_replace_AdvancedSubtensor", "specialize", {OpClassIdOf<AdvancedSubtensor>()},
                ReplaceAdvancedSubtensor),
      PhaseRule("local_AdvancedIncSubtensor_to_AdvancedIncSubtensor1", "specialize",
                {OpClassIdOf<AdvancedIncSubtensor>()}, AdvancedIncToIncSubtensor1),
  };
}

}  // namespace kiln
