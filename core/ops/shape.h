// Aesara's shape ops: Shape, Shape_i, Reshape, SpecifyShape and MakeVector, and the functions
// built on them (flatten, expand_dims, squeeze).
#ifndef KILN_CORE_OPS_SHAPE_H_
#define KILN_CORE_OPS_SHAPE_H_

#include <vector>

#include "core/graph/op.h"
#include "core/graph/var.h"

namespace kiln {

// x.shape: an int64 vector of x's dims.
class ShapeOp final : public Op {
 public:
  OpKind kind() const override { return OpKind::kShape; }
  std::string Name() const override { return "Shape"; }
  std::string Props() const override { return ""; }
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override;
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const override;
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                       std::vector<Tensor>& outputs) const override;
  // The props as typed attributes (see core/ops/op_registry.h).
  OpAttrs Attrs() const override;
  // The gradient rule (Aesara's L_op), in the family's *_grad.cc.
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// x.shape[i]: an int64 scalar.
class ShapeI final : public Op {
 public:
  explicit ShapeI(int i) : i_(i) {}
  int i() const { return i_; }
  OpKind kind() const override { return OpKind::kShapeI; }
  std::string Name() const override;  // "Shape_i{0}"
  std::string Props() const override;
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override;
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const override;
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                       std::vector<Tensor>& outputs) const override;
  // The props as typed attributes (see core/ops/op_registry.h).
  OpAttrs Attrs() const override;
  // The gradient rule (Aesara's L_op), in the family's *_grad.cc.
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;

 private:
  int i_;
};

// x.reshape(shape) for an integer vector `shape` of `ndim` entries, one of which may be -1.
// A view when x is contiguous; static dims come from a constant shape.
class Reshape final : public Op {
 public:
  explicit Reshape(int ndim) : ndim_(ndim) {}
  int ndim() const { return ndim_; }
  OpKind kind() const override { return OpKind::kReshape; }
  std::string Name() const override;  // "Reshape{2}"
  std::string Props() const override;
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override;
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const override;
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                       std::vector<Tensor>& outputs) const override;
  // The props as typed attributes (see core/ops/op_registry.h).
  OpAttrs Attrs() const override;
  // The output is a view of x when x is contiguous.
  std::vector<std::pair<int, int>> view_map() const override { return {{0, 0}}; }
  // The gradient rule (Aesara's L_op), in the family's *_grad.cc.
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;

 private:
  int ndim_;
};

// specify_shape(x, dims): x, checked at run time to have the given dims (integer scalars, -1
// for a dim left unchecked); constant dims become static.
class SpecifyShape final : public Op {
 public:
  OpKind kind() const override { return OpKind::kSpecifyShape; }
  std::string Name() const override { return "SpecifyShape"; }
  std::string Props() const override { return ""; }
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override;
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const override;
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                       std::vector<Tensor>& outputs) const override;
  // The props as typed attributes (see core/ops/op_registry.h).
  OpAttrs Attrs() const override;
  // The gradient rule (Aesara's L_op), in the family's *_grad.cc.
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  std::vector<std::pair<int, int>> view_map() const override { return {{0, 0}}; }
};

// A vector of `dtype` from scalars (cast to it when lossless).
class MakeVector final : public Op {
 public:
  explicit MakeVector(DType dtype) : dtype_(dtype) {}
  DType dtype() const { return dtype_; }
  OpKind kind() const override { return OpKind::kMakeVector; }
  std::string Name() const override;  // "MakeVector{dtype='int64'}"
  std::string Props() const override;
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override;
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const override;
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                       std::vector<Tensor>& outputs) const override;
  // The props as typed attributes (see core/ops/op_registry.h).
  OpAttrs Attrs() const override;
  // The gradient rule (Aesara's L_op), in the family's *_grad.cc.
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;

 private:
  DType dtype_;
};

// x.shape, x.shape[i] (negative i counts from the end).
Var shape(const Var& x);
Var shape_i(const Var& x, int i);
// x.reshape(dims) with constant dims (one may be -1), or with a symbolic integer vector.
Var reshape(const Var& x, const std::vector<int64_t>& dims);
Var reshape(const Var& x, const Var& dims);
// specify_shape(x, dims): kUnknownDim leaves a dim unchecked.
Var specify_shape(const Var& x, const StaticShape& dims);
// make_vector(scalars...) as int64, or the given dtype.
Var make_vector(const std::vector<Var>& scalars, DType dtype = DType::kInt64);
// x.flatten(ndim): the leading ndim - 1 dims kept, the rest merged.
Var flatten(const Var& x, int ndim = 1);
// expand_dims(x, axis): a broadcastable dim inserted at axis (negative counts from the end).
Var expand_dims(const Var& x, int axis);
// squeeze(x): every broadcastable dim dropped; squeeze(x, axes): those, which must be.
Var squeeze(const Var& x);
Var squeeze(const Var& x, const std::vector<int>& axes);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SHAPE_H_
