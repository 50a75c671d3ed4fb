// Indexing: Subtensor (integers and slices, NumPy's clipping and negative steps, symbolic
// bounds), IncSubtensor (set_subtensor, inc_subtensor), AdvancedSubtensor1 (take with an integer
// vector) and AdvancedIncSubtensor1 (repeated indices accumulate).
#ifndef KILN_CORE_OPS_INDEXING_H_
#define KILN_CORE_OPS_INDEXING_H_

#include <optional>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// One entry of an index list: an integer (drops the dim) or a slice whose parts may be absent.
// The integers themselves are the op's inputs after x (and y), in order.
struct IndexEntry {
  bool is_slice = false;
  bool has_start = false, has_stop = false, has_step = false;
  bool operator==(const IndexEntry&) const = default;
};

// Subtensor (set_instead_of_inc unused) and IncSubtensor over the same index list.
class SubtensorOp final : public Op {
 public:
  SubtensorOp(OpKind kind, std::vector<IndexEntry> idx, bool set = false, bool inplace = false)
      : kind_(kind), idx_(std::move(idx)), set_(set), inplace_(inplace) {}
  const std::vector<IndexEntry>& idx() const { return idx_; }
  bool set() const { return set_; }
  OpKind kind() const override { return kind_; }
  // "Subtensor{int64, int64:int64:}", "IncSubtensor{Set;::int64}",
  // "AdvancedSubtensor1", "AdvancedIncSubtensor1{no_inplace,inc}".
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
  std::vector<std::pair<int, int>> view_map() const override;
  std::vector<std::pair<int, int>> destroy_map() const override;

 private:
  OpKind kind_;
  std::vector<IndexEntry> idx_;
  bool set_;
  bool inplace_;
};

// A slice bound or an integer index: absent (None), a constant, or an integer scalar variable.
struct Bound {
  Bound() = default;
  Bound(std::nullopt_t) {}             // NOLINT: None
  Bound(int64_t v);                    // NOLINT
  Bound(int v) : Bound(int64_t{v}) {}  // NOLINT
  Bound(Var v) : var(std::move(v)) {}  // NOLINT
  std::optional<Var> var;
};

// start:stop:step, each part optional: Slice{1, std::nullopt, -1} is 1::-1.
struct Slice {
  Bound start, stop, step;
};

// One index: an integer (constant or symbolic) or a slice.
struct Index {
  Index(int64_t v) : value(v) {}           // NOLINT
  Index(int v) : value(v) {}               // NOLINT
  Index(Var v) : value(std::move(v)) {}    // NOLINT
  Index(Slice s) : slice(std::move(s)) {}  // NOLINT
  Bound value;
  std::optional<Slice> slice;
};

// x[idx...]: a view; trailing dims not indexed are kept.
Var subtensor(const Var& x, const std::vector<Index>& idx);
// x[indices] for an integer vector of indices (negative ones count from the end).
Var take(const Var& x, const Var& indices);
// x with x[...] replaced by (or incremented by) y, where `indexed` is the result of subtensor or
// take on x; y broadcasts to the indexed shape. The original x is not modified.
Var set_subtensor(const Var& indexed, const Var& y);
Var inc_subtensor(const Var& indexed, const Var& y);

}  // namespace kiln

#endif  // KILN_CORE_OPS_INDEXING_H_
