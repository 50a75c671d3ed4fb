// Neural-network ops: Softmax and LogSoftmax (numerically stable, along an axis), and logsumexp,
// relu, sigmoid-based losses built from the op library; Sort and ArgSort.
#ifndef KILN_CORE_OPS_NNET_H_
#define KILN_CORE_OPS_NNET_H_

#include <optional>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"
#include "core/ops/reduce.h"

namespace kiln {

// The attribute of the ops along one axis: the axis, or None for all elements (Softmax,
// LogSoftmax) or the flattened tensor (sorting).
struct AxisAttrs {
  std::optional<int> axis;
  static constexpr auto Fields() { return std::tuple{AttrField{"axis", &AxisAttrs::axis}}; }
  absl::Status Check() const { return axis ? CheckDimIndex("axis", *axis) : absl::OkStatus(); }
};

// Softmax{axis=1}: exp(x) / sum(exp(x)) along the axis, computed as exp(x - max).
class Softmax final : public DeclaredOp<Softmax, AxisAttrs> {
 public:
  KILN_DECLARED_OP("Softmax")
  const std::optional<int>& axis() const { return attrs().axis; }
};

// LogSoftmax{axis=1}: x - max - log(sum(exp(x - max))) along the axis.
class LogSoftmax final : public DeclaredOp<LogSoftmax, AxisAttrs> {
 public:
  KILN_DECLARED_OP("LogSoftmax")
  const std::optional<int>& axis() const { return attrs().axis; }
};

// SortOp{quicksort, axis=1}: a sorted copy along the axis (NaN last, a stable sort).
class SortOp final : public DeclaredOp<SortOp, AxisAttrs> {
 public:
  KILN_DECLARED_OP("SortOp")
  std::string Name() const override;
  const std::optional<int>& axis() const { return attrs().axis; }
};

// ArgSortOp{quicksort, axis=1}: the int64 indices that sort x along the axis.
class ArgSortOp final : public DeclaredOp<ArgSortOp, AxisAttrs> {
 public:
  KILN_DECLARED_OP("ArgSortOp")
  std::string Name() const override;
  const std::optional<int>& axis() const { return attrs().axis; }
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
