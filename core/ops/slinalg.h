// Aesara's aesara.tensor.slinalg factorization and solvers, as scipy.linalg computes them:
// Cholesky, CholeskySolve (cho_solve), Solve (assume_a gen/sym/her/pos) and SolveTriangular, on
// LAPACK (slinalg_kernels.cc) in float32, float64, complex64 and complex128 (other dtypes are
// computed as scipy does: in float32 or float64). Gradients in slinalg_grad.cc.
#ifndef KILN_CORE_OPS_SLINALG_H_
#define KILN_CORE_OPS_SLINALG_H_

#include <string>
#include <tuple>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Cholesky's props: the factor's side, Aesara's always-false `destructive`, and what a matrix
// that is not positive definite gives ("raise": an error; "nan": a matrix of NaNs).
struct CholeskyAttrs {
  bool lower = true;
  bool destructive = false;
  std::string on_error = "raise";
  static constexpr auto Fields() {
    return std::tuple{AttrField{"lower", &CholeskyAttrs::lower},
                      AttrField{"destructive", &CholeskyAttrs::destructive},
                      AttrField{"on_error", &CholeskyAttrs::on_error}};
  }
  absl::Status Check() const;
};

// Cholesky{lower, destructive, on_error}(x): the triangular factor L (x = L L^H) or U
// (x = U^H U) of a square matrix, from that triangle of x; the output has x's type.
class Cholesky final : public DeclaredOp<Cholesky, CholeskyAttrs> {
 public:
  KILN_DECLARED_OP("Cholesky")
};

// CholeskySolve's and the solves' shared props: which triangle is read, and whether non-finite
// inputs are refused.
struct CholeskySolveAttrs {
  bool lower = true;
  bool check_finite = true;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"lower", &CholeskySolveAttrs::lower},
                      AttrField{"check_finite", &CholeskySolveAttrs::check_finite}};
  }
};

// CholeskySolve{lower, check_finite}(c, b): x with (c c^H) x = b (lower) or (c^H c) x = b, for
// the Cholesky factor c (scipy.linalg.cho_solve). No gradient, as in Aesara.
class CholeskySolve final : public DeclaredOp<CholeskySolve, CholeskySolveAttrs> {
 public:
  KILN_DECLARED_OP("CholeskySolve")
};

// Solve's props: the structure assumed of a ("gen", "sym", "her" or "pos"), its triangle read
// (all but "gen"), and check_finite.
struct SolveAttrs {
  std::string assume_a = "gen";
  bool lower = false;
  bool check_finite = true;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"assume_a", &SolveAttrs::assume_a},
                      AttrField{"lower", &SolveAttrs::lower},
                      AttrField{"check_finite", &SolveAttrs::check_finite}};
  }
  absl::Status Check() const;
};

// Solve{assume_a, lower, check_finite}(a, b): x = a^-1 b for a square a and a vector or matrix
// b (scipy.linalg.solve); x has b's static shape and scipy's dtype.
class Solve final : public DeclaredOp<Solve, SolveAttrs> {
 public:
  KILN_DECLARED_OP("Solve")
};

// SolveTriangular's props: a's triangle, the system (trans 0: a x = b, 1: a^T x = b, 2:
// a^H x = b), whether a's diagonal is taken as ones, and check_finite.
struct SolveTriangularAttrs {
  bool lower = false;
  int trans = 0;
  bool unit_diagonal = false;
  bool check_finite = true;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"lower", &SolveTriangularAttrs::lower},
                      AttrField{"trans", &SolveTriangularAttrs::trans},
                      AttrField{"unit_diagonal", &SolveTriangularAttrs::unit_diagonal},
                      AttrField{"check_finite", &SolveTriangularAttrs::check_finite}};
  }
  absl::Status Check() const;
};

// SolveTriangular{lower, trans, unit_diagonal, check_finite}(a, b): scipy.linalg.
// solve_triangular.
class SolveTriangular final : public DeclaredOp<SolveTriangular, SolveTriangularAttrs> {
 public:
  KILN_DECLARED_OP("SolveTriangular")
};

// aesara.tensor.slinalg.cholesky(x) with Cholesky's props.
Var cholesky(const Var& x, bool lower = true, const std::string& on_error = "raise");
// aesara.tensor.slinalg.cho_solve((c, lower), b, check_finite).
Var cho_solve(const Var& c, bool lower, const Var& b, bool check_finite = true);
// aesara.tensor.slinalg.solve(a, b, assume_a, lower, check_finite).
Var solve(const Var& a, const Var& b, const std::string& assume_a = "gen", bool lower = false,
          bool check_finite = true);
// aesara.tensor.slinalg.solve_triangular(a, b, trans, lower, unit_diagonal, check_finite).
Var solve_triangular(const Var& a, const Var& b, int trans = 0, bool lower = false,
                     bool unit_diagonal = false, bool check_finite = true);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SLINALG_H_
