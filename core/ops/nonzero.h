// Aesara's Nonzero (aesara.tensor.basic.nonzero with return_matrix=True): the coordinates of
// the nonzero elements of a tensor, one row per dim, in C order, as numpy.nonzero stacked.
#ifndef KILN_CORE_OPS_NONZERO_H_
#define KILN_CORE_OPS_NONZERO_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Nonzero(a): an int64 matrix of shape (a.ndim, count of nonzero elements of a); NaN counts as
// nonzero. Its values depend on a only through comparisons: no gradient flows through it.
class Nonzero final : public DeclaredOp<Nonzero, NoAttrs> {
 public:
  KILN_DECLARED_OP("Nonzero")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{false}};
  }
};

// The coordinates of a's nonzero elements: one int64 vector per dim of a (numpy.nonzero).
std::vector<Var> nonzero(const Var& a);

}  // namespace kiln

#endif  // KILN_CORE_OPS_NONZERO_H_
