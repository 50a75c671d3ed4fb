// Op: a kind of computation plus its attributes. Ops with equal keys (class name and attributes)
// are equal: one notion of identity for merge, hashing and the function id.
#ifndef KILN_CORE_GRAPH_OP_H_
#define KILN_CORE_GRAPH_OP_H_

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include "absl/strings/string_view.h"
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/graph/basic.h"
#include "core/graph/op_attrs.h"
#include "core/graph/var.h"
#include "core/tensor/tensor.h"

namespace kiln {

// A number per op class, given on the class's first use: what rule indexes key on. Compare ops by
// class with op.Is<T>() and op.As<T>(), never by their type names.
enum class OpClassId : int {};
// A fresh class id (for OpClassIdOf).
OpClassId NewOpClassId();
// The id of op class T.
template <typename T>
OpClassId OpClassIdOf() {
  static const OpClassId id = NewOpClassId();
  return id;
}

class Op : public std::enable_shared_from_this<Op> {
 public:
  virtual ~Op() = default;

  // Aesara's class name: "Elemwise", "Repeat". What the wire and the registry know the op by.
  virtual absl::string_view type_name() const = 0;
  // This op's class (OpClassIdOf<Softmax>()).
  virtual OpClassId class_id() const = 0;
  // True when this op is a T: node.op().Is<IfElse>().
  template <typename T>
  bool Is() const {
    return class_id() == OpClassIdOf<T>();
  }
  // This op as a T, or null when it is of another class.
  template <typename T>
  const T* As() const {
    return class_id() == OpClassIdOf<T>() ? static_cast<const T*>(this) : nullptr;
  }
  // Aesara's str(op): "Elemwise{mul,no_inplace}", "InplaceDimShuffle{x,x}".
  virtual std::string Name() const = 0;

  // Type inference: the Apply node of this op on `inputs`, or an INVALID_ARGUMENT status naming
  // the op, the input index and the types involved.
  virtual absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const = 0;

  // Aesara's infer_shape: each output's shape as int64 scalar variables (one per dim), built from
  // the inputs' shapes given the same way (see core/ops/shape_infer.h).
  virtual absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const = 0;

  // Reference kernel: fills `outputs` (one per node output) from `inputs`.
  virtual absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                               std::vector<Tensor>& outputs) const = 0;

  // Aesara's L_op: the gradient of the cost with respect to each input of `node`, given the
  // gradient with respect to each output (DisconnectedType for outputs the cost does not depend
  // on while others are connected). Each result is a tensor, a NullType variable
  // (grad_undefined) or a DisconnectedType variable; errors travel in the Vars. The default
  // says the gradient is not implemented.
  virtual std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const;
  // Aesara's connection_pattern: [input][output] is true when the output's value depends on the
  // input's values (not only on its shape). The default: every input feeds every output.
  virtual std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const;

  // The props as typed attributes: MakeOp(type_name(), Attrs()) builds an equal op
  // (core/graph/op_registry.h). Serialization stores these.
  virtual OpAttrs Attrs() const = 0;
  // The op's identity as text: its class name and attributes, "Reshape{ndim=i2;}". Computed once.
  const std::string& Key() const;

  // For a lazy op (Aesara's IfElse, whose input 0 is its condition): how many inputs after the
  // condition make the branch taken when it holds (the rest make the other); -1 for an eager op.
  // The linker computes only the chosen branch's inputs.
  virtual int lazy_then_inputs() const { return -1; }

  // Aesara's view_map as (output, input) pairs: the output aliases the input's buffer.
  virtual std::vector<std::pair<int, int>> view_map() const { return {}; }
  // Aesara's destroy_map as (output, input) pairs: the output overwrites the input's buffer.
  virtual std::vector<std::pair<int, int>> destroy_map() const { return {}; }

  bool operator==(const Op& other) const { return this == &other || Key() == other.Key(); }
  // Hash consistent with ==.
  size_t Hash() const;

 protected:
  // This op as a shared pointer, for the Apply nodes it makes.
  OpPtr self() const { return shared_from_this(); }

 private:
  mutable std::once_flag key_once_;
  mutable std::string key_;
};

// The base of every op class: its class id and Aesara's class name (Derived::kTypeName).
template <typename Derived>
class OpOf : public Op {
 public:
  absl::string_view type_name() const final { return Derived::kTypeName; }
  OpClassId class_id() const final { return OpClassIdOf<Derived>(); }
};

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_OP_H_
