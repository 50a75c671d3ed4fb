// Aesara's diagonal ops: ExtractDiag and AllocDiag (aesara.tensor.basic), FillDiagonalOffset
// (aesara.tensor.extra_ops) and Tri (aesara.tensor.basic), as numpy.diagonal, numpy.diag's
// vector case, numpy.fill_diagonal at an offset and numpy.tri.
#ifndef KILN_CORE_OPS_DIAGONAL_H_
#define KILN_CORE_OPS_DIAGONAL_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// ExtractDiag's and AllocDiag's props: the diagonal's offset (above the main one when positive)
// and the two axes it runs along; ExtractDiag's output is a view of its input when `view`.
struct ExtractDiagAttrs {
  int64_t offset = 0;
  int axis1 = 0;
  int axis2 = 1;
  bool view = false;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"offset", &ExtractDiagAttrs::offset},
                      AttrField{"axis1", &ExtractDiagAttrs::axis1},
                      AttrField{"axis2", &ExtractDiagAttrs::axis2},
                      AttrField{"view", &ExtractDiagAttrs::view}};
  }
  absl::Status Check() const;
};

// ExtractDiag{offset, axis1, axis2, view}(x): numpy.diagonal: x (two dims or more) without
// axis1 and axis2, with one last dim holding the diagonal. The gradient is Aesara's, for
// matrices only.
class ExtractDiag final : public DeclaredOp<ExtractDiag, ExtractDiagAttrs> {
 public:
  KILN_DECLARED_OP("ExtractDiag")
  std::vector<std::pair<int, int>> view_map() const override {
    if (attrs().view) return {{0, 0}};
    return {};
  }
};

struct AllocDiagAttrs {
  int64_t offset = 0;
  int axis1 = 0;
  int axis2 = 1;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"offset", &AllocDiagAttrs::offset},
                      AttrField{"axis1", &AllocDiagAttrs::axis1},
                      AttrField{"axis2", &AllocDiagAttrs::axis2}};
  }
  absl::Status Check() const;
};

// AllocDiag{offset, axis1, axis2}(d): zeros with d's last dim laid on the offset diagonal of two
// new square dims of size d.shape[-1] + |offset| at axis1 and axis2 (ExtractDiag's inverse).
class AllocDiag final : public DeclaredOp<AllocDiag, AllocDiagAttrs> {
 public:
  KILN_DECLARED_OP("AllocDiag")
};

// FillDiagonalOffset(a, val, offset): a copy of the matrix a with a[i, i + offset] = val (rows
// i - offset for a negative offset), never wrapping; val is cast to a's dtype when that loses
// nothing. Gradients for a and val; offset's is undefined.
class FillDiagonalOffset final : public DeclaredOp<FillDiagonalOffset, NoAttrs> {
 public:
  KILN_DECLARED_OP("FillDiagonalOffset")
};

struct TriAttrs {
  DType dtype = DType::kFloat64;
  static constexpr auto Fields() { return std::tuple{AttrField{"dtype", &TriAttrs::dtype}}; }
};

// Tri{dtype}(N, M, k): numpy.tri: an N x M matrix with ones at and below the k-th diagonal.
class Tri final : public DeclaredOp<Tri, TriAttrs> {
 public:
  KILN_DECLARED_OP("Tri")
};

// aesara.tensor.diagonal(x, offset, axis1, axis2).
Var diagonal(const Var& x, int64_t offset = 0, int axis1 = 0, int axis2 = 1);
// aesara.tensor.diag(v, k): AllocDiag for a vector, the k-th diagonal for two dims or more.
Var diag(const Var& v, int64_t k = 0);
// aesara.tensor.extra_ops.fill_diagonal_offset(a, val, offset).
Var fill_diagonal_offset(const Var& a, const Var& val, const Var& offset);
// aesara.tensor.tri(N, M, k, dtype).
Var tri(const Var& n, const Var& m, const Var& k, DType dtype = DType::kFloat64);

}  // namespace kiln

#endif  // KILN_CORE_OPS_DIAGONAL_H_
