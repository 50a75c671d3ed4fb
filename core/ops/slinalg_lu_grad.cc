// The gradients of the LU family and BlockDiagonal (slinalg_lu.h), as PyTensor 2.34 builds them.
#include <memory>

#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/ops/alloc.h"
#include "core/ops/diagonal.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "core/ops/slinalg.h"
#include "core/ops/slinalg_lu.h"

namespace kiln {

namespace {

// m times tri(k) (numpy.tril of a matrix).
Var TrilK(const Var& m, int64_t k) {
  return m * tri(shape_i(m, 0), shape_i(m, 1), constant(k), m.dtype());
}

// m times 1 - tri(k - 1) (numpy.triu of a matrix).
Var TriuK(const Var& m, int64_t k) {
  return m * (scalar_constant(1.0, m.dtype()) -
              tri(shape_i(m, 0), shape_i(m, 1), constant(k - 1), m.dtype()));
}

// g, or zeros like `like` where the cost does not depend on the output.
Var OrZeros(const Var& g, const Var& like) { return IsDisconnected(*g) ? zeros_like(like) : g; }

// De Hoog, Anderssen and Lukas: the gradient with respect to B = L U given L_bar and U_bar:
// B_bar = U^-1 ... with x = tril(L^T L_bar, -1) + triu(U_bar U^T), B_bar = (U^-1 (L^-T x)^T)^T.
Var FactorGrad(const Var& l, const Var& u, const Var& l_bar, const Var& u_bar) {
  const Var x1 = TrilK(dot(transpose(l), l_bar), -1);
  const Var x2 = TriuK(dot(u_bar, transpose(u)), 0);
  const Var lt_inv_x = solve_triangular(transpose(l), x1 + x2, 0, false, true);
  return transpose(solve_triangular(u, transpose(lt_inv_x), 0, false));
}

}  // namespace

// PyTensor's rule. With permute_l the first output is P L, so its gradient is P^T (P L)_bar
// (PyTensor uses (P L)_bar as L_bar, which holds only when P is the identity) and P, L, U come
// from a new LU node.
std::vector<Var> LU::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var a = node.inputs()[0];
  Var perm, l, u, l_bar, u_bar;
  if (attrs().permute_l) {
    const std::vector<Var> plu = lu(a, false, attrs().check_finite, false);
    perm = plu[0];
    l = plu[1];
    u = plu[2];
    const Var pl_bar = OrZeros(g[0], a);
    l_bar = dot(transpose(cast(perm, pl_bar.dtype())), pl_bar);
    u_bar = OrZeros(g[1], a);
  } else {
    perm = node.outputs()[0];
    l = node.outputs()[1];
    u = node.outputs()[2];
    l_bar = OrZeros(g[1], a);
    u_bar = OrZeros(g[2], a);
  }
  const Var b_bar = FactorGrad(l, u, l_bar, u_bar);
  if (attrs().p_indices) return {take(b_bar, perm)};
  return {dot(cast(perm, b_bar.dtype()), b_bar)};
}

// PyTensor's rule: LU_bar split into L_bar (strictly lower) and U_bar (upper), then the rows of
// the factor's gradient put back in a's order.
std::vector<Var> LUFactor::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var a = node.inputs()[0];
  const Var packed = node.outputs()[0];
  const Var lu_bar = OrZeros(g[0], a);
  const Var l =
      TrilK(packed, -1) + eye(shape_i(a, 0), shape_i(a, 1), constant(int64_t{0}), packed.dtype());
  const Var u = TriuK(packed, 0);
  const Var perm = pivot_to_permutation(node.outputs()[1], false);
  const Var b_bar = FactorGrad(l, u, TrilK(lu_bar, -1), TriuK(lu_bar, 0));
  return {take(b_bar, perm)};
}

std::vector<Var> PivotToPermutations::LOp(const Apply& node, const std::vector<Var>&) const {
  return {grad_undefined(Name(), 0, node.inputs()[0], "The pivots are integers.")};
}

// Each matrix's gradient is its block of the output's.
std::vector<Var> BlockDiagonal::LOp(const Apply& node, const std::vector<Var>& g) const {
  std::vector<Var> out;
  Var r0 = constant(int64_t{0}), c0 = constant(int64_t{0});
  for (const VariablePtr& m : node.inputs()) {
    const Var r1 = r0 + shape_i(m, 0), c1 = c0 + shape_i(m, 1);
    out.push_back(subtensor(g[0], {Slice{r0, r1, std::nullopt}, Slice{c0, c1, std::nullopt}}));
    r0 = r1;
    c0 = c1;
  }
  return out;
}

}  // namespace kiln
