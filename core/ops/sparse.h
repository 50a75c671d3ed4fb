// Sparse matrices in their own layout. Kiln carries a CSR or CSC matrix as SciPy's arrays (data,
// indices, indptr and a shape): the graph sees four tensors, the wire and sessions carry four
// tensors, and these ops compute on them without building the dense matrix. kiln.sparse builds
// Aesara's sparse API on them. Every kernel checks the structure it is given (indices in range,
// indptr from 0 and nondecreasing, lengths that agree): a malformed matrix from a client is an
// INVALID_ARGUMENT, never a read out of bounds.
//
// Entries are named in coordinate form: entry k sits at (rows[k], cols[k]). For a CSR matrix,
// rows = ExpandIndptr(indptr) and cols = indices; for a CSC matrix the other way round.
#ifndef KILN_CORE_OPS_SPARSE_H_
#define KILN_CORE_OPS_SPARSE_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// SparseDot(data, rows, cols, n_rows, b): the dense (n_rows, b.shape[1]) product of the sparse
// matrix whose entry k is data[k] at (rows[k], cols[k]) with the dense matrix b; repeated
// coordinates add up. data and b are float32 or float64 (the output has their upcast); rows
// and cols are integer vectors as long as data; n_rows an integer scalar. With `compressed`,
// `rows` is a CSR indptr instead (n_rows + 1 entries), which saves expanding it: Kiln's
// structured_dot of a CSR matrix. The gradient of data is SampledDot(rows, cols, g, b), of b
// SparseDot(data, cols, rows, b.shape[0], g).
struct SparseDotAttrs {
  bool compressed = false;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"compressed", &SparseDotAttrs::compressed}};
  }
};
class SparseDot final : public DeclaredOp<SparseDot, SparseDotAttrs> {
 public:
  KILN_DECLARED_OP("SparseDot")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// SampledDot(rows, cols, x, y): the vector whose entry k is the dot product of row rows[k] of x
// with row cols[k] of y, i.e. (x @ y.T)[rows[k], cols[k]] computed only there (Aesara's
// sampling_dot without the final product). x and y are float matrices with as many columns.
class SampledDot final : public DeclaredOp<SampledDot, NoAttrs> {
 public:
  KILN_DECLARED_OP("SampledDot")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// SparseToDense(data, rows, cols, shape): the dense matrix of `shape` (an int vector of 2) that
// is zero but for data[k] added at (rows[k], cols[k]). Its gradient gathers: SparseGather.
class SparseToDense final : public DeclaredOp<SparseToDense, NoAttrs> {
 public:
  KILN_DECLARED_OP("SparseToDense")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// SparseGather(x, rows, cols): the vector of x[rows[k], cols[k]] for a dense matrix x. Its
// gradient scatters: SparseToDense(g, rows, cols, shape(x)).
class SparseGather final : public DeclaredOp<SparseGather, NoAttrs> {
 public:
  KILN_DECLARED_OP("SparseGather")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// ExpandIndptr(indptr): the int64 vector of length indptr[-1] whose entries indptr[i] to
// indptr[i+1] - 1 are i: each entry's row of a CSR matrix (column of a CSC one).
class ExpandIndptr final : public DeclaredOp<ExpandIndptr, NoAttrs> {
 public:
  KILN_DECLARED_OP("ExpandIndptr")
};

// CompressIndptr(rows, n): the int64 indptr (length n + 1) of entries whose sorted rows in
// [0, n) are `rows`: the inverse of ExpandIndptr.
class CompressIndptr final : public DeclaredOp<CompressIndptr, NoAttrs> {
 public:
  KILN_DECLARED_OP("CompressIndptr")
};

// SparseUnion(indices_a, indptr_a, indices_b, indptr_b): the structure of the sum of two
// compressed matrices of one shape whose indices are sorted and unique in each row: its
// (indices, indptr), and for each entry of a and of b its position in the result (pos_a,
// pos_b), so that the sum's data is zeros(nnz)[pos_a] += data_a, [pos_b] += data_b.
class SparseUnion final : public DeclaredOp<SparseUnion, NoAttrs> {
 public:
  KILN_DECLARED_OP("SparseUnion")
};

// SparseIntersection(indices_a, indptr_a, indices_b, indptr_b): the structure of the elementwise
// product of two such matrices: its (indices, indptr), and for each of its entries the entry of a
// and of b it comes from (take_a, take_b): the product's data is data_a[take_a] * data_b[take_b].
class SparseIntersection final : public DeclaredOp<SparseIntersection, NoAttrs> {
 public:
  KILN_DECLARED_OP("SparseIntersection")
};

// SparseProductPairs(indices_a, indptr_a, indices_b, indptr_b, n_cols): the structure of the
// product of two compressed matrices (a's minor dimension is b's major one; the product has
// n_cols columns): its (indices, indptr), sorted, and one triple (pair_a, pair_b, pair_out) per
// product of an entry of a with an entry of b, so that the product's data is
// zeros(nnz)[pair_out] += data_a[pair_a] * data_b[pair_b]. The pairs are the multiplications
// the product takes, so their count bounds its work.
class SparseProductPairs final : public DeclaredOp<SparseProductPairs, NoAttrs> {
 public:
  KILN_DECLARED_OP("SparseProductPairs")
};

// Builders.
Var sparse_dot(const Var& data, const Var& rows, const Var& cols, const Var& n_rows, const Var& b,
               bool compressed = false);
Var sampled_dot(const Var& rows, const Var& cols, const Var& x, const Var& y);
Var sparse_to_dense(const Var& data, const Var& rows, const Var& cols, const Var& shape);
Var sparse_gather(const Var& x, const Var& rows, const Var& cols);
Var expand_indptr(const Var& indptr);
Var compress_indptr(const Var& rows, const Var& n);
// {indices, indptr, pos_a, pos_b}.
std::vector<Var> sparse_union(const Var& indices_a, const Var& indptr_a, const Var& indices_b,
                              const Var& indptr_b);
// {indices, indptr, take_a, take_b}.
std::vector<Var> sparse_intersection(const Var& indices_a, const Var& indptr_a,
                                     const Var& indices_b, const Var& indptr_b);
// {indices, indptr, pair_a, pair_b, pair_out}.
std::vector<Var> sparse_product_pairs(const Var& indices_a, const Var& indptr_a,
                                      const Var& indices_b, const Var& indptr_b, const Var& n_cols);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SPARSE_H_
