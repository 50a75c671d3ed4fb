// Aesara's TopKOp (aesara.tensor.sort): the k largest (k > 0) or |k| smallest (k < 0) entries of
// a tensor along an axis, with their indices.
#ifndef KILN_CORE_OPS_TOPK_H_
#define KILN_CORE_OPS_TOPK_H_

#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Aesara's props: the axis (negative counts from the end), sorted (which Aesara 2.9.4 refuses:
// "not yet implemented"), which outputs exist, and the indices' integer dtype.
struct TopKAttrs {
  int axis = -1;
  bool sorted = false;
  bool return_values = true;
  bool return_indices = true;
  DType idx_dtype = DType::kInt64;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"axis", &TopKAttrs::axis}, AttrField{"sorted", &TopKAttrs::sorted},
                      AttrField{"return_values", &TopKAttrs::return_values},
                      AttrField{"return_indices", &TopKAttrs::return_indices},
                      AttrField{"idx_dtype", &TopKAttrs::idx_dtype}};
  }
  absl::Status Check() const;
};

// TopKOp{axis, sorted}(x, kth): x's kth largest entries along the axis (the |kth| smallest for a
// negative kth) and their indices, as the props ask. Where Aesara's result is NumPy's
// partition order (1 < |kth| < n) Kiln gives them in ascending order, which is one such order;
// |kth| = n keeps x's order and |kth| = 1 is max/argmax (min/argmin), as Aesara. The gradient
// scatters the values' gradient to the indices; kth is not differentiable.
class TopKOp final : public DeclaredOp<TopKOp, TopKAttrs> {
 public:
  KILN_DECLARED_OP("TopKOp")
  std::string Name() const override;  // TopKOp{axis=-1, sorted=False}
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// aesara.tensor.sort.topk_and_argtopk(x, kth, axis, sorted, idx_dtype): {values, indices}; an
// absent axis flattens x.
std::vector<Var> topk_and_argtopk(const Var& x, const Var& kth, std::optional<int> axis = -1,
                                  bool sorted = false, DType idx_dtype = DType::kInt64);

}  // namespace kiln

#endif  // KILN_CORE_OPS_TOPK_H_
