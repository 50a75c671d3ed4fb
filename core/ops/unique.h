// Aesara's Unique (aesara.tensor.extra_ops): numpy.unique, the sorted distinct elements (or
// slices along an axis) of a tensor, with where they first occur, how to rebuild the tensor
// from them and how often each occurs.
#ifndef KILN_CORE_OPS_UNIQUE_H_
#define KILN_CORE_OPS_UNIQUE_H_

#include <optional>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Which optional outputs Unique has, and the axis of the slices compared (None: the elements
// of the flattened tensor).
struct UniqueAttrs {
  bool return_index = false;
  bool return_inverse = false;
  bool return_counts = false;
  std::optional<int> axis;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"return_index", &UniqueAttrs::return_index},
                      AttrField{"return_inverse", &UniqueAttrs::return_inverse},
                      AttrField{"return_counts", &UniqueAttrs::return_counts},
                      AttrField{"axis", &UniqueAttrs::axis}};
  }
  absl::Status Check() const;
};

// Unique{...}(x): the sorted unique values of x (NaNs count as one value when axis is None, as
// in NumPy), then, as the props ask, the int64 vectors index (the first occurrence of each),
// inverse (the unique entry of each element or slice) and counts. The number of unique values
// is known only when the op runs (each output's length is a Shape_i of it). Not differentiable.
class Unique final : public DeclaredOp<Unique, UniqueAttrs> {
 public:
  KILN_DECLARED_OP("Unique")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override {
    return {std::vector<bool>(node.num_outputs(), false)};
  }
};

// aesara.tensor.unique(ar, return_index, return_inverse, return_counts, axis): the outputs the
// flags ask for, in that order.
std::vector<Var> unique(const Var& x, bool return_index = false, bool return_inverse = false,
                        bool return_counts = false, std::optional<int> axis = std::nullopt);

}  // namespace kiln

#endif  // KILN_CORE_OPS_UNIQUE_H_
