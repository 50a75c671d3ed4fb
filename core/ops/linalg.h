// Linear algebra: Dot (vector and matrix products), MatMul with broadcast batch dims, and the
// specialised Dot22, Gemm and Gemv that the optimizer targets; tensordot and outer built on them.
// The five share one kernel (linalg_perform.cc).
// float32/float64/complex products run on OpenBLAS, other dtypes on Eigen.
#ifndef KILN_CORE_OPS_LINALG_H_
#define KILN_CORE_OPS_LINALG_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Dot: Aesara's dot of two vectors or matrices (printed "dot").
class Dot final : public DeclaredOp<Dot, NoAttrs> {
 public:
  KILN_DECLARED_OP("Dot")
  std::string Name() const override { return "dot"; }
};

// MatMul: numpy.matmul of tensors of at least one dim, batch dims broadcast.
class MatMul final : public DeclaredOp<MatMul, NoAttrs> {
 public:
  KILN_DECLARED_OP("MatMul")
};

// Dot22: the product of two matrices, which the optimizer makes of a dot.
class Dot22 final : public DeclaredOp<Dot22, NoAttrs> {
 public:
  KILN_DECLARED_OP("Dot22")
};

// Gemm(z, a, x, y, b) = b*z + a*x@y for matrices z, x, y and scalars a, b, all of z's float
// dtype; "Gemm{no_inplace}", or "Gemm{inplace}" writing into z.
class Gemm final : public DeclaredOp<Gemm, InplaceAttrs> {
 public:
  KILN_DECLARED_OP("Gemm")
  std::string Name() const override;
  std::vector<std::pair<int, int>> destroy_map() const override {
    return DestroysInput0If(attrs().inplace);
  }
};

// Gemv(y, alpha, A, x, beta) = beta*y + alpha*A@x for a matrix A and vectors x, y.
class Gemv final : public DeclaredOp<Gemv, InplaceAttrs> {
 public:
  KILN_DECLARED_OP("Gemv")
  std::string Name() const override;
  std::vector<std::pair<int, int>> destroy_map() const override {
    return DestroysInput0If(attrs().inplace);
  }
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
