// Aesara's DiagonalSubtensor and IncDiagonalSubtensor (aesara.tensor.nnet.conv3d2d): the thick
// diagonal stripe of two axes of a tensor, and adding into it; each is the other's gradient.
#ifndef KILN_CORE_OPS_DIAGONAL_SUBTENSOR_H_
#define KILN_CORE_OPS_DIAGONAL_SUBTENSOR_H_

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// The props of both ops (Aesara's __props__ = ("inplace",)).
struct DiagonalSubtensorAttrs {
  bool inplace = false;  // DiagonalSubtensor: the output may be a view; Inc: x may be overwritten
  static constexpr auto Fields() {
    return std::tuple{AttrField{"inplace", &DiagonalSubtensorAttrs::inplace}};
  }
};

// DiagonalSubtensor(x, i0, i1): with n0 = x.shape[i0] >= n1 = x.shape[i1], the tensor of x's
// shape but n0 - n1 + 1 along i0 whose element a (along i0), b (along i1) is
// x[a + n1 - 1 - b, b] (Aesara's get_diagonal_subtensor_view). i0 and i1 are integer scalars
// (negative counts from the end). Printed "DiagonalSubtensor" or "DiagonalSubtensor{inplace}".
class DiagonalSubtensor final : public DeclaredOp<DiagonalSubtensor, DiagonalSubtensorAttrs> {
 public:
  KILN_DECLARED_OP("DiagonalSubtensor")
  std::string Name() const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  // inplace: the output may view x (the kernel copies, which the view_map allows).
  std::vector<std::pair<int, int>> view_map() const override;
};

// IncDiagonalSubtensor(x, i0, i1, amt): a copy of x with amt (broadcast to the stripe's shape)
// added to DiagonalSubtensor's stripe.
class IncDiagonalSubtensor final : public DeclaredOp<IncDiagonalSubtensor, DiagonalSubtensorAttrs> {
 public:
  KILN_DECLARED_OP("IncDiagonalSubtensor")
  std::string Name() const override;
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
  // inplace: the output may overwrite x.
  std::vector<std::pair<int, int>> destroy_map() const override;
};

// aesara.tensor.nnet.conv3d2d.diagonal_subtensor(x, i0, i1).
Var diagonal_subtensor(const Var& x, const Var& i0, const Var& i1);
// aesara.tensor.nnet.conv3d2d.inc_diagonal_subtensor(x, i0, i1, amt).
Var inc_diagonal_subtensor(const Var& x, const Var& i0, const Var& i1, const Var& amt);

}  // namespace kiln

#endif  // KILN_CORE_OPS_DIAGONAL_SUBTENSOR_H_
