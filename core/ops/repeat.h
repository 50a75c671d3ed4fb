// Aesara's Repeat (aesara.tensor.extra_ops): numpy.repeat of x along an axis, each element the
// number of times `repeats` says. The first op added by core/ops/README.md's steps.
#ifndef KILN_CORE_OPS_REPEAT_H_
#define KILN_CORE_OPS_REPEAT_H_

#include <optional>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// axis: the axis repeated along (negative counts from the end), or None for the flattened x.
struct RepeatAttrs {
  std::optional<int> axis;
  static constexpr auto Fields() { return std::tuple{AttrField{"axis", &RepeatAttrs::axis}}; }
  absl::Status Check() const;
};

// Repeat{axis}(x, repeats): repeats is an integer scalar (every element that many times) or a
// vector with one count per element along the axis (or of the flattened x).
class Repeat final : public DeclaredOp<Repeat, RepeatAttrs> {
 public:
  KILN_DECLARED_OP("Repeat")  // Repeat{axis=0}, Repeat{axis=None}

  // x's gradient sums gz over the copies of each element; repeats is disconnected.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override {
    return {{true}, {false}};
  }
};

// aesara.tensor.repeat(x, repeats, axis): a vector of repeats becomes a Repeat op; a scalar (or a
// broadcastable vector) becomes Aesara's alloc and reshape, as Aesara builds it. A negative axis
// counts from the end.
Var repeat(const Var& x, const Var& repeats, std::optional<int> axis = std::nullopt);

}  // namespace kiln

#endif  // KILN_CORE_OPS_REPEAT_H_
