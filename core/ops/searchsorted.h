// Aesara's SearchsortedOp (aesara.tensor.extra_ops): numpy.searchsorted, the insertion points
// of values into a sorted vector.
#ifndef KILN_CORE_OPS_SEARCHSORTED_H_
#define KILN_CORE_OPS_SEARCHSORTED_H_

#include <optional>
#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// side: "left" (the first suitable index) or "right" (the last).
struct SearchsortedAttrs {
  std::string side = "left";
  static constexpr auto Fields() { return std::tuple{AttrField{"side", &SearchsortedAttrs::side}}; }
  absl::Status Check() const;
};

// SearchsortedOp{side}(x, v[, sorter]): for every element of v, the int64 index where it would
// be inserted into the vector x (ascending, or ascending through the integer permutation
// sorter) to keep it sorted; NaN sorts after every number, as in NumPy. The output has v's shape.
// The gradients are zeros for x and v (Aesara's), sorter is disconnected.
class SearchsortedOp final : public DeclaredOp<SearchsortedOp, SearchsortedAttrs> {
 public:
  KILN_DECLARED_OP("SearchsortedOp")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// aesara.tensor.extra_ops.searchsorted(x, v, side, sorter).
Var searchsorted(const Var& x, const Var& v, const std::string& side = "left",
                 const std::optional<Var>& sorter = std::nullopt);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SEARCHSORTED_H_
