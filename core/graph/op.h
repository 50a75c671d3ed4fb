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
#include "core/runtime/tensor.h"

namespace kiln {

// Every op kind Kiln knows, listed once. X(enum name, Aesara class name).
#define KILN_OP_KINDS(X)                             \
  X(kElemwise, "Elemwise")                           \
  X(kDimShuffle, "DimShuffle")                       \
  X(kShape, "Shape")                                 \
  X(kShapeI, "Shape_i")                              \
  X(kReshape, "Reshape")                             \
  X(kSpecifyShape, "SpecifyShape")                   \
  X(kMakeVector, "MakeVector")                       \
  X(kCAReduce, "CAReduce")                           \
  X(kMaxAndArgmax, "MaxAndArgmax")                   \
  X(kArgmax, "Argmax")                               \
  X(kCumOp, "CumOp")                                 \
  X(kDot, "Dot")                                     \
  X(kMatMul, "MatMul")                               \
  X(kDot22, "Dot22")                                 \
  X(kGemm, "Gemm")                                   \
  X(kGemv, "Gemv")                                   \
  X(kAlloc, "Alloc")                                 \
  X(kARange, "ARange")                               \
  X(kEye, "Eye")                                     \
  X(kJoin, "Join")                                   \
  X(kSplit, "Split")                                 \
  X(kSubtensor, "Subtensor")                         \
  X(kIncSubtensor, "IncSubtensor")                   \
  X(kAdvancedSubtensor1, "AdvancedSubtensor1")       \
  X(kAdvancedIncSubtensor1, "AdvancedIncSubtensor1") \
  X(kSoftmax, "Softmax")                             \
  X(kLogSoftmax, "LogSoftmax")                       \
  X(kSort, "SortOp")                                 \
  X(kArgSort, "ArgSortOp")                           \
  X(kGradientOp, "GradientOp")

// The kinds of the ops that predate declared ops (core/graph/op_decl.h), which rewrites switch on;
// a declared op is kDeclared and told apart by its type_name().
enum class OpKind {
#define KILN_OP_KIND_ENUM(e, name) e,
  KILN_OP_KINDS(KILN_OP_KIND_ENUM)
#undef KILN_OP_KIND_ENUM
  kDeclared
};

// Aesara's class name of the kind: "Elemwise".
absl::string_view OpKindName(OpKind kind);

class Op : public std::enable_shared_from_this<Op> {
 public:
  virtual ~Op() = default;

  virtual OpKind kind() const { return OpKind::kDeclared; }
  // Aesara's class name: "Elemwise", "Repeat". What the wire and the registry know the op by.
  virtual absl::string_view type_name() const { return OpKindName(kind()); }
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

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_OP_H_
