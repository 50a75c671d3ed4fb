// Aesara's FillDiagonal (aesara.tensor.extra_ops): a copy of a tensor with its main diagonal set
// to a scalar, as numpy.fill_diagonal. Added by core/ops/README.md's steps.
#ifndef KILN_CORE_OPS_FILL_DIAGONAL_H_
#define KILN_CORE_OPS_FILL_DIAGONAL_H_

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// FillDiagonal(a, val): a (at least two dims) with a[i, i, ..., i] = val, val a scalar of a's
// dtype. A matrix may be rectangular (min(rows, cols) entries); more dims must all be equal.
// The gradient is Aesara's, for matrices only.
class FillDiagonal final : public DeclaredOp<FillDiagonal, NoAttrs> {
 public:
  KILN_DECLARED_OP("FillDiagonal")
};

// aesara.tensor.fill_diagonal(a, val): val is cast to a's dtype when that loses nothing (an int
// into a float matrix); a val that a's dtype cannot hold (a float into an int matrix) is refused.
Var fill_diagonal(const Var& a, const Var& val);

}  // namespace kiln

#endif  // KILN_CORE_OPS_FILL_DIAGONAL_H_
