// canonicalize: the rules that shrink the graphs models build from one parameter vector (issue
// 40): reductions of reductions and of fills merged, reshapes that change nothing removed, a
// one-element slice reshaped to a scalar made an index, and indexes of MakeVector and of fills
// taken. Each rule reads `before -> after`.
#include <algorithm>
#include <vector>

#include "core/graph/constructors.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/passes/passes.h"
#include "core/passes/rule_util.h"
#include "core/rewrite/pattern.h"

namespace kiln {
namespace {

// The axes a reduction reduces, of an input of n dims, in increasing order.
std::vector<int> AxesOf(const CAReduce& op, int n) {
  std::vector<int> axes;
  if (!op.axis()) {
    for (int i = 0; i < n; ++i) axes.push_back(i);
    return axes;
  }
  for (int a : *op.axis()) axes.push_back(a < 0 ? a + n : a);
  std::sort(axes.begin(), axes.end());
  return axes;
}

// sum(sum(x, inner), outer) -> sum(x, inner and outer's axes of x), and the same for prod, when
// the inner reduction has no other reader and both accumulate alike (Aesara's local_op_of_op).
Replacement ReduceOfReduce(const FunctionGraph& fg, Apply& node) {
  const auto& outer = static_cast<const CAReduce&>(node.op());
  const Apply* inner_node = node.inputs()[0]->owner();
  if (inner_node == nullptr || !inner_node->op().Is<CAReduce>() ||
      fg.clients(node.inputs()[0].get()).size() != 1) {
    return std::nullopt;
  }
  const auto& inner = static_cast<const CAReduce&>(inner_node->op());
  if ((outer.reduce() != ReduceKind::kSum && outer.reduce() != ReduceKind::kProd) ||
      inner.reduce() != outer.reduce() || inner.dtype() != outer.dtype() ||
      inner.acc_dtype() != outer.acc_dtype()) {
    return std::nullopt;
  }
  const VariablePtr& x = inner_node->inputs()[0];
  const int n = x->tensor_type()->ndim();
  const std::vector<int> inner_axes = AxesOf(inner, n);
  std::vector<int> kept;  // x's dims the inner reduction keeps, which the outer one numbers
  for (int d = 0; d < n; ++d) {
    if (!std::binary_search(inner_axes.begin(), inner_axes.end(), d)) kept.push_back(d);
  }
  std::vector<int> axes = inner_axes;
  for (int a : AxesOf(outer, static_cast<int>(kept.size()))) axes.push_back(kept[a]);
  std::sort(axes.begin(), axes.end());
  std::optional<std::vector<int>> axis;
  if (static_cast<int>(axes.size()) != n) axis = axes;
  return ReplaceWith(
      ApplyOp(OpPtr(std::make_shared<CAReduce>(outer.reduce(), std::move(axis), outer.dtype(),
                                               outer.acc_dtype())),
              {Var(x)}),
      node);
}

// sum(fill(x, c)) -> c * size(x), for a constant-like c that broadcasts as a scalar and a sum
// to a scalar (Aesara's local_opt_alloc, on the fill the gradient of a sum seeds): the count
// folds to a constant when x's shape is known.
Replacement SumOfFill(const FunctionGraph&, Apply& node) {
  const auto& op = static_cast<const CAReduce&>(node.op());
  const VariablePtr& filled = node.inputs()[0];
  if (op.reduce() != ReduceKind::kSum || node.output_ptr(0)->tensor_type()->ndim() != 0 ||
      ElemwiseKind(*filled) != ScalarOpKind::kSecond) {
    return std::nullopt;
  }
  const VariablePtr &x = filled->owner()->inputs()[0], &c = filled->owner()->inputs()[1];
  if (!BroadcastsAsScalar(*c) || !ScalarConstantValue(*c)) return std::nullopt;
  const DType out = node.output_ptr(0)->tensor_type()->dtype();
  Var count = scalar_constant(int64_t{1}, DType::kInt64);
  for (int d = 0; d < x->tensor_type()->ndim(); ++d) count = count * shape_i(Var(x), d);
  return ReplaceWith(cast(dimshuffle(Var(c), {}), out) * cast(count, out), node);
}

// The value of v when it is a constant integer vector.
std::optional<std::vector<int64_t>> ConstantInts(const Variable& v) {
  if (!v.is_constant()) return std::nullopt;
  const Tensor& t = static_cast<const Constant&>(v).data();
  if (t.ndim() != 1 || !IsInteger(t.dtype())) return std::nullopt;
  std::vector<int64_t> values;
  for (int64_t i = 0; i < t.size(); ++i) {
    values.push_back(static_cast<int64_t>(t.ElementAsDouble(i)));
  }
  return values;
}

// v's length when v is a one-dimensional slice with constant bounds of a vector of static
// length, as x[a:b]: the pair (x, first index) and the length; else nullopt.
struct ConstantSlice {
  VariablePtr base;
  int64_t start = 0, length = 0;
};
std::optional<ConstantSlice> SliceOfStaticVector(const VariablePtr& v) {
  const Apply* node = v->owner();
  if (node == nullptr || !node->op().Is<Subtensor>()) return std::nullopt;
  const auto& op = static_cast<const Subtensor&>(node->op());
  const VariablePtr& x = node->inputs()[0];
  if (op.idx().size() != 1 || !op.idx()[0].is_slice || op.idx()[0].has_step ||
      x->tensor_type()->ndim() != 1 || !x->tensor_type()->shape()[0].has_value()) {
    return std::nullopt;
  }
  const int64_t n = *x->tensor_type()->shape()[0];
  const IndexEntry& e = op.idx()[0];
  int64_t bounds[2] = {0, n};
  size_t next = 1;
  for (int k = 0; k < 2; ++k) {
    if (!(k == 0 ? e.has_start : e.has_stop)) continue;
    const std::optional<double> b = ScalarConstantValue(*node->inputs()[next++]);
    if (!b) return std::nullopt;
    // Python's slice bounds: negative counts from the end; then clipped to [0, n].
    int64_t value = static_cast<int64_t>(*b);
    if (value < 0) value += n;
    bounds[k] = std::clamp<int64_t>(value, 0, n);
  }
  return ConstantSlice{x, bounds[0], std::max<int64_t>(0, bounds[1] - bounds[0])};
}

// reshape(x[a:b], (b - a,)) -> x[a:b] of static length b - a, x of static length: the reshape
// changes nothing (Aesara's local_useless_reshape, with the length the slice's shape inference
// gives, which its type does not carry: the new slice node's type does).
Replacement ReshapeOfSliceToItsLength(const FunctionGraph& fg, Apply& node) {
  if (static_cast<const Reshape&>(node.op()).ndim() != 1) return std::nullopt;
  const VariablePtr& sliced = node.inputs()[0];
  const std::optional<ConstantSlice> slice = SliceOfStaticVector(sliced);
  const std::optional<std::vector<int64_t>> shape = ConstantInts(*node.inputs()[1]);
  if (!slice || !shape || shape->size() != 1 ||
      ((*shape)[0] != slice->length && (*shape)[0] != -1) || fg.clients(sliced.get()).size() != 1) {
    return std::nullopt;
  }
  const Apply& s = *sliced->owner();
  const ApplyPtr typed = Apply::Make(s.op_ptr(), s.inputs(), {node.output_ptr(0)->type()});
  return ReplaceWith(Var(typed->output(0)), node);
}

// reshape(x[a:a+1], ()) -> x[a], x of static length (PyTensor reaches it through
// local_reshape_to_dimshuffle and the subtensor merge).
Replacement ReshapeOfUnitSliceToIndex(const FunctionGraph&, Apply& node) {
  if (static_cast<const Reshape&>(node.op()).ndim() != 0) return std::nullopt;
  const std::optional<ConstantSlice> slice = SliceOfStaticVector(node.inputs()[0]);
  if (!slice || slice->length != 1) return std::nullopt;
  return ReplaceWith(subtensor(Var(slice->base), {Index(slice->start)}), node);
}

// reshape(x, (-1,)) -> x for a vector x (flatten of a vector); reshape(s, (-1,)) and
// reshape(s, (1,)) -> s[None] for a scalar s, a view instead of a copy (Aesara's
// local_useless_reshape and PyTensor's local_reshape_to_dimshuffle).
Replacement FlattenOfVectorOrScalar(const FunctionGraph&, Apply& node) {
  if (static_cast<const Reshape&>(node.op()).ndim() != 1) return std::nullopt;
  const VariablePtr& x = node.inputs()[0];
  const std::optional<std::vector<int64_t>> shape = ConstantInts(*node.inputs()[1]);
  if (!shape || shape->size() != 1) return std::nullopt;
  const int ndim = x->tensor_type()->ndim();
  if (ndim == 1 && (*shape)[0] == -1) return ReplaceWith(Var(x), node);
  if (ndim == 0 && ((*shape)[0] == -1 || (*shape)[0] == 1)) {
    return ReplaceWith(dimshuffle(Var(x), {kX}), node);
  }
  return std::nullopt;
}

// MakeVector(a0, ..., an)[i] -> ai, i a constant in range (Aesara's local_subtensor_make_vector).
Replacement IndexOfMakeVector(const FunctionGraph&, Apply& node) {
  const auto& op = static_cast<const Subtensor&>(node.op());
  const Apply* mv = node.inputs()[0]->owner();
  if (op.idx().size() != 1 || op.idx()[0].is_slice || mv == nullptr || !mv->op().Is<MakeVector>()) {
    return std::nullopt;
  }
  const std::optional<double> i = ScalarConstantValue(*node.inputs()[1]);
  const int64_t n = mv->num_inputs();
  if (!i || *i < -n || *i >= n) return std::nullopt;
  const int64_t k = static_cast<int64_t>(*i);
  return ReplaceWith(Var(mv->inputs()[k < 0 ? k + n : k]), node);
}

// fill(x, c)[i, j, ...] -> fill(x[i, j, ...], c) for a constant-like c that broadcasts as a
// scalar and integer indices only (a 0-d result); the fill of two 0-d values is then c (the
// gradient of a sum of terms indexes the ones it fills).
Replacement IndexOfFill(const FunctionGraph&, Apply& node) {
  const auto& op = static_cast<const Subtensor&>(node.op());
  const VariablePtr& filled = node.inputs()[0];
  if (node.output_ptr(0)->tensor_type()->ndim() != 0 ||
      ElemwiseKind(*filled) != ScalarOpKind::kSecond) {
    return std::nullopt;
  }
  for (const IndexEntry& e : op.idx()) {
    if (e.is_slice) return std::nullopt;
  }
  const VariablePtr &x = filled->owner()->inputs()[0], &c = filled->owner()->inputs()[1];
  if (!BroadcastsAsScalar(*c) || x->tensor_type()->shape() != filled->tensor_type()->shape()) {
    return std::nullopt;
  }
  std::vector<VariablePtr> inputs = node.inputs();
  inputs[0] = x;
  absl::StatusOr<ApplyPtr> indexed = node.op().MakeNode(std::move(inputs));
  if (!indexed.ok()) return std::nullopt;
  return ReplaceWith(second(Var((*indexed)->output(0)), dimshuffle(Var(c), {})), node);
}

}  // namespace

std::vector<RewriteRule> ReshapeReduceRules() {
  const std::vector<OpClassId> reshape = {OpClassIdOf<Reshape>()};
  return {PhaseRule("local_op_of_op", "canonicalize", {OpClassIdOf<CAReduce>()}, ReduceOfReduce),
          PhaseRule("local_sum_of_fill", "canonicalize", {OpClassIdOf<CAReduce>()}, SumOfFill),
          PhaseRule("local_useless_reshape_of_slice", "canonicalize", reshape,
                    ReshapeOfSliceToItsLength),
          PhaseRule("local_reshape_unit_slice_to_index", "canonicalize", reshape,
                    ReshapeOfUnitSliceToIndex),
          PhaseRule("local_useless_flatten", "canonicalize", reshape, FlattenOfVectorOrScalar),
          PhaseRule("local_subtensor_make_vector", "canonicalize", {OpClassIdOf<Subtensor>()},
                    IndexOfMakeVector),
          PhaseRule("local_subtensor_of_fill", "canonicalize", {OpClassIdOf<Subtensor>()},
                    IndexOfFill)};
}

}  // namespace kiln
