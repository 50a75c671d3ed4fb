// Reductions, as aesara.tensor.math builds them: CAReduce (Sum, Prod, Max, Min, All, Any),
// MaxAndArgmax, Argmax and CumOp, and mean, var and std built from them.
#ifndef KILN_CORE_OPS_REDUCE_H_
#define KILN_CORE_OPS_REDUCE_H_

#include <initializer_list>
#include <optional>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// The axes a reduction runs over: all of them by default, one (`0`, `-1`) or several (`{0, 2}`).
struct Axes {
  Axes() = default;
  Axes(int axis) : axes(std::vector<int>{axis}) {}  // NOLINT: implicit by design
  Axes(std::initializer_list<int> list) : axes(std::vector<int>(list)) {}
  Axes(std::vector<int> list) : axes(std::move(list)) {}  // NOLINT
  std::optional<std::vector<int>> axes;                   // nullopt: every axis
};

// The reduction a CAReduce performs.
enum class ReduceKind { kSum, kProd, kMax, kMin, kAll, kAny };

// Aesara's CAReduce family. Axes are normalized (sorted, non-negative) when the node is made.
class CAReduce final : public OpOf<CAReduce> {
 public:
  // `axis` nullopt reduces every axis; `dtype`/`acc_dtype` apply to Sum and Prod, which otherwise
  // widen integers to int64/uint64 and accumulate float32 in float64, as Aesara does.
  CAReduce(ReduceKind reduce, std::optional<std::vector<int>> axis,
           std::optional<DType> dtype = std::nullopt, std::optional<DType> acc_dtype = std::nullopt)
      : reduce_(reduce), axis_(std::move(axis)), dtype_(dtype), acc_dtype_(acc_dtype) {}

  ReduceKind reduce() const { return reduce_; }
  const std::optional<std::vector<int>>& axis() const { return axis_; }
  const std::optional<DType>& dtype() const { return dtype_; }
  const std::optional<DType>& acc_dtype() const { return acc_dtype_; }
  static constexpr absl::string_view kTypeName = "CAReduce";
  // "Sum{axis=[0], acc_dtype=float64}", "Prod{mul}{acc_dtype=int64}", "Max{maximum}{0, 1}",
  // "All{0}", "Any".
  std::string Name() const override;
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override;
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const override;
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                       std::vector<Tensor>& outputs) const override;
  // The props as typed attributes, and the op from them (the registry's factory).
  OpAttrs Attrs() const override;
  static absl::StatusOr<OpPtr> FromAttrs(const OpAttrs& attrs);
  // The gradient rule (Aesara's L_op), in the family's *_grad.cc.
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;

 private:
  ReduceKind reduce_;
  std::optional<std::vector<int>> axis_;
  std::optional<DType> dtype_;
  std::optional<DType> acc_dtype_;
};

// The attribute of MaxAndArgmax and Argmax: the reduced axes, sorted and non-negative.
struct ArgmaxAttrs {
  std::vector<int> axis;
  static constexpr auto Fields() { return std::tuple{AttrField{"axis", &ArgmaxAttrs::axis}}; }
  absl::Status Check() const;
};

// MaxAndArgmax{axis=(0,)}: the maximum and the int64 index of its first occurrence, counted in
// C order over the reduced axes.
class MaxAndArgmax final : public DeclaredOp<MaxAndArgmax, ArgmaxAttrs> {
 public:
  KILN_DECLARED_OP("MaxAndArgmax")
  const std::vector<int>& axis() const { return attrs().axis; }
  std::string Name() const override;
};

// Argmax{axis=(0,)}: MaxAndArgmax's index output alone.
class Argmax final : public DeclaredOp<Argmax, ArgmaxAttrs> {
 public:
  KILN_DECLARED_OP("Argmax")
  const std::vector<int>& axis() const { return attrs().axis; }
  std::string Name() const override;
};

// mode: "add" (cumsum) or "mul" (cumprod); axis: the axis, or None for the flattened tensor.
struct CumOpAttrs {
  std::string mode = "add";
  std::optional<int> axis;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"mode", &CumOpAttrs::mode}, AttrField{"axis", &CumOpAttrs::axis}};
  }
  absl::Status Check() const;
};

// CumOp{axis, add|mul}: cumulative sum or product along an axis (nullopt flattens first).
class CumOp final : public DeclaredOp<CumOp, CumOpAttrs> {
 public:
  KILN_DECLARED_OP("CumOp")
  CumOp(std::optional<int> axis, bool product) : DeclaredOp({product ? "mul" : "add", axis}) {}
  bool product() const { return attrs().mode == "mul"; }
  const std::optional<int>& axis() const { return attrs().axis; }
  std::string Name() const override;  // "CumOp{None, add}", "CumOp{1, mul}"
};

// Reductions; keepdims re-inserts the reduced axes as broadcastable dims (a DimShuffle).
Var sum(const Var& x, Axes axes = {}, bool keepdims = false);
Var prod(const Var& x, Axes axes = {}, bool keepdims = false);
Var max(const Var& x, Axes axes = {}, bool keepdims = false);
Var min(const Var& x, Axes axes = {}, bool keepdims = false);
Var all(const Var& x, Axes axes = {}, bool keepdims = false);
Var any(const Var& x, Axes axes = {}, bool keepdims = false);
// Index of the maximum (minimum) along the axes, int64.
Var argmax(const Var& x, Axes axes = {}, bool keepdims = false);
Var argmin(const Var& x, Axes axes = {}, bool keepdims = false);
// Both outputs of MaxAndArgmax.
std::vector<Var> max_and_argmax(const Var& x, Axes axes = {});
// sum / count, in float64 for integers (float32 for float16/float32 inputs).
Var mean(const Var& x, Axes axes = {}, bool keepdims = false);
// mean((x - mean(x))**2) with ddof subtracted from the count; std is its square root.
Var var(const Var& x, Axes axes = {}, bool keepdims = false, int ddof = 0);
Var std(const Var& x, Axes axes = {}, bool keepdims = false, int ddof = 0);
// Cumulative sum and product along `axis` (nullopt: of the flattened tensor).
Var cumsum(const Var& x, std::optional<int> axis = std::nullopt);
Var cumprod(const Var& x, std::optional<int> axis = std::nullopt);

}  // namespace kiln

#endif  // KILN_CORE_OPS_REDUCE_H_
