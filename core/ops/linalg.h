// Linear algebra: Dot (vector and matrix products), MatMul with broadcast batch dims, and the
// specialised Dot22, Gemm and Gemv that the optimizer targets; tensordot and outer built on them.
// float32/float64/complex products run on OpenBLAS, other dtypes on Eigen.
#ifndef KILN_CORE_OPS_LINALG_H_
#define KILN_CORE_OPS_LINALG_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// The family of product ops; each is a kind with no props except Gemm/Gemv's inplace flag.
class ProductOp final : public Op {
 public:
  // kind: kDot ("dot"), kMatMul ("MatMul"), kDot22 ("Dot22"), kGemm ("Gemm{no_inplace}": z, a,
  // x, y, b -> b*z + a*x@y), kGemv ("Gemv{no_inplace}": y, alpha, A, x, beta -> beta*y +
  // alpha*A@x).
  explicit ProductOp(OpKind kind, bool inplace = false) : kind_(kind), inplace_(inplace) {}
  OpKind kind() const override { return kind_; }
  std::string Name() const override;
  // Checks ranks (Dot: 1 or 2; MatMul: >= 1; Dot22, Gemm: matrices; Gemv: matrix and vectors),
  // known inner dims, and for Gemm/Gemv that every input has z's float dtype.
  absl::StatusOr<ApplyPtr> MakeNode(std::vector<VariablePtr> inputs) const override;
  absl::StatusOr<std::vector<std::vector<VariablePtr>>> InferShape(
      const Apply& node, const std::vector<std::vector<VariablePtr>>& input_shapes) const override;
  absl::Status Perform(const Apply& node, std::span<const Tensor> inputs,
                       std::vector<Tensor>& outputs) const override;
  // The props as typed attributes, and the op from them (the registry's factory).
  OpAttrs Attrs() const override;
  static absl::StatusOr<OpPtr> FromAttrs(OpKind kind, const OpAttrs& attrs);
  // The gradient rule (Aesara's L_op), in the family's *_grad.cc.
  std::vector<Var> LOp(const Apply& node, const std::vector<Var>& output_grads) const override;
  std::vector<std::pair<int, int>> destroy_map() const override;

 private:
  OpKind kind_;
  bool inplace_;
};

// Aesara's dot: inner product, matrix-vector or matrix-matrix product (1-D and 2-D inputs);
// higher ranks go through tensordot over the last axis of a and the second-to-last of b.
Var dot(const Var& a, const Var& b);
// numpy.matmul: batch dims broadcast; a 1-D operand gains and loses a dim as in NumPy.
Var matmul(const Var& a, const Var& b);
// tensordot(a, b, n): the last n axes of a against the first n of b.
Var tensordot(const Var& a, const Var& b, int n = 2);
// tensordot(a, b, (a_axes, b_axes)).
Var tensordot(const Var& a, const Var& b, const std::vector<int>& a_axes,
              const std::vector<int>& b_axes);
// outer(x, y) of two vectors.
Var outer(const Var& x, const Var& y);
// The specialised ops: Dot22(x, y); Gemm: b*z + a*x@y; Gemv: beta*y + alpha*A@x.
Var dot22(const Var& x, const Var& y);
Var gemm(const Var& z, const Var& a, const Var& x, const Var& y, const Var& b);
Var gemv(const Var& y, const Var& alpha, const Var& A, const Var& x, const Var& beta);

}  // namespace kiln

#endif  // KILN_CORE_OPS_LINALG_H_
