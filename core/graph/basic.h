// The graph's building blocks, as in aesara.graph.basic: Variable, Constant and Apply.
#ifndef KILN_CORE_GRAPH_BASIC_H_
#define KILN_CORE_GRAPH_BASIC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/type.h"
#include "core/tensor/tensor.h"

namespace kiln {

class Apply;
class Op;
class Variable;
using ApplyPtr = std::shared_ptr<Apply>;
using OpPtr = std::shared_ptr<const Op>;
using VariablePtr = std::shared_ptr<Variable>;

// A datum of the graph: {type, owner, index, name}. Graph inputs have no owner; outputs of an
// Apply are owned by it, so holding an output keeps its node and everything above it alive.
class Variable {
 public:
  virtual ~Variable() = default;
  Variable(const Variable&) = delete;
  Variable& operator=(const Variable&) = delete;

  // A fresh input variable (no owner).
  static VariablePtr Make(TypePtr type, std::string name = "");

  const TypePtr& type() const { return type_; }
  // The TensorType, or nullptr when the type is another kind.
  const TensorType* tensor_type() const { return tensor_type_; }
  // The Apply node computing this variable, or nullptr for graph inputs and constants.
  Apply* owner() const { return owner_; }
  // Position among owner()->outputs().
  int index() const { return index_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  virtual bool is_constant() const { return false; }

  // Aesara's str(variable): the name, "Elemwise{mul,no_inplace}.0" for an unnamed output, or
  // "<TensorType(float64, (?, ?))>" for an unnamed input.
  virtual std::string ToString() const;
  // A new owner-less variable of the same type and name (a constant clones its data too).
  virtual VariablePtr CloneDetached() const;

 protected:
  Variable(TypePtr type, Apply* owner, int index, std::string name)
      : type_(std::move(type)),
        tensor_type_(dynamic_cast<const TensorType*>(type_.get())),
        owner_(owner),
        index_(index),
        name_(std::move(name)) {}

 private:
  friend class Apply;
  TypePtr type_;
  const TensorType* tensor_type_;  // type_ as a TensorType (it never changes), or nullptr
  Apply* owner_;
  int index_;
  std::string name_;
};

// A Variable with a fixed value: Aesara's TensorConstant{data}.
class Constant final : public Variable {
 public:
  // A constant of `type` holding `data` (whose dtype and shape must match the type).
  static std::shared_ptr<Constant> Make(TypePtr type, Tensor data, std::string name = "");
  // Make for untrusted data: INVALID_ARGUMENT, not a crash, when the data does not fit the type.
  static absl::StatusOr<std::shared_ptr<Constant>> MakeChecked(TypePtr type, Tensor data,
                                                               std::string name = "");
  // A constant whose type is exactly the data's dtype and shape.
  static std::shared_ptr<Constant> FromTensor(Tensor data, std::string name = "");

  const Tensor& data() const { return data_; }
  bool is_constant() const override { return true; }
  // "TensorConstant{2.0}", or the name when set.
  std::string ToString() const override;
  VariablePtr CloneDetached() const override;

 private:
  Constant(TypePtr type, Tensor data, std::string name)
      : Variable(std::move(type), nullptr, 0, std::move(name)), data_(std::move(data)) {}
  Tensor data_;
};

// The application of an Op to input variables, producing output variables: {op, inputs, outputs}.
class Apply : public std::enable_shared_from_this<Apply> {
 public:
  // Releases the inputs iteratively, so that dropping a very deep graph cannot overflow the stack.
  ~Apply();

  // A node of `op` on `inputs` whose outputs have `output_types`. Ops call this from MakeNode
  // once the types are inferred; it does not check them.
  static ApplyPtr Make(OpPtr op, std::vector<VariablePtr> inputs,
                       const std::vector<TypePtr>& output_types);

  const Op& op() const { return *op_; }
  const OpPtr& op_ptr() const { return op_; }
  const std::vector<VariablePtr>& inputs() const { return inputs_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // Output i, sharing ownership of this node.
  VariablePtr output(int i) const;
  std::vector<VariablePtr> outputs() const;
  // Output i without ownership (valid while the node lives).
  Variable* output_ptr(int i) const { return outputs_[i].get(); }

  // Rewires input i; only a FunctionGraph, which tracks clients, should call this.
  void set_input(int i, VariablePtr v) { inputs_[i] = std::move(v); }

  // Aesara's str(apply): "Elemwise{mul,no_inplace}(x, InplaceDimShuffle{x,x}.0)".
  std::string ToString() const;

 private:
  Apply(OpPtr op, std::vector<VariablePtr> inputs)
      : op_(std::move(op)), inputs_(std::move(inputs)) {}
  OpPtr op_;
  std::vector<VariablePtr> inputs_;
  std::vector<std::unique_ptr<Variable>> outputs_;
  // The last FunctionGraph walk that visited this node (a mark, so that walks of a graph's own
  // nodes need no hash set).
  friend class FunctionGraph;
  mutable uint64_t walk_mark_ = 0;
};

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_BASIC_H_
