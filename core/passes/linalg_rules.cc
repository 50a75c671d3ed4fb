// Rewrites of the linear-algebra ops: PyTensor 2.34's pytensor/tensor/rewriting/linalg.py (and
// Aesara 2.9.4's aesara/sandbox/linalg/ops.py, its older form), on the plain ops (what Kiln and
// Aesara build for matrices) and, where PyTensor matches blockwise_of(...), on their Blockwise
// forms (stacks of matrices). Each rule reads `before -> after`; rules PyTensor does not have are
// marked as Kiln's own.
#include "core/passes/linalg_rules.h"

#include <optional>
#include <string>
#include <vector>

#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/blockwise.h"
#include "core/ops/diagonal.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/nlinalg.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/slinalg.h"
#include "core/passes/rule_util.h"
#include "core/rewrite/pattern.h"

namespace kiln {
namespace {

// node's op as a T, or the core op of node's Blockwise as a T (PyTensor's blockwise_of(T));
// nullptr otherwise.
template <typename T>
const T* CoreAs(const Apply& node) {
  if (const T* op = node.op().As<T>()) return op;
  if (const Blockwise* bw = node.op().As<Blockwise>()) return bw->core_op()->template As<T>();
  return nullptr;
}

// The node that made v when its op is a T or a Blockwise of a T; nullptr otherwise.
template <typename T>
const Apply* MadeBy(const VariablePtr& v) {
  const Apply* node = v->owner();
  return node != nullptr && CoreAs<T>(*node) != nullptr ? node : nullptr;
}

// True when v is real (not complex): the rules that transpose where the algebra conjugates.
bool Real(const Variable& v) {
  return v.tensor_type() != nullptr && !IsComplex(v.tensor_type()->dtype());
}

// The matrix that v transposes (a DimShuffle swapping the last two of its input's dims, PyTensor's
// is_matrix_transpose without dims added), or nullptr.
const VariablePtr* TransposeOf(const VariablePtr& v) {
  const Apply* node = v->owner();
  if (node == nullptr || !node->op().Is<DimShuffle>()) return nullptr;
  const std::vector<int>& order = static_cast<const DimShuffle&>(node->op()).new_order();
  const int n = static_cast<int>(order.size());
  const TensorType* in = node->inputs()[0]->tensor_type();
  if (in == nullptr || in->ndim() != n || n < 2) return nullptr;
  for (int d = 0; d < n - 2; ++d) {
    if (order[d] != d) return nullptr;
  }
  if (order[n - 2] != n - 1 || order[n - 1] != n - 2) return nullptr;
  return &node->inputs()[0];
}

// The op of `like` (a node of a T or of a Blockwise of a T) with its core op replaced by `core`:
// `core` itself for a plain node, Blockwise(core, like's signature) for a Blockwise.
std::optional<OpPtr> SameBatching(const Apply& like, OpPtr core) {
  const Blockwise* bw = like.op().As<Blockwise>();
  if (bw == nullptr) return core;
  absl::StatusOr<std::shared_ptr<const Blockwise>> made =
      Blockwise::Make(std::move(core), bw->attrs().signature);
  if (!made.ok()) return std::nullopt;
  return OpPtr(*made);
}

// v, a value known to equal the tensor `out` (a solve standing for a product), with out's static
// dims where v's type leaves them unknown (a SpecifyShape: FitTo does not take a less specific
// replacement, which might be smaller than the output and broadcast).
Var WithShapeOf(const Var& v, const Variable& out) {
  if (!v.ok() || v->tensor_type() == nullptr || out.tensor_type() == nullptr ||
      v.ndim() != out.tensor_type()->ndim()) {
    return v;
  }
  const StaticShape& want = out.tensor_type()->shape();
  for (int d = 0; d < v.ndim(); ++d) {
    if (!v.type().shape()[d] && want[d]) return specify_shape(v, want);
  }
  return v;
}

// True when node is an inverse: MatrixInverse, or MatrixPinv without `hermitian` (which reads one
// triangle of its input and so is not the inverse of a non-Hermitian matrix), plain or Blockwise.
bool IsInverse(const Apply& node) {
  if (CoreAs<MatrixInverse>(node) != nullptr) return true;
  const MatrixPinv* p = CoreAs<MatrixPinv>(node);
  return p != nullptr && !p->attrs().hermitian;
}

// inv(inv(x)) -> x, for any pairing of MatrixInverse and MatrixPinv, plain or Blockwise
// (PyTensor's rewrite_inv_inv).
Replacement InvInv(const FunctionGraph&, Apply& node) {
  const Apply* inner = node.inputs()[0]->owner();
  if (!IsInverse(node) || inner == nullptr || !IsInverse(*inner)) return std::nullopt;
  return ReplaceWith(Var(inner->inputs()[0]), node);
}

// True when the AllocDiag node `diag` puts its main diagonal on the last two of its output's dims.
bool MainDiagonalOnLastDims(const Apply& diag) {
  const AllocDiagAttrs& a = static_cast<const AllocDiag&>(diag.op()).attrs();
  const int n = diag.output_ptr(0)->tensor_type()->ndim();
  auto norm = [n](int axis) { return axis < 0 ? axis + n : axis; };
  const int a1 = norm(a.axis1), a2 = norm(a.axis2);
  return a.offset == 0 && n >= 2 &&
         ((a1 == n - 2 && a2 == n - 1) || (a1 == n - 1 && a2 == n - 2));
}

// det(diag(v)) -> prod(v, axis=-1), for an AllocDiag of offset 0 (PyTensor's
// rewrite_det_diag_to_prod_diag; shape-unsafe as PyTensor's: v's length is not checked).
Replacement DetOfDiag(const FunctionGraph&, Apply& node) {
  if (CoreAs<Det>(node) == nullptr) return std::nullopt;
  const Apply* diag = node.inputs()[0]->owner();
  if (diag == nullptr || !diag->op().Is<AllocDiag>() || !MainDiagonalOnLastDims(*diag)) {
    return std::nullopt;
  }
  const Var v(diag->inputs()[0]);
  if (v.ndim() < 1) return std::nullopt;
  return ReplaceWith(WithShapeOf(prod(v, Axes(v.ndim() - 1)), *node.output_ptr(0)), node);
}

// True when v is Eye(n, m, 0) with n and m the same variable or the same constant.
bool IsSquareIdentity(const VariablePtr& v) {
  const Apply* eye_node = v->owner();
  if (eye_node == nullptr || !eye_node->op().Is<Eye>() || eye_node->num_inputs() != 3) return false;
  const std::vector<VariablePtr>& in = eye_node->inputs();
  if (ConstantInt(in[2]) != std::optional<int64_t>(0)) return false;
  if (in[0] == in[1]) return true;
  const std::optional<int64_t> n = ConstantInt(in[0]), m = ConstantInt(in[1]);
  return n && m && *n == *m;
}

// cholesky(eye(n)) -> eye(n) (PyTensor's rewrite_remove_useless_cholesky).
Replacement CholeskyOfEye(const FunctionGraph&, Apply& node) {
  if (CoreAs<Cholesky>(node) == nullptr || !IsSquareIdentity(node.inputs()[0])) return std::nullopt;
  return ReplaceWith(Var(node.inputs()[0]), node);
}

// inv(eye(n)) -> eye(n), for MatrixInverse and MatrixPinv (PyTensor's rewrite_inv_eye_to_eye).
Replacement InvOfEye(const FunctionGraph&, Apply& node) {
  if (!IsInverse(node) || !IsSquareIdentity(node.inputs()[0])) return std::nullopt;
  return ReplaceWith(Var(node.inputs()[0]), node);
}

// solve(cholesky(a), b) -> solve_triangular(cholesky(a), b, lower) and
// solve(cholesky(a).T, b) -> solve_triangular(cholesky(a).T, b, not lower), for a general
// (assume_a="gen") Solve, plain or Blockwise (PyTensor's generic_solve_to_solve_triangular;
// the transposed case on real matrices, whose transpose is the factor's other triangle).
Replacement SolveOfCholeskyIsTriangular(const FunctionGraph&, Apply& node) {
  const Solve* s = CoreAs<Solve>(node);
  if (s == nullptr || s->attrs().assume_a != "gen") return std::nullopt;
  const VariablePtr& a = node.inputs()[0];
  std::optional<bool> lower;
  if (const Apply* chol = MadeBy<Cholesky>(a)) {
    lower = CoreAs<Cholesky>(*chol)->attrs().lower;
  } else if (const VariablePtr* t = TransposeOf(a); t != nullptr && Real(*a)) {
    if (const Apply* chol = MadeBy<Cholesky>(*t)) lower = !CoreAs<Cholesky>(*chol)->attrs().lower;
  }
  if (!lower) return std::nullopt;
  const std::optional<OpPtr> op =
      SameBatching(node, std::make_shared<SolveTriangular>(SolveTriangularAttrs{
                             .lower = *lower, .check_finite = s->attrs().check_finite}));
  if (!op) return std::nullopt;
  return ReplaceWith(ApplyOp(*op, {Var(a), Var(node.inputs()[1])}), node);
}

// dot(inv(a), b) -> solve(a, b) and dot(b, inv(a)) -> solve(a.T, b.T).T, for plain matrices
// (PyTensor's and Aesara's inv_as_solve; Kiln's Dot takes no stacks).
Replacement InvAsSolve(const FunctionGraph&, Apply& node) {
  if (!node.op().Is<Dot>() && !node.op().Is<Dot22>()) return std::nullopt;
  const VariablePtr& l = node.inputs()[0];
  const VariablePtr& r = node.inputs()[1];
  if (const Apply* inv = l->owner(); inv != nullptr && inv->op().Is<MatrixInverse>()) {
    return ReplaceWith(WithShapeOf(solve(Var(inv->inputs()[0]), Var(r)), *node.output_ptr(0)),
                       node);
  }
  if (const Apply* inv = r->owner(); inv != nullptr && inv->op().Is<MatrixInverse>()) {
    const Var a(inv->inputs()[0]);
    return ReplaceWith(
        WithShapeOf(transpose(solve(transpose(a), transpose(Var(l)))), *node.output_ptr(0)), node);
  }
  return std::nullopt;
}

// solve(inv(a), b) -> dot(a, b), for a general (assume_a="gen") plain Solve (Kiln's own: the
// issue's `solve(inv(a), b)`, whose value is a b, not solve(a, b)).
Replacement SolveOfInv(const FunctionGraph&, Apply& node) {
  const Solve* s = node.op().As<Solve>();
  if (s == nullptr || s->attrs().assume_a != "gen") return std::nullopt;
  const Apply* inv = node.inputs()[0]->owner();
  if (inv == nullptr || !inv->op().Is<MatrixInverse>()) return std::nullopt;
  return ReplaceWith(
      WithShapeOf(dot(Var(inv->inputs()[0]), Var(node.inputs()[1])), *node.output_ptr(0)), node);
}

// node's op as a plain SolveTriangular without a unit diagonal; nullptr otherwise.
const SolveTriangular* PlainTriangular(const Apply* node) {
  if (node == nullptr) return nullptr;
  const SolveTriangular* st = node->op().As<SolveTriangular>();
  if (st == nullptr || st->attrs().unit_diagonal) return nullptr;
  return st;
}

// A triangular solve seen from the matrix c it reads: the triangle of c (T) it uses and whether
// the system is T x = b or T^T x = b.
struct TriangularStep {
  VariablePtr c;
  bool c_lower;     // T is c's lower triangle
  bool transposed;  // the system is T^T x = b
};

// The step of solve_triangular(mat, ., lower, trans) on a real mat: mat's own triangle, or for
// mat = c.T the other triangle of c transposed.
TriangularStep StepOf(const VariablePtr& mat, const SolveTriangularAttrs& at) {
  const bool trans = at.trans != 0;
  if (const VariablePtr* t = TransposeOf(mat)) return {*t, !at.lower, !trans};
  return {mat, at.lower, trans};
}

// solve_triangular(c.T, solve_triangular(c, b, lower=True), lower=False) ->
// cho_solve((c, True), b), and its upper form solve_triangular(c, solve_triangular(c.T, b,
// lower=True), lower=False) -> cho_solve((c, False), b); the transposed factor also as trans=1
// of c itself. Real matrices, the inner solve read by nothing else (Kiln's own: the cho_solve
// PyTensor's psd_solve_with_chol leaves as a note).
Replacement TriangularSolvesAreChoSolve(const FunctionGraph& fg, Apply& node) {
  const SolveTriangular* outer = PlainTriangular(&node);
  if (outer == nullptr) return std::nullopt;
  const VariablePtr& y = node.inputs()[1];
  const Apply* inner_node = y->owner();
  const SolveTriangular* inner = PlainTriangular(inner_node);
  if (inner == nullptr || fg.clients(y.get()).size() != 1) return std::nullopt;
  const VariablePtr& b = inner_node->inputs()[1];
  if (!Real(*node.inputs()[0]) || !Real(*inner_node->inputs()[0]) || !Real(*b)) {
    return std::nullopt;
  }
  const TriangularStep first = StepOf(inner_node->inputs()[0], inner->attrs());
  const TriangularStep second = StepOf(node.inputs()[0], outer->attrs());
  if (first.c != second.c || first.c_lower != second.c_lower) return std::nullopt;
  // cho_solve((c, True), b): L y = b, then L^T x = y; cho_solve((c, False), b): U^T y = b, then
  // U x = y.
  const bool lower = first.c_lower;
  if (first.transposed != !lower || second.transposed != lower) return std::nullopt;
  const bool check = inner->attrs().check_finite || outer->attrs().check_finite;
  return ReplaceWith(cho_solve(Var(first.c), lower, Var(b), check), node);
}

// det(x) -> prod(diagonal(L) ** 2) when L = cholesky(x) (on_error "raise") is also computed
// (PyTensor's local_det_chol), plain or Blockwise.
Replacement DetFromCholesky(const FunctionGraph& fg, Apply& node) {
  if (CoreAs<Det>(node) == nullptr) return std::nullopt;
  const VariablePtr& x = node.inputs()[0];
  const bool batched = node.op().Is<Blockwise>();
  for (const FunctionGraph::Client& c : fg.clients(x.get())) {
    if (c.node == nullptr || c.node == &node) continue;
    const Cholesky* chol = CoreAs<Cholesky>(*c.node);
    if (chol == nullptr || chol->attrs().on_error != "raise" || c.node->num_outputs() != 1) {
      continue;
    }
    const Var l(c.node->output(0));
    const int n = l.ndim();
    if (n < 2 || (!batched && n != 2)) return std::nullopt;
    // Over every axis for a matrix, as Aesara's prod(extract_diag(L) ** 2); the last for a stack.
    const Axes axes = batched ? Axes(n - 2) : Axes();
    return ReplaceWith(
        WithShapeOf(prod(sqr(diagonal(l, 0, n - 2, n - 1)), axes), *node.output_ptr(0)), node);
  }
  return std::nullopt;
}

// What a client of det(x) takes of it, for slogdet_specialization.
enum class DetUse { kSign, kLogAbs, kLog };

// The use of det's output by `client`: sgn(det), log(abs(det)) (its abs node read by logs only),
// or log(det); nullopt for any other reader (det is then computed anyway).
std::optional<DetUse> UseOfDet(const FunctionGraph& fg, const Apply& client) {
  const std::optional<ScalarOpKind> kind = ElemwiseKind(*client.output_ptr(0));
  if (kind == ScalarOpKind::kSgn) return DetUse::kSign;
  if (kind == ScalarOpKind::kLog) return DetUse::kLog;
  if (kind != ScalarOpKind::kAbs) return std::nullopt;
  const auto& readers = fg.clients(client.output_ptr(0));
  if (readers.empty()) return std::nullopt;
  for (const FunctionGraph::Client& c : readers) {
    if (c.node == nullptr || ElemwiseKind(*c.node->output_ptr(0)) != ScalarOpKind::kLog) {
      return std::nullopt;
    }
  }
  return DetUse::kLogAbs;
}

// True when every reader of det(x) (v) is sgn(det), log(det) or log(abs(det)) (PyTensor's
// slogdet_specialization's condition: det itself is then never computed).
bool DetOnlyThroughLogAndSign(const FunctionGraph& fg, const Variable& v) {
  const auto& clients = fg.clients(&v);
  if (clients.empty()) return false;
  for (const FunctionGraph::Client& c : clients) {
    if (c.node == nullptr || !UseOfDet(fg, *c.node)) return false;
  }
  return true;
}

// The plain Det node under a log, sgn or abs node `node` reads, when det's every reader is one of
// those (real float x); nullptr otherwise.
const Apply* DetUnder(const FunctionGraph& fg, const Apply& node) {
  const Apply* det_node = node.inputs()[0]->owner();
  if (det_node == nullptr || !det_node->op().Is<Det>()) return nullptr;
  const Variable& x = *det_node->inputs()[0];
  if (!Real(x) || !IsFloat(x.tensor_type()->dtype())) return nullptr;
  return DetOnlyThroughLogAndSign(fg, *det_node->output_ptr(0)) ? det_node : nullptr;
}

// log(det(x)) -> where(eq(sign, -1), nan, logabsdet), sgn(det(x)) -> sign and
// log(abs(det(x))) -> logabsdet, of (sign, logabsdet) = slogdet(x), when det(x) is read only so
// (PyTensor's slogdet_specialization; merge then makes the SLogDet nodes one).
Replacement DetToSlogdet(const FunctionGraph& fg, Apply& node) {
  const std::optional<ScalarOpKind> kind = ElemwiseKind(*node.output_ptr(0));
  if (kind == ScalarOpKind::kSgn) {
    const Apply* det_node = DetUnder(fg, node);
    if (det_node == nullptr) return std::nullopt;
    return ReplaceWith(slogdet(Var(det_node->inputs()[0]))[0], node);
  }
  if (kind != ScalarOpKind::kLog) return std::nullopt;
  if (const Apply* abs_node = node.inputs()[0]->owner();
      abs_node != nullptr && ElemwiseKind(*abs_node->output_ptr(0)) == ScalarOpKind::kAbs) {
    const Apply* det_node = DetUnder(fg, *abs_node);
    if (det_node == nullptr) return std::nullopt;
    return ReplaceWith(slogdet(Var(det_node->inputs()[0]))[1], node);
  }
  const Apply* det_node = DetUnder(fg, node);
  if (det_node == nullptr) return std::nullopt;
  const std::vector<Var> sl = slogdet(Var(det_node->inputs()[0]));
  const DType d = sl[1].dtype();
  return ReplaceWith(
      switch_(eq(sl[0], scalar_constant(-1.0, d)), scalar_constant(std::nan(""), d), sl[1]), node);
}

}  // namespace

std::vector<RewriteRule> LinalgRules(const std::string& phase) {
  const std::vector<OpClassId> inverses = {OpClassIdOf<MatrixInverse>(), OpClassIdOf<MatrixPinv>(),
                                           OpClassIdOf<Blockwise>()};
  const std::vector<OpClassId> dets = {OpClassIdOf<Det>(), OpClassIdOf<Blockwise>()};
  const std::vector<OpClassId> cholesky_ops = {OpClassIdOf<Cholesky>(), OpClassIdOf<Blockwise>()};
  std::vector<RewriteRule> rules;
  if (phase == "canonicalize" || phase == "stabilize") {
    // inv(inv(x)) -> x
    rules.push_back(PhaseRule("rewrite_inv_inv", phase, inverses, InvInv));
    // inv(eye(n)) -> eye(n)
    rules.push_back(PhaseRule("rewrite_inv_eye_to_eye", phase, inverses, InvOfEye));
    // det(diag(v)) -> prod(v, axis=-1)
    rules.push_back(PhaseRule("rewrite_det_diag_to_prod_diag", phase, dets, DetOfDiag));
    // cholesky(eye(n)) -> eye(n)
    rules.push_back(
        PhaseRule("rewrite_remove_useless_cholesky", phase, cholesky_ops, CholeskyOfEye));
    // solve(cholesky(a), b) -> solve_triangular(cholesky(a), b, lower)
    rules.push_back(PhaseRule("generic_solve_to_solve_triangular", phase,
                              {OpClassIdOf<Solve>(), OpClassIdOf<Blockwise>()},
                              SolveOfCholeskyIsTriangular));
  }
  if (phase == "stabilize") {
    // dot(inv(a), b) -> solve(a, b)
    rules.push_back(
        PhaseRule("inv_as_solve", phase, {OpClassIdOf<Dot>(), OpClassIdOf<Dot22>()}, InvAsSolve));
    // solve(inv(a), b) -> dot(a, b)
    rules.push_back(PhaseRule("local_solve_of_inv", phase, {OpClassIdOf<Solve>()}, SolveOfInv));
    // solve_triangular(L.T, solve_triangular(L, b, lower=True)) -> cho_solve((L, True), b)
    rules.push_back(PhaseRule("local_triangular_solves_to_cho_solve", phase,
                              {OpClassIdOf<SolveTriangular>()}, TriangularSolvesAreChoSolve));
  }
  if (phase == "stabilize" || phase == "specialize") {
    // det(x) -> prod(diagonal(cholesky(x)) ** 2) when cholesky(x) is computed
    rules.push_back(PhaseRule("local_det_chol", phase, dets, DetFromCholesky));
  }
  if (phase == "specialize") {
    // log(det(x)) -> slogdet's log-abs (NaN for a negative det); sgn(det(x)) -> its sign
    rules.push_back(ElemwiseRule("slogdet_specialization", phase,
                                 {ScalarOpKind::kLog, ScalarOpKind::kSgn}, DetToSlogdet));
  }
  return rules;
}

}  // namespace kiln
