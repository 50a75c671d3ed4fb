// Aesara's Elemwise: a scalar op mapped over tensors with NumPy broadcasting.
#ifndef KILN_CORE_OPS_ELEMWISE_H_
#define KILN_CORE_OPS_ELEMWISE_H_

#include <utility>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/ops/scalar_op.h"

namespace kiln {

class Elemwise final : public OpOf<Elemwise> {
 public:
  // (output index, input index) pairs: the output is written into that input's buffer.
  using InplacePattern = std::vector<std::pair<int, int>>;

  explicit Elemwise(ScalarOp scalar_op, InplacePattern inplace_pattern = {});
  static OpPtr Make(ScalarOp scalar_op, InplacePattern inplace_pattern = {});
  static OpPtr Make(ScalarOpKind kind, InplacePattern inplace_pattern = {}) {
    return Make(ScalarOp{kind}, std::move(inplace_pattern));
  }

  const ScalarOp& scalar_op() const { return scalar_op_; }
  const InplacePattern& inplace_pattern() const { return inplace_pattern_; }

  static constexpr absl::string_view kTypeName = "Elemwise";
  // "Elemwise{mul,no_inplace}", "Elemwise{Cast{float32}}", or "Elemwise{Mul}[(0, 0)]" with an
  // inplace pattern.
  std::string Name() const override { return name_; }
  // Checks the arity and that every input is a tensor, pads lower-rank inputs with
  // InplaceDimShuffle{x,...} on the left, infers the dtype by the scalar op's rule and the static
  // shape by broadcasting (an error when known dims differ and neither is 1).
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override;
  // The inplace pattern: each such output overwrites its input.
  std::vector<std::pair<int, int>> destroy_map() const override { return inplace_pattern_; }
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const override;
  // NumPy semantics: broadcasting, wrap-around integer arithmetic, float16 computed in float32;
  // integer division or modulo by zero and integer negative powers are errors.
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                       std::vector<Tensor>& outputs) const override;
  // The props as typed attributes, and the op from them (the registry's factory).
  OpAttrs Attrs() const override;
  static absl::StatusOr<OpPtr> FromAttrs(const OpAttrs& attrs);
  // The scalar op's gradient rule elementwise, summed over the dims each input was broadcast
  // along; zeros for integer and bool results (elemwise_grad.cc).
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;
  // second (fill) does not depend on its first input's values.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;

 private:
  ScalarOp scalar_op_;
  InplacePattern inplace_pattern_;
  std::string name_;  // computed once: kernels use it in their error messages on every call
};

}  // namespace kiln

#endif  // KILN_CORE_OPS_ELEMWISE_H_
