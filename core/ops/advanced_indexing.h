// NumPy's advanced indexing as Aesara 2.9.4's AdvancedSubtensor and AdvancedIncSubtensor:
// integer arrays (broadcast against each other) and boolean masks among slices and new axes,
// the arrays' dims placed where the first array is when the arrays are adjacent, first otherwise.
//
// The index list (idx_list attribute) has one integer per entry, Subtensor's codes plus one:
//   0          an index tensor, the next input: an integer array of any rank (a 0-d one is an
//              integer index) or a boolean mask over as many dims as it has (its coordinates,
//              numpy.nonzero, index them);
//   1 | bits   a slice, as Subtensor's: bit 1 start, bit 2 stop, bit 3 step present, each
//              present bound the next input, an int64 scalar (Aesara's MakeSlice input);
//   16         numpy.newaxis (Aesara's NoneConst input): a new dim of size 1, no input.
// Ellipsis is expanded by the client; dims after the last entry are taken whole. Where Aesara has
// a MakeSlice or NoneConst input, Kiln has the slice's bounds or nothing.
#ifndef KILN_CORE_OPS_ADVANCED_INDEXING_H_
#define KILN_CORE_OPS_ADVANCED_INDEXING_H_

#include <optional>
#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// One entry of an advanced index list (see the codes above).
struct AdvIndexEntry {
  enum Kind { kTensor, kSlice, kNewAxis };
  Kind kind = kTensor;
  bool has_start = false, has_stop = false, has_step = false;
  bool operator==(const AdvIndexEntry&) const = default;
};

namespace op_decl {
// An advanced index list on the wire: one integer per entry (0, 1 | bits, 16).
template <>
struct Codec<std::vector<AdvIndexEntry>> {
  static AttrValue Encode(const std::vector<AdvIndexEntry>& idx);
  static absl::StatusOr<std::vector<AdvIndexEntry>> Decode(const OpAttrs& a,
                                                           const std::string& key);
  // "(0, 1, 16)": the codes.
  static std::string Repr(const std::vector<AdvIndexEntry>& idx);
};
}  // namespace op_decl

// The props of AdvancedSubtensor: its index list (Aesara's op has none: its inputs say it).
struct AdvancedSubtensorAttrs {
  std::vector<AdvIndexEntry> idx_list;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"idx_list", &AdvancedSubtensorAttrs::idx_list}};
  }
};

// AdvancedSubtensor(x, *index inputs): a copy of x[idx]; prints "AdvancedSubtensor".
class AdvancedSubtensor final : public DeclaredOp<AdvancedSubtensor, AdvancedSubtensorAttrs> {
 public:
  KILN_DECLARED_OP("AdvancedSubtensor")
  const std::vector<AdvIndexEntry>& idx() const { return attrs().idx_list; }
  std::string Name() const override { return "AdvancedSubtensor"; }
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// The props of AdvancedIncSubtensor: its index list and Aesara's three props.
struct AdvancedIncSubtensorAttrs {
  std::vector<AdvIndexEntry> idx_list;
  bool inplace = false;
  bool set_instead_of_inc = false;
  bool ignore_duplicates = false;  // inc as x[idx] += y (a repeated index adds once)
  static constexpr auto Fields() {
    using A = AdvancedIncSubtensorAttrs;
    return std::tuple{AttrField{"idx_list", &A::idx_list}, AttrField{"inplace", &A::inplace},
                      AttrField{"set_instead_of_inc", &A::set_instead_of_inc},
                      AttrField{"ignore_duplicates", &A::ignore_duplicates}};
  }
};

// AdvancedIncSubtensor(x, y, *index inputs): x with x[idx] set to y (the last write of a repeated
// index wins) or incremented by it (numpy.add.at: repeated indices accumulate), y broadcast to
// x[idx]; "AdvancedIncSubtensor{inplace=False,  set_instead_of_inc=True}" as Aesara prints it.
class AdvancedIncSubtensor final
    : public DeclaredOp<AdvancedIncSubtensor, AdvancedIncSubtensorAttrs> {
 public:
  KILN_DECLARED_OP("AdvancedIncSubtensor")
  const std::vector<AdvIndexEntry>& idx() const { return attrs().idx_list; }
  std::string Name() const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  std::vector<std::pair<int, int>> destroy_map() const override {
    return DestroysInput0If(attrs().inplace);
  }
};

// One entry of an advanced index: an index tensor (integer array, integer scalar or boolean
// mask), a slice (core/ops/indexing.h's Slice) or a new axis.
struct AdvIndex {
  AdvIndex(Var v) : tensor(std::move(v)) {}  // NOLINT
  AdvIndex(int64_t v);                       // NOLINT: a 0-d int64 constant
  AdvIndex(int v) : AdvIndex(int64_t{v}) {}  // NOLINT
  static AdvIndex NewAxis();
  static AdvIndex FullSlice();
  static AdvIndex SliceOf(std::optional<Var> start, std::optional<Var> stop,
                          std::optional<Var> step);
  AdvIndexEntry entry;
  std::optional<Var> tensor;
  std::vector<Var> bounds;  // a slice's present bounds, int64 scalars
};

// x[idx] with advanced indices (AdvancedSubtensor).
Var advanced_subtensor(const Var& x, const std::vector<AdvIndex>& idx);
// x with x[idx] incremented by y (or set to y); `ignore_duplicates` as the prop.
Var advanced_inc_subtensor(const Var& x, const Var& y, const std::vector<AdvIndex>& idx,
                           bool set = false, bool ignore_duplicates = false);

}  // namespace kiln

#endif  // KILN_CORE_OPS_ADVANCED_INDEXING_H_
