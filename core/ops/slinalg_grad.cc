// The gradients of the slinalg ops (slinalg.h, slinalg_matfun.h), as Aesara's L_op and grad
// build them.
#include <limits>
#include <memory>

#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/ops/diagonal.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/fill_diagonal.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/slinalg.h"
#include "core/ops/slinalg_matfun.h"

namespace kiln {

namespace {

// Aesara's tril(m): m times tri of m's dtype.
Var Tril(const Var& m, int64_t k = 0) {
  return m * tri(shape_i(m, 0), shape_i(m, 1), constant(k), m.dtype());
}

// Aesara's triu(m): m times (1 - tri(k - 1)).
Var Triu(const Var& m, int64_t k = 0) {
  return m * (scalar_constant(1.0, m.dtype()) -
              tri(shape_i(m, 0), shape_i(m, 1), constant(k - 1), m.dtype()));
}

// SolveBase.L_op: b_bar = op'(a^T, c_bar) with op' the op with `lower` flipped, and
// a_bar = -b_bar c^T (an outer product for a vector c).
std::vector<Var> SolveGrads(const OpPtr& flipped, const Apply& node, const Var& c_bar) {
  const Var a = node.inputs()[0];
  const Var c = node.outputs()[0];
  const Var b_bar = ApplyOp(flipped, {transpose(a), c_bar});
  const Var a_bar = c.ndim() == 1 ? -outer(b_bar, c) : -dot(b_bar, transpose(c));
  return {a_bar, b_bar};
}

// conj(v) for a complex v, v itself for a real one.
Var Conj(const Var& v) { return v.ok() && IsComplex(v.dtype()) ? conj(v) : v; }

}  // namespace

// Murray's rule (arXiv:1602.07527) as Aesara writes it: with L lower (U^T for an upper factor),
// s = L^-T tril_halved(L^T dz) L^-1 and the gradient the symmetric part of s on L's triangle;
// on_error="nan" swaps a failed factor for ones and gives a NaN gradient.
std::vector<Var> Cholesky::LOp(const Apply& node, const std::vector<Var>& g) const {
  Var chol = node.outputs()[0];
  Var dz = g[0];
  Var ok;
  if (attrs().on_error == "nan") {
    ok = ~any(isnan(chol));
    chol = switch_(ok, chol, scalar_constant(1.0, chol.dtype()));
    dz = switch_(ok, dz, scalar_constant(1.0, dz.dtype()));
  }
  if (!attrs().lower) {
    chol = transpose(chol);
    dz = transpose(dz);
  }
  const Var m = dot(transpose(chol), dz);
  const Var inner = Tril(m) - diag(diagonal(m) / 2.0);
  // L^-T P L^-1 through two solves with the upper triangular L^T.
  const OpPtr solve_upper = std::make_shared<SolveTriangular>(SolveTriangularAttrs{});
  const Var right = ApplyOp(solve_upper, {transpose(chol), transpose(inner)});
  const Var s = ApplyOp(solve_upper, {transpose(chol), transpose(right)});
  const Var sym = s + transpose(s);
  Var grad = (attrs().lower ? Tril(sym) : Triu(sym)) - diag(diagonal(s));
  if (attrs().on_error == "nan") {
    grad = switch_(ok, grad,
                   scalar_constant(std::numeric_limits<double>::quiet_NaN(),
                                   grad.ok() ? grad.dtype() : DType::kFloat64));
  }
  return {grad};
}

// Aesara 2.9.4's CholeskySolve has no gradient.
std::vector<Var> CholeskySolve::LOp(const Apply& node, const std::vector<Var>&) const {
  const char* why = "Aesara's CholeskySolve defines no gradient.";
  return {grad_not_implemented(Name(), 0, node.inputs()[0], why),
          grad_not_implemented(Name(), 1, node.inputs()[1], why)};
}

std::vector<Var> Solve::LOp(const Apply& node, const std::vector<Var>& g) const {
  SolveAttrs flipped = attrs();
  flipped.lower = !flipped.lower;
  return SolveGrads(std::make_shared<Solve>(flipped), node, g[0]);
}

// SolveBase's rule with a_bar kept on a's triangle (its diagonal zero for a unit diagonal). For
// trans=1 or 2 (op(a) = a^T) the solve with a^T flipped is still a's transposed system, and a_bar
// is the transpose of op(a)'s.
std::vector<Var> SolveTriangular::LOp(const Apply& node, const std::vector<Var>& g) const {
  SolveTriangularAttrs flipped = attrs();
  flipped.lower = !flipped.lower;
  std::vector<Var> res = SolveGrads(std::make_shared<SolveTriangular>(flipped), node, g[0]);
  if (attrs().trans != 0) {
    const Var c = node.outputs()[0];
    res[0] = c.ndim() == 1 ? -outer(c, res[1]) : -dot(c, transpose(res[1]));
  }
  res[0] = attrs().lower ? Tril(res[0]) : Triu(res[0]);
  // A unit diagonal is never read (PyTensor zeroes its gradient; Aesara 2.9.4 forgets to).
  if (attrs().unit_diagonal && res[0].ok()) {
    res[0] = fill_diagonal(res[0], scalar_constant(0.0, res[0].dtype()));
  }
  return res;
}

std::vector<Var> Eigvalsh::LOp(const Apply& node, const std::vector<Var>& g) const {
  std::vector<Var> inputs(node.inputs().begin(), node.inputs().end());
  inputs.push_back(g[0]);
  const Var ga =
      ApplyOp(OpPtr(std::make_shared<EigvalshGrad>(EigvalshAttrs{.lower = attrs().lower})), inputs);
  if (node.inputs().size() == 1) return {ga};
  if (!ga.ok()) return {ga, ga};
  return {ga, Var(ga->owner()->outputs()[1])};
}

std::vector<Var> EigvalshGrad::LOp(const Apply& node, const std::vector<Var>&) const {
  std::vector<Var> out;
  for (size_t i = 0; i < node.inputs().size(); ++i) {
    out.push_back(grad_not_implemented(Name(), static_cast<int>(i), node.inputs()[i],
                                       "Aesara's EigvalshGrad defines no gradient."));
  }
  return out;
}

std::vector<Var> Expm::LOp(const Apply& node, const std::vector<Var>& g) const {
  return {ApplyOp(OpPtr(std::make_shared<ExpmGrad>()), {node.inputs()[0], g[0]})};
}

std::vector<Var> ExpmGrad::LOp(const Apply& node, const std::vector<Var>&) const {
  const char* why = "Aesara's ExpmGrad defines no gradient.";
  return {grad_not_implemented(Name(), 0, node.inputs()[0], why),
          grad_not_implemented(Name(), 1, node.inputs()[1], why)};
}

// Kao and Hennequin (2020), eq. 29 and 31 for scipy's a x + x a^H = q: s solves
// a^H s + s a = -dx; a_bar = s x^H + s^H x, q_bar = -s.
std::vector<Var> SolveContinuousLyapunov::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var a = node.inputs()[0];
  const Var x = node.outputs()[0];
  const Var s = ApplyOp(self(), {transpose(Conj(a)), -g[0]});
  const Var a_bar = dot(s, transpose(Conj(x))) + dot(transpose(Conj(s)), x);
  return {a_bar, -s};
}

// Kao and Hennequin (2020), eq. 41: s solves a^H s a - s + dx = 0; a_bar = s a x^H + s^H a x,
// q_bar = s.
std::vector<Var> BilinearSolveDiscreteLyapunov::LOp(const Apply& node,
                                                    const std::vector<Var>& g) const {
  const Var a = node.inputs()[0];
  const Var x = node.outputs()[0];
  const Var s = ApplyOp(self(), {transpose(Conj(a)), g[0]});
  const Var a_bar = dot(dot(s, a), transpose(Conj(x))) + dot(dot(transpose(Conj(s)), a), x);
  return {a_bar, s};
}

}  // namespace kiln
