// PyTensor's LU family and block_diag (pytensor.tensor.slinalg 2.34; Aesara 2.9.4 has none):
// LU (scipy.linalg.lu), LUFactor (scipy.linalg.lu_factor), PivotToPermutations (LAPACK's row
// interchanges as a permutation) and BlockDiagonal (scipy.linalg.block_diag). lu_solve is a graph
// of these and SolveTriangular, built in Python as PyTensor builds it. Gradients in
// slinalg_grad.cc; kernels in slinalg_kernels.cc (getrf) and slinalg_lu.cc (permutations, copies).
#ifndef KILN_CORE_OPS_SLINALG_LU_H_
#define KILN_CORE_OPS_SLINALG_LU_H_

#include <tuple>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// LU's props: P L (not P) as the first output, scipy's overwrite_a (always False here: Kiln does
// not write into inputs), check_finite, and the permutation as row indices (int32) instead of a
// matrix. permute_l and p_indices exclude each other.
struct LUAttrs {
  bool permute_l = false;
  bool overwrite_a = false;
  bool check_finite = true;
  bool p_indices = false;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"permute_l", &LUAttrs::permute_l},
                      AttrField{"overwrite_a", &LUAttrs::overwrite_a},
                      AttrField{"check_finite", &LUAttrs::check_finite},
                      AttrField{"p_indices", &LUAttrs::p_indices}};
  }
  absl::Status Check() const;
};

// LU{...}(x) -> (P, L, U) with x = P L U for a square x: P a permutation matrix (float32 for
// float32/complex64 x, else float64), L unit lower and U upper triangular of x's dtype; (PL, U)
// when permute_l; (p, L, U) with x = L[p] U when p_indices.
class LU final : public DeclaredOp<LU, LUAttrs> {
 public:
  KILN_DECLARED_OP("LU")
};

// LUFactor's props.
struct LUFactorAttrs {
  bool overwrite_a = false;
  bool check_finite = true;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"overwrite_a", &LUFactorAttrs::overwrite_a},
                      AttrField{"check_finite", &LUFactorAttrs::check_finite}};
  }
  absl::Status Check() const;
};

// LUFactor{...}(x) -> (LU, pivots): getrf's packed factors (x's dtype) and its 0-based row
// interchanges (int32): row i was swapped with row pivots[i].
class LUFactor final : public DeclaredOp<LUFactor, LUFactorAttrs> {
 public:
  KILN_DECLARED_OP("LUFactor")
};

// PivotToPermutations' prop: the inverse permutation (rows of the factored matrix in the
// original's order) or the permutation itself.
struct PivotToPermutationsAttrs {
  bool inverse = true;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"inverse", &PivotToPermutationsAttrs::inverse}};
  }
};

// PivotToPermutations{inverse}(pivots): int64 permutation of the interchanges, applied in order
// to 0..n-1 (the inverse), or its argsort. Not differentiable (integers).
class PivotToPermutations final : public DeclaredOp<PivotToPermutations, PivotToPermutationsAttrs> {
 public:
  KILN_DECLARED_OP("PivotToPermutations")
};

// BlockDiagonal's prop: the number of matrices.
struct BlockDiagonalAttrs {
  int n_inputs = 1;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"n_inputs", &BlockDiagonalAttrs::n_inputs}};
  }
  absl::Status Check() const;
};

// BlockDiagonal{n_inputs}(*matrices): the matrices on the diagonal of a zero matrix, of their
// promoted dtype (scipy.linalg.block_diag).
class BlockDiagonal final : public DeclaredOp<BlockDiagonal, BlockDiagonalAttrs> {
 public:
  KILN_DECLARED_OP("BlockDiagonal")
};

// pytensor.tensor.slinalg.lu(a, permute_l, check_finite, p_indices): the op's outputs.
std::vector<Var> lu(const Var& a, bool permute_l = false, bool check_finite = true,
                    bool p_indices = false);
// pytensor.tensor.slinalg.lu_factor(a, check_finite): (LU, pivots).
std::vector<Var> lu_factor(const Var& a, bool check_finite = true);
// pytensor.tensor.slinalg.pivot_to_permutation(p, inverse).
Var pivot_to_permutation(const Var& p, bool inverse = false);
// pytensor.tensor.slinalg.lu_solve((LU, pivots), b, trans, check_finite) as PyTensor's graph:
// b's rows permuted, two triangular solves (and the inverse permutation when trans).
Var lu_solve(const Var& lu, const Var& pivots, const Var& b, bool trans = false,
             bool check_finite = true);
// pytensor.tensor.slinalg.block_diag(*matrices).
Var block_diag(const std::vector<Var>& matrices);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SLINALG_LU_H_
