// Aesara's DimShuffle: reorders dims, inserts broadcastable dims ('x') and drops broadcastable
// ones.
#ifndef KILN_CORE_OPS_DIMSHUFFLE_H_
#define KILN_CORE_OPS_DIMSHUFFLE_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// The 'x' entry of a DimShuffle pattern: a new broadcastable dim. dimshuffle(v, {kX, 0}).
inline constexpr int kX = -1;

class DimShuffle final : public OpOf<DimShuffle> {
 public:
  // Validates the pattern against the input's broadcastable flags: entries are input dims or kX,
  // none repeated, and every dim left out is broadcastable. `inplace` makes the output a view
  // (Aesara's default, printed InplaceDimShuffle).
  static absl::StatusOr<OpPtr> Make(std::vector<bool> input_broadcastable,
                                    std::vector<int> new_order, bool inplace = true);

  const std::vector<bool>& input_broadcastable() const { return input_broadcastable_; }
  const std::vector<int>& new_order() const { return new_order_; }
  bool inplace() const { return inplace_; }

  static constexpr absl::string_view kTypeName = "DimShuffle";
  // "InplaceDimShuffle{x,0}" or "DimShuffle{1,0}".
  std::string Name() const override;
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override;
  // The output is a view of the input when inplace.
  std::vector<std::pair<int, int>> view_map() const override;
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const override;
  // A view of the input: no data is copied.
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                       std::vector<Tensor>& outputs) const override;
  // The props as typed attributes, and the op from them (the registry's factory).
  OpAttrs Attrs() const override;
  static absl::StatusOr<OpPtr> FromAttrs(const OpAttrs& attrs);
  // The gradient rule (Aesara's L_op), in the family's *_grad.cc.
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;

  DimShuffle(std::vector<bool> input_broadcastable, std::vector<int> new_order, bool inplace)
      : input_broadcastable_(std::move(input_broadcastable)),
        new_order_(std::move(new_order)),
        inplace_(inplace) {}

 private:
  std::vector<bool> input_broadcastable_;
  std::vector<int> new_order_;
  bool inplace_;
};

// x.dimshuffle(pattern), with kX for 'x': dimshuffle(v, {kX, 0}) makes a row of a vector.
Var dimshuffle(const Var& x, std::vector<int> new_order);
// x.T: the dims reversed.
Var transpose(const Var& x);

}  // namespace kiln

#endif  // KILN_CORE_OPS_DIMSHUFFLE_H_
