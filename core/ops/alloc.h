// Building tensors: Alloc (zeros, ones, full and the *_like forms), ARange, Eye, and Join and
// Split (concatenate, stack, split).
#ifndef KILN_CORE_OPS_ALLOC_H_
#define KILN_CORE_OPS_ALLOC_H_

#include <optional>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// The building ops: Alloc(value, *dims), ARange{dtype}(start, stop, step), Eye{dtype}(n, m, k),
// Join(axis, *tensors), Split{n}(x, axis, sizes).
class BuildOp final : public Op {
 public:
  BuildOp(OpKind kind, DType dtype = DType::kFloat64, int n_splits = 0)
      : kind_(kind), dtype_(dtype), n_splits_(n_splits) {}
  OpKind kind() const override { return kind_; }
  // "Alloc", "ARange{dtype='int64'}", "Eye{dtype='float64'}", "Join", "Split{2}".
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
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  // Split's outputs are views of x.
  std::vector<std::pair<int, int>> view_map() const override;

 private:
  absl::StatusOr<ApplyPtr> MakeJoin(std::vector<VariablePtr> inputs) const;
  absl::StatusOr<ApplyPtr> MakeSplit(std::vector<VariablePtr> inputs) const;
  OpKind kind_;
  DType dtype_;
  int n_splits_;
};

// alloc(value, dims): value broadcast to the shape `dims` (integer scalars).
Var alloc(const Var& value, const std::vector<Var>& dims);
// zeros / ones / full of a constant shape or of symbolic dims, in `dtype`.
Var zeros(const std::vector<Var>& dims, DType dtype = DType::kFloat64);
Var ones(const std::vector<Var>& dims, DType dtype = DType::kFloat64);
Var full(const std::vector<Var>& dims, const Var& fill_value);
// Aesara's *_like: fill(x, value), an Elemwise{second}; dtype defaults to x's.
Var zeros_like(const Var& x, std::optional<DType> dtype = std::nullopt);
Var ones_like(const Var& x, std::optional<DType> dtype = std::nullopt);
// arange(start, stop, step): int64 for integer bounds, float64 otherwise, unless `dtype` is given.
Var arange(const Var& start, const Var& stop, const Var& step,
           std::optional<DType> dtype = std::nullopt);
Var arange(const Var& stop);
// eye(n, m, k): ones on the k-th diagonal of an n x m matrix.
Var eye(const Var& n, const Var& m, const Var& k, DType dtype = DType::kFloat64);
Var eye(int64_t n, DType dtype = DType::kFloat64);
// concatenate(tensors, axis) and stack(tensors, axis) (a new axis).
Var concatenate(const std::vector<Var>& tensors, int axis = 0);
Var stack(const std::vector<Var>& tensors, int axis = 0);
// split(x, sizes, axis): len(sizes) pieces along axis; sizes must add up to x.shape[axis].
std::vector<Var> split(const Var& x, const std::vector<int64_t>& sizes, int axis = 0);

}  // namespace kiln

#endif  // KILN_CORE_OPS_ALLOC_H_
