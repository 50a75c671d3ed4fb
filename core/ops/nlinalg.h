// aesara.tensor.nlinalg's inverses, determinants and tensor solves (MatrixInverse, MatrixPinv,
// Det, SLogDet, Lstsq, TensorInv, TensorSolve) and the functions built on products (matrix_dot,
// matrix_power, trace). The decompositions are in nlinalg_decomp.h; the kernels, one matrix
// problem each through LAPACK, in nlinalg_kernels.h. Integer and bool inputs are computed in
// float64 and cast to the output dtype Aesara declares; float16 in float32.
#ifndef KILN_CORE_OPS_NLINALG_H_
#define KILN_CORE_OPS_NLINALG_H_

#include <optional>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// MatrixInverse: x (n, n) -> x^-1, of x's type; "Singular matrix" for a singular x.
class MatrixInverse final : public DeclaredOp<MatrixInverse, NoAttrs> {
 public:
  KILN_DECLARED_OP("MatrixInverse")
};

// MatrixPinv's props: whether x is taken as Hermitian (its eigenvalues give the inverse).
struct MatrixPinvAttrs {
  bool hermitian = false;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"hermitian", &MatrixPinvAttrs::hermitian}};
  }
};

// MatrixPinv{hermitian}: x (m, n) -> the Moore-Penrose pseudo-inverse (n, m), numpy's rcond 1e-15.
class MatrixPinv final : public DeclaredOp<MatrixPinv, MatrixPinvAttrs> {
 public:
  KILN_DECLARED_OP("MatrixPinv")
};

// Det: x (n, n) -> det(x), a scalar of x's dtype.
class Det final : public DeclaredOp<Det, NoAttrs> {
 public:
  KILN_DECLARED_OP("Det")
};

// SLogDet (PyTensor's): x (n, n) -> (sign, log |det x|), scalars of x's dtype (0 and -inf for a
// singular x).
class SLogDet final : public DeclaredOp<SLogDet, NoAttrs> {
 public:
  KILN_DECLARED_OP("SLogDet")
};

// Lstsq: (a (m, n), b (m,) or (m, k), rcond) -> numpy.linalg.lstsq's (x (n,) or (n, k), residuals,
// rank, s) in float64, float64, int64, float64 as Aesara declares them (x has b's rank, as the
// values Aesara computes do). rcond < 0 means machine precision.
class Lstsq final : public DeclaredOp<Lstsq, NoAttrs> {
 public:
  KILN_DECLARED_OP("Lstsq")
  // rcond is a threshold: no gradient flows to it.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true, true, true, true}, {true, true, false, false}, {false, false, false, false}};
  }
};

// TensorInv's props: the number of leading dims that the inverse's tensordot sums over.
struct TensorInvAttrs {
  int ind = 2;
  static constexpr auto Fields() { return std::tuple{AttrField{"ind", &TensorInvAttrs::ind}}; }
  absl::Status Check() const;  // 1 <= ind <= 64
};

// TensorInv{ind}: a (s0 .. s(ind-1), t0 ..) -> numpy.linalg.tensorinv(a, ind), shape
// (t0 .., s0 .. s(ind-1)), of a's type; prod(s) must equal prod(t).
class TensorInv final : public DeclaredOp<TensorInv, TensorInvAttrs> {
 public:
  KILN_DECLARED_OP("TensorInv")
};

// TensorSolve's props: the axes of a moved to the end before solving (None: none).
struct TensorSolveAttrs {
  std::optional<std::vector<int>> axes;
  static constexpr auto Fields() { return std::tuple{AttrField{"axes", &TensorSolveAttrs::axes}}; }
  absl::Status Check() const;  // every axis in [-64, 64)
};

// TensorSolve{axes}: (a, b) -> x with tensordot(a, x, b.ndim) == b (numpy.linalg.tensorsolve),
// of rank a.ndim - b.ndim and dtype upcast(a, b) (float64 for integers, as numpy's values).
class TensorSolve final : public DeclaredOp<TensorSolve, TensorSolveAttrs> {
 public:
  KILN_DECLARED_OP("TensorSolve")
};

// aesara.tensor.nlinalg.matrix_inverse (inv): MatrixInverse()(x).
Var matrix_inverse(const Var& x);
// pinv(x, hermitian): MatrixPinv{hermitian}(x).
Var pinv(const Var& x, bool hermitian = false);
// det(x): Det()(x).
Var det(const Var& x);
// slogdet(x): SLogDet's (sign, log |det|).
std::vector<Var> slogdet(const Var& x);
// lstsq(a, b, rcond): Lstsq's four outputs.
std::vector<Var> lstsq(const Var& a, const Var& b, const Var& rcond);
// tensorinv(a, ind): TensorInv{ind}(a).
Var tensorinv(const Var& a, int ind = 2);
// tensorsolve(a, b, axes): TensorSolve{axes}(a, b).
Var tensorsolve(const Var& a, const Var& b, std::optional<std::vector<int>> axes = std::nullopt);
// matrix_dot(a, b, c...): dot(dot(a, b), c)...
Var matrix_dot(const std::vector<Var>& factors);
// matrix_power(m, n): m to the integer power n by squaring (pinv(m) for n < 0; eye for 0).
Var matrix_power(const Var& m, int64_t n);
// trace(x): the sum of the diagonal of a matrix.
Var trace(const Var& x);

// Every output of `op` applied to `inputs` (the first error in each when it fails).
std::vector<Var> ApplyOpOutputs(const OpPtr& op, const std::vector<Var>& inputs, size_t n_outputs);

}  // namespace kiln

#endif  // KILN_CORE_OPS_NLINALG_H_
