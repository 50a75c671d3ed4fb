// Aesara's aesara.tensor.slinalg matrix functions and equations: Eigvalsh (and EigvalshGrad),
// Expm (and ExpmGrad), SolveContinuousLyapunov and BilinearSolveDiscreteLyapunov, as
// scipy.linalg computes them (kernels in slinalg_kernels.cc and slinalg_matfun_kernels.cc,
// gradients in slinalg_grad.cc).
#ifndef KILN_CORE_OPS_SLINALG_MATFUN_H_
#define KILN_CORE_OPS_SLINALG_MATFUN_H_

#include <optional>
#include <string>
#include <tuple>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Eigvalsh's and EigvalshGrad's prop: the triangle of a (and b) read.
struct EigvalshAttrs {
  bool lower = true;
  static constexpr auto Fields() { return std::tuple{AttrField{"lower", &EigvalshAttrs::lower}}; }
};

// Eigvalsh{lower}(a) or (a, b): the ascending eigenvalues of the Hermitian a, or of the
// generalized problem a v = w b v (b positive definite); a vector of upcast(a, b)'s dtype.
class Eigvalsh final : public DeclaredOp<Eigvalsh, EigvalshAttrs> {
 public:
  KILN_DECLARED_OP("Eigvalsh")
};

// EigvalshGrad{lower}(a, b, gw) -> (ga, gb), or (a, gw) -> ga: Eigvalsh's gradient (not
// differentiable itself).
class EigvalshGrad final : public DeclaredOp<EigvalshGrad, EigvalshAttrs> {
 public:
  KILN_DECLARED_OP("EigvalshGrad")
};

// Expm(a): the matrix exponential of a square a (a matrix of a's dtype).
class Expm final : public DeclaredOp<Expm, NoAttrs> {
 public:
  KILN_DECLARED_OP("Expm")
};

// ExpmGrad(a, g): the gradient of sum(g * expm(a)) with respect to a (not differentiable
// itself).
class ExpmGrad final : public DeclaredOp<ExpmGrad, NoAttrs> {
 public:
  KILN_DECLARED_OP("ExpmGrad")
};

// SolveContinuousLyapunov(a, q): x with a x + x a^H = q (a matrix of upcast(a, q)'s dtype).
class SolveContinuousLyapunov final : public DeclaredOp<SolveContinuousLyapunov, NoAttrs> {
 public:
  KILN_DECLARED_OP("SolveContinuousLyapunov")
};

// BilinearSolveDiscreteLyapunov(a, q): x with a x a^H - x + q = 0, by the bilinear
// transformation.
class BilinearSolveDiscreteLyapunov final
    : public DeclaredOp<BilinearSolveDiscreteLyapunov, NoAttrs> {
 public:
  KILN_DECLARED_OP("BilinearSolveDiscreteLyapunov")
};

// aesara.tensor.slinalg.eigvalsh(a, b, lower); b absent (an invalid Var) for the standard
// problem.
Var eigvalsh(const Var& a, const Var& b = Var(), bool lower = true);
// aesara.tensor.slinalg.expm(a).
Var expm(const Var& a);
// aesara.tensor.slinalg.solve_continuous_lyapunov(a, q).
Var solve_continuous_lyapunov(const Var& a, const Var& q);
// aesara.tensor.slinalg.solve_discrete_lyapunov(a, q, method): "bilinear" is the op,
// "direct" Aesara's graph solve(I - kron(a, conj(a)), q.ravel()) reshaped to q's shape.
Var solve_discrete_lyapunov(const Var& a, const Var& q, const std::string& method = "direct");

}  // namespace kiln

#endif  // KILN_CORE_OPS_SLINALG_MATFUN_H_
