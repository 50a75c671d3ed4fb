// Indexing: Subtensor (integers and slices, NumPy's clipping and negative steps, symbolic
// bounds), IncSubtensor (set_subtensor, inc_subtensor), AdvancedSubtensor1 (take with an integer
// vector) and AdvancedIncSubtensor1 (repeated indices accumulate).
#ifndef KILN_CORE_OPS_INDEXING_H_
#define KILN_CORE_OPS_INDEXING_H_

#include <optional>
#include <string>
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

namespace op_decl {
// An index list travels as one integer per entry: bit 0 a slice, bits 1-3 whether it has a
// start, a stop and a step (an integer entry is 0).
template <>
struct Codec<std::vector<IndexEntry>> {
  static AttrValue Encode(const std::vector<IndexEntry>& idx);
  static absl::StatusOr<std::vector<IndexEntry>> Decode(const OpAttrs& a, const std::string& key);
  // As Aesara prints an index list: "int64, int64:int64:".
  static std::string Repr(const std::vector<IndexEntry>& idx);
};
}  // namespace op_decl

// The index list of Subtensor.
struct SubtensorAttrs {
  std::vector<IndexEntry> idx_list;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"idx_list", &SubtensorAttrs::idx_list}};
  }
};

// Subtensor{idx}(x, *scalars): the view x[idx], the index integers and slice bounds the int64
// scalars after x, in order; "Subtensor{int64, int64:int64:}".
class Subtensor final : public DeclaredOp<Subtensor, SubtensorAttrs> {
 public:
  KILN_DECLARED_OP("Subtensor")
  const std::vector<IndexEntry>& idx() const { return attrs().idx_list; }
  std::string Name() const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  std::vector<std::pair<int, int>> view_map() const override { return {{0, 0}}; }
};

// The props of IncSubtensor: its index list, set (x[idx] = y) or increment (x[idx] += y), and
// whether it writes into x's buffer.
struct IncSubtensorAttrs {
  std::vector<IndexEntry> idx_list;
  bool set = false;
  bool inplace = false;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"idx_list", &IncSubtensorAttrs::idx_list},
                      AttrField{"set", &IncSubtensorAttrs::set},
                      AttrField{"inplace", &IncSubtensorAttrs::inplace}};
  }
};

// IncSubtensor{idx}(x, y, *scalars): x with x[idx] set to (or incremented by) y, which
// broadcasts to x[idx]; "IncSubtensor{Set;::int64}", "IncSubtensor{Inc;int64}".
class IncSubtensor final : public DeclaredOp<IncSubtensor, IncSubtensorAttrs> {
 public:
  KILN_DECLARED_OP("IncSubtensor")
  const std::vector<IndexEntry>& idx() const { return attrs().idx_list; }
  std::string Name() const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  std::vector<std::pair<int, int>> destroy_map() const override {
    return DestroysInput0If(attrs().inplace);
  }
};

// AdvancedSubtensor1(x, indices): x[indices] for an integer vector (numpy.take along axis 0).
class AdvancedSubtensor1 final : public DeclaredOp<AdvancedSubtensor1, NoAttrs> {
 public:
  KILN_DECLARED_OP("AdvancedSubtensor1")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// The props of AdvancedIncSubtensor1: set or increment, and whether it writes into x.
struct AdvancedIncSubtensor1Attrs {
  bool set = false;
  bool inplace = false;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"set", &AdvancedIncSubtensor1Attrs::set},
                      AttrField{"inplace", &AdvancedIncSubtensor1Attrs::inplace}};
  }
};

// AdvancedIncSubtensor1(x, y, indices): x with the rows x[indices] set to (or incremented by)
// y's rows, in order, so repeated indices accumulate; "AdvancedIncSubtensor1{no_inplace,inc}".
class AdvancedIncSubtensor1 final
    : public DeclaredOp<AdvancedIncSubtensor1, AdvancedIncSubtensor1Attrs> {
 public:
  KILN_DECLARED_OP("AdvancedIncSubtensor1")
  std::string Name() const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  std::vector<std::pair<int, int>> destroy_map() const override {
    return DestroysInput0If(attrs().inplace);
  }
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
