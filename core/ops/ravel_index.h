// Aesara's UnravelIndex and RavelMultiIndex (aesara.tensor.extra_ops): numpy.unravel_index and
// numpy.ravel_multi_index, between flat indices and coordinates in an array of given dims.
#ifndef KILN_CORE_OPS_RAVEL_INDEX_H_
#define KILN_CORE_OPS_RAVEL_INDEX_H_

#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// order: "C" (row-major) or "F" (column-major).
struct UnravelIndexAttrs {
  std::string order = "C";
  static constexpr auto Fields() {
    return std::tuple{AttrField{"order", &UnravelIndexAttrs::order}};
  }
  absl::Status Check() const;
};

// UnravelIndex{order}(indices, dims): one int64 tensor of indices' shape per entry of dims (a
// vector of known length): the coordinates of each flat index in an array of shape dims. An
// index outside [0, prod(dims)) is an error when the op runs. Not differentiable.
class UnravelIndex final : public DeclaredOp<UnravelIndex, UnravelIndexAttrs> {
 public:
  KILN_DECLARED_OP("UnravelIndex")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// mode: what an out-of-range coordinate does: "raise" (an error), "wrap" (taken modulo its
// dim) or "clip" (clamped into it); order: "C" or "F".
struct RavelMultiIndexAttrs {
  std::string mode = "raise";
  std::string order = "C";
  static constexpr auto Fields() {
    return std::tuple{AttrField{"mode", &RavelMultiIndexAttrs::mode},
                      AttrField{"order", &RavelMultiIndexAttrs::order}};
  }
  absl::Status Check() const;
};

// RavelMultiIndex{mode, order}(i_0, ..., i_{n-1}, dims): the int64 flat index of each
// coordinate tuple (the integer tensors broadcast together) in an array of shape dims, a vector
// of n entries. Not differentiable.
class RavelMultiIndex final : public DeclaredOp<RavelMultiIndex, RavelMultiIndexAttrs> {
 public:
  KILN_DECLARED_OP("RavelMultiIndex")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// aesara.tensor.extra_ops.unravel_index(indices, dims, order).
std::vector<Var> unravel_index(const Var& indices, const Var& dims, const std::string& order = "C");
// aesara.tensor.extra_ops.ravel_multi_index(multi_index, dims, mode, order).
Var ravel_multi_index(const std::vector<Var>& multi_index, const Var& dims,
                      const std::string& mode = "raise", const std::string& order = "C");

}  // namespace kiln

#endif  // KILN_CORE_OPS_RAVEL_INDEX_H_
