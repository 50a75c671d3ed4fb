// Neural-network ops: Softmax and LogSoftmax (numerically stable, along an axis), and logsumexp,
// relu, sigmoid-based losses built from the op library; Sort and ArgSort.
#ifndef KILN_CORE_OPS_NNET_H_
#define KILN_CORE_OPS_NNET_H_

#include <optional>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"
#include "core/ops/reduce.h"

namespace kiln {

// Softmax{axis=1}, LogSoftmax{axis=1}, SortOp{quicksort, axis}, ArgSortOp{quicksort, axis}; an
// absent axis means all elements (Softmax) or the flattened tensor (sorting).
class AxisOp final : public Op {
 public:
  AxisOp(OpKind kind, std::optional<int> axis) : kind_(kind), axis_(axis) {}
  const std::optional<int>& axis() const { return axis_; }
  OpKind kind() const override { return kind_; }
  std::string Name() const override;
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override;
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const override;
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                       std::vector<Tensor>& outputs) const override;
  // The props as typed attributes, and the op from them (the registry's factory).
  OpAttrs Attrs() const override;
  static absl::StatusOr<OpPtr> FromAttrs(OpKind kind, const OpAttrs& attrs);
  // The gradient rule (Aesara's L_op), in the family's *_grad.cc.
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;

 private:
  OpKind kind_;
  std::optional<int> axis_;
};

// exp(x) / sum(exp(x)) along axis (-1 by default), computed as exp(x - max) for stability.
Var softmax(const Var& x, std::optional<int> axis = -1);
// log(softmax(x)), computed as x - max - log(sum(exp(x - max))): finite for large |x|.
Var log_softmax(const Var& x, std::optional<int> axis = -1);
// log(sum(exp(x))) over the axes, as max + log(sum(exp(x - max))).
Var logsumexp(const Var& x, Axes axes = {}, bool keepdims = false);
// max(x, 0), as Aesara's 0.5 * (x + abs(x)); with alpha, the leaky form.
Var relu(const Var& x, double alpha = 0.0);
// -(t * log(p) + (1 - t) * log(1 - p)), elementwise.
Var binary_crossentropy(const Var& output, const Var& target);
// -sum(t * log(p), last axis) for a distribution t, or -log(p[i, t[i]]) for integer labels t.
Var categorical_crossentropy(const Var& coding_dist, const Var& true_dist);
// Sorted copy and sorting indices (int64) along axis (-1 by default; nullopt: flattened).
// NaN sorts last; equal elements keep their order.
Var sort(const Var& x, std::optional<int> axis = -1);
Var argsort(const Var& x, std::optional<int> axis = -1);

}  // namespace kiln

#endif  // KILN_CORE_OPS_NNET_H_
