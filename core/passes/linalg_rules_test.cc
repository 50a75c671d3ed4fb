// The rules of linalg_rules.cc: each alone on the graph it matches, plain and Blockwise where
// PyTensor matches both; the optimized graph's printed form checked and its values equal to the
// original's on random inputs; the near misses each rule must leave alone; and the rules in their
// phases of FAST_RUN.
#include "core/passes/linalg_rules.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/kiln.h"
#include "core/ops/blockwise.h"
#include "core/ops/diagonal.h"
#include "core/ops/nlinalg.h"
#include "core/ops/slinalg.h"
#include "gtest/gtest.h"
#include "tests/testing/rewrite_check.h"

namespace kiln {
namespace {

using testing::ExpectSameValues;
using testing::Optimize;
using testing::Optimized;

// Only `rules` (by name).
Optimized OnlyRules(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                    std::set<std::string> rules) {
  RewriteOptions options;
  options.mode = OptimizerMode::kNone;
  options.include = std::move(rules);
  return Optimize(inputs, outputs, options);
}

// The optimized graph's debugprint, without ids.
std::string Printed(const FunctionGraph& fg) {
  const std::vector<Var> outs(fg.outputs().begin(), fg.outputs().end());
  return DebugPrint(outs, {.ids = DprintIds::kNone});
}

// The nodes of fg whose op name contains `part`.
int CountOps(const FunctionGraph& fg, const std::string& part) {
  int n = 0;
  for (Apply* node : fg.Toposort()) n += absl::StrContains(node->op().Name(), part);
  return n;
}

// The nodes of fg whose op's printed name is `name`.
int CountNamed(const FunctionGraph& fg, const std::string& name) {
  int n = 0;
  for (Apply* node : fg.Toposort()) n += node->op().Name() == name;
  return n;
}

// A well-conditioned symmetric positive definite 3 x 3 matrix made of x: x x^T + 3 I.
Var Spd(const Var& x) { return dot(x, transpose(x)) + eye(3) * constant(3.0); }

// A 3 x 3 float64 matrix input.
Var Matrix(const std::string& name) { return tensor(DType::kFloat64, {3, 3}, name); }

// op applied blockwise with `signature`.
Var Batched(OpPtr op, const std::string& signature, std::vector<Var> inputs) {
  return blockwise(std::move(op), signature, std::move(inputs));
}

// inv(inv(x)) -> x, and pinv(inv(x)), inv(pinv(x)), and the Blockwise of a stack.
TEST(LinalgRulesTest, InverseOfInverseIsTheMatrix) {
  const Var x = Matrix("x");
  const Var a = x + eye(3) * constant(8.0);  // diagonally dominant: well conditioned
  const std::vector<Var> outs = {matrix_inverse(matrix_inverse(a)), pinv(matrix_inverse(a)),
                                 matrix_inverse(pinv(a))};
  Optimized o = OnlyRules({x}, outs, {"rewrite_inv_inv"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["rewrite_inv_inv"].count, 3);
  EXPECT_EQ(CountOps(*o.fg, "MatrixInverse") + CountOps(*o.fg, "MatrixPinv"), 0);
  ExpectSameValues("inv inv", {x}, outs, *o.fg);

  const Var s = tensor(DType::kFloat64, {2, 3, 3}, "s");
  const Var sa = s + eye(3) * constant(8.0);
  const OpPtr inv = std::make_shared<MatrixInverse>();
  const Var batched = Batched(inv, "(m,m)->(m,m)", {Batched(inv, "(m,m)->(m,m)", {sa})});
  Optimized b = OnlyRules({s}, {batched}, {"rewrite_inv_inv"});
  ASSERT_NE(b.fg, nullptr);
  EXPECT_EQ(CountOps(*b.fg, "Blockwise"), 0) << Printed(*b.fg);
  ExpectSameValues("blockwise inv inv", {s}, {batched}, *b.fg);
}

// pinv(inv(x), hermitian=True) reads one triangle of inv(x): not x for a non-symmetric x, it stays.
TEST(LinalgRulesTest, AHermitianPinvIsNotAnInverse) {
  const Var x = Matrix("x");
  const Var out = pinv(matrix_inverse(x + eye(3) * constant(8.0)), /*hermitian=*/true);
  Optimized o = OnlyRules({x}, {out}, {"rewrite_inv_inv"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["rewrite_inv_inv"].count, 0);
}

// A single inverse stays.
TEST(LinalgRulesTest, ASingleInverseStays) {
  const Var x = Matrix("x");
  const Var out = matrix_inverse(x + eye(3) * constant(8.0));
  Optimized o = OnlyRules({x}, {out}, {"rewrite_inv_inv", "rewrite_inv_eye_to_eye"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(CountOps(*o.fg, "MatrixInverse"), 1);
}

// det(diag(v)) -> prod(v); a diagonal of offset 1 is not the matrix's diagonal and stays.
TEST(LinalgRulesTest, DeterminantOfADiagonalMatrixIsTheProduct) {
  const Var v = tensor(DType::kFloat64, {4}, "v");
  const Var out = det(diag(v));
  Optimized o = OnlyRules({v}, {out}, {"rewrite_det_diag_to_prod_diag"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["rewrite_det_diag_to_prod_diag"].count, 1);
  EXPECT_EQ(CountNamed(*o.fg, "Det"), 0);
  EXPECT_EQ(CountOps(*o.fg, "AllocDiag"), 0);
  EXPECT_EQ(CountOps(*o.fg, "Prod"), 1) << Printed(*o.fg);
  ExpectSameValues("det diag", {v}, {out}, *o.fg);

  const Var off = det(diag(v, 1));
  Optimized miss = OnlyRules({v}, {off}, {"rewrite_det_diag_to_prod_diag"});
  ASSERT_NE(miss.fg, nullptr);
  EXPECT_EQ(CountNamed(*miss.fg, "Det"), 1);
}

// cholesky(eye(3)) -> eye(3), inv(eye(3)) -> eye(3); an eye with an offset stays.
TEST(LinalgRulesTest, CholeskyAndInverseOfTheIdentityAreTheIdentity) {
  const Var x = Matrix("x");
  const std::vector<Var> outs = {x + cholesky(eye(3)), x + matrix_inverse(eye(3))};
  Optimized o = OnlyRules({x}, outs, {"rewrite_remove_useless_cholesky", "rewrite_inv_eye_to_eye"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(CountOps(*o.fg, "Cholesky"), 0);
  EXPECT_EQ(CountOps(*o.fg, "MatrixInverse"), 0);
  ExpectSameValues("cholesky eye", {x}, outs, *o.fg);

  const Var shifted = eye(constant(int64_t{3}), constant(int64_t{3}), constant(int64_t{1}));
  const Var miss_out = x + matrix_inverse(shifted + eye(3));
  Optimized miss = OnlyRules({x}, {miss_out}, {"rewrite_inv_eye_to_eye"});
  ASSERT_NE(miss.fg, nullptr);
  EXPECT_EQ(CountOps(*miss.fg, "MatrixInverse"), 1);
}

// solve(cholesky(a), b) -> solve_triangular(L, b, lower=True); solve(cholesky(a).T, b) ->
// solve_triangular(L.T, b, lower=False); an upper factor the other way round.
TEST(LinalgRulesTest, SolveWithACholeskyFactorIsTriangular) {
  const Var x = Matrix("x"), b = Matrix("b");
  const Var l = cholesky(Spd(x));
  const Var u = cholesky(Spd(x), /*lower=*/false);
  const std::vector<Var> outs = {solve(l, b), solve(transpose(l), b), solve(u, b),
                                 solve(transpose(u), b)};
  Optimized o = OnlyRules({x, b}, outs, {"generic_solve_to_solve_triangular"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["generic_solve_to_solve_triangular"].count, 4);
  const std::string printed = Printed(*o.fg);
  EXPECT_FALSE(absl::StrContains(printed, "Solve{")) << printed;
  EXPECT_EQ(CountOps(*o.fg, "SolveTriangular"), 4) << printed;
  ExpectSameValues("solve cholesky", {x, b}, outs, *o.fg);

  // assume_a="pos" reads a's triangle only: not a general solve, it stays.
  const Var pos = solve(l, b, "pos");
  Optimized miss = OnlyRules({x, b}, {pos}, {"generic_solve_to_solve_triangular"});
  ASSERT_NE(miss.fg, nullptr);
  EXPECT_EQ(CountOps(*miss.fg, "SolveTriangular"), 0);
}

// The Blockwise forms: a stack of solves with stacked Cholesky factors.
TEST(LinalgRulesTest, BatchedSolveWithACholeskyFactorIsTriangular) {
  const Var s = tensor(DType::kFloat64, {2, 3, 3}, "s");
  const Var b = tensor(DType::kFloat64, {2, 3, 2}, "b");
  const Var spd = matmul(s, dimshuffle(s, {0, 2, 1})) + eye(3) * constant(3.0);
  const Var l = Batched(std::make_shared<Cholesky>(CholeskyAttrs{}), "(m,m)->(m,m)", {spd});
  const Var out =
      Batched(std::make_shared<Solve>(SolveAttrs{}), "(m,m),(m,k)->(m,k)", {l, b});
  Optimized o = OnlyRules({s, b}, {out}, {"generic_solve_to_solve_triangular"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["generic_solve_to_solve_triangular"].count, 1);
  EXPECT_EQ(CountOps(*o.fg, "Blockwise{SolveTriangular"), 1) << Printed(*o.fg);
  ExpectSameValues("batched solve cholesky", {s, b}, {out}, *o.fg);
}

// dot(inv(a), b) -> solve(a, b); dot(b, inv(a)) -> solve(a.T, b.T).T; a vector b too.
TEST(LinalgRulesTest, ProductWithAnInverseIsASolve) {
  const Var x = Matrix("x"), b = Matrix("b");
  const Var v = tensor(DType::kFloat64, {3}, "v");
  const Var a = x + eye(3) * constant(8.0);
  const std::vector<Var> outs = {dot(matrix_inverse(a), b), dot(b, matrix_inverse(a)),
                                 dot(matrix_inverse(a), v)};
  Optimized o = OnlyRules({x, b, v}, outs, {"inv_as_solve"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["inv_as_solve"].count, 3);
  EXPECT_EQ(CountOps(*o.fg, "MatrixInverse"), 0) << Printed(*o.fg);
  EXPECT_EQ(CountOps(*o.fg, "Solve{"), 3) << Printed(*o.fg);
  ExpectSameValues("inv as solve", {x, b, v}, outs, *o.fg);
}

// solve(inv(a), b) -> dot(a, b) (not solve(a, b): a^-1^-1 b = a b).
TEST(LinalgRulesTest, SolveWithAnInverseIsAProduct) {
  const Var x = Matrix("x"), b = Matrix("b");
  const Var a = x + eye(3) * constant(8.0);
  const Var out = solve(matrix_inverse(a), b);
  Optimized o = OnlyRules({x, b}, {out}, {"local_solve_of_inv"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(CountOps(*o.fg, "Solve"), 0) << Printed(*o.fg);
  EXPECT_EQ(CountOps(*o.fg, "MatrixInverse"), 0);
  EXPECT_EQ(CountOps(*o.fg, "dot"), 1);
  ExpectSameValues("solve inv", {x, b}, {out}, *o.fg);
}

// The two triangular solves of a Cholesky factor -> cho_solve, lower and upper, and the
// transposed factor given as trans=1.
TEST(LinalgRulesTest, TwoTriangularSolvesAreAChoSolve) {
  const Var x = Matrix("x"), b = Matrix("b");
  const Var l = cholesky(Spd(x));
  const Var u = cholesky(Spd(x), /*lower=*/false);
  const std::vector<Var> outs = {
      solve_triangular(transpose(l), solve_triangular(l, b, 0, true), 0, false),
      solve_triangular(l, solve_triangular(l, b, 0, true), 1, true),
      solve_triangular(u, solve_triangular(transpose(u), b, 0, true), 0, false),
      solve_triangular(u, solve_triangular(u, b, 1, false), 0, false)};
  Optimized o = OnlyRules({x, b}, outs, {"local_triangular_solves_to_cho_solve"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["local_triangular_solves_to_cho_solve"].count, 4);
  EXPECT_EQ(CountOps(*o.fg, "SolveTriangular"), 0) << Printed(*o.fg);
  EXPECT_EQ(CountOps(*o.fg, "CholeskySolve"), 4);
  ExpectSameValues("cho_solve", {x, b}, outs, *o.fg);
}

// Near misses: the solves in the wrong order, two different factors, an inner solve read
// elsewhere, a unit diagonal.
TEST(LinalgRulesTest, TriangularSolvesThatAreNotAChoSolveStay) {
  const Var x = Matrix("x"), y = Matrix("y"), b = Matrix("b");
  const Var l = cholesky(Spd(x)), m = cholesky(Spd(y));
  const Var inner = solve_triangular(l, b, 0, true);
  const std::vector<Var> outs = {
      solve_triangular(l, solve_triangular(transpose(l), b, 0, false), 0, true),
      solve_triangular(transpose(m), solve_triangular(l, b, 0, true), 0, false),
      solve_triangular(transpose(l), inner, 0, false) + inner,
      solve_triangular(transpose(l), solve_triangular(l, b, 0, true, true), 0, false)};
  Optimized o = OnlyRules({x, y, b}, outs, {"local_triangular_solves_to_cho_solve"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["local_triangular_solves_to_cho_solve"].count, 0);
  EXPECT_EQ(CountOps(*o.fg, "CholeskySolve"), 0);
}

// det(x) -> prod(diagonal(L) ** 2) when L = cholesky(x) is computed too; alone, det stays.
TEST(LinalgRulesTest, DeterminantFromAComputedCholesky) {
  const Var x = Matrix("x");
  const Var a = Spd(x);
  const std::vector<Var> outs = {det(a), cholesky(a)};
  Optimized o = OnlyRules({x}, outs, {"local_det_chol"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["local_det_chol"].count, 1);
  EXPECT_EQ(CountNamed(*o.fg, "Det"), 0) << Printed(*o.fg);
  EXPECT_EQ(CountOps(*o.fg, "ExtractDiag"), 1);
  ExpectSameValues("det chol", {x}, outs, *o.fg);

  Optimized alone = OnlyRules({x}, {det(a)}, {"local_det_chol"});
  ASSERT_NE(alone.fg, nullptr);
  EXPECT_EQ(CountNamed(*alone.fg, "Det"), 1);
  // A factor with on_error="nan" gives NaN where det has a value: det stays.
  Optimized nan = OnlyRules({x}, {det(a), cholesky(a, true, "nan")}, {"local_det_chol"});
  ASSERT_NE(nan.fg, nullptr);
  EXPECT_EQ(CountNamed(*nan.fg, "Det"), 1);
}

// The Blockwise forms: det of a stack whose Cholesky factors are computed -> the products of
// their squared diagonals, one per matrix.
TEST(LinalgRulesTest, BatchedDeterminantFromAComputedCholesky) {
  const Var s = tensor(DType::kFloat64, {2, 3, 3}, "s");
  const Var spd = matmul(s, dimshuffle(s, {0, 2, 1})) + eye(3) * constant(3.0);
  const Var d = Batched(std::make_shared<Det>(), "(m,m)->()", {spd});
  const Var l = Batched(std::make_shared<Cholesky>(CholeskyAttrs{}), "(m,m)->(m,m)", {spd});
  Optimized o = OnlyRules({s}, {d, l}, {"local_det_chol"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["local_det_chol"].count, 1);
  EXPECT_EQ(CountOps(*o.fg, "Det"), 0) << Printed(*o.fg);
  ExpectSameValues("batched det chol", {s}, {d, l}, *o.fg);
}

// Unknown dims: the solve standing for dot(inv(a), b) keeps the product's static dims.
TEST(LinalgRulesTest, InvAsSolveKeepsTheStaticShape) {
  const Var x = dmatrix("x"), b = dmatrix("b");
  const Var a = x + eye(3) * constant(8.0);  // static (3, 3)
  const std::vector<Var> outs = {dot(matrix_inverse(a), b), dot(b, matrix_inverse(a))};
  Optimized o = OnlyRules({x, b}, outs, {"inv_as_solve"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["inv_as_solve"].count, 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(o.fg->outputs()[i]->type()->Equals(*outs[i]->type())) << i;
  }
  ExpectSameValues("inv as solve shapes", {x, b}, outs, *o.fg);
}

// log(det(x)) -> slogdet's log|det| (NaN for a negative det), log(abs(det)) and sgn(det) its
// outputs; merge makes them one SLogDet.
TEST(LinalgRulesTest, LogDeterminantIsSlogdet) {
  const Var x = Matrix("x");
  const Var d = det(x);
  const std::vector<Var> outs = {log(d), log(abs(d)), sgn(d)};
  Optimized o = OnlyRules({x}, outs, {"slogdet_specialization", "merge"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["slogdet_specialization"].count, 3);
  EXPECT_EQ(CountNamed(*o.fg, "Det"), 0);
  EXPECT_EQ(CountOps(*o.fg, "SLogDet"), 1) << Printed(*o.fg);
  ExpectSameValues("slogdet", {x}, outs, *o.fg);
  // Positive and negative determinants: log of a negative one is NaN in both graphs.
  const Var p = Matrix("p");
  const Var pd = Spd(p), neg = -Spd(p);
  const std::vector<Var> signed_outs = {log(det(pd)), log(det(neg)), log(abs(det(neg)))};
  Optimized s = OnlyRules({p}, signed_outs, {"slogdet_specialization"});
  ASSERT_NE(s.fg, nullptr);
  EXPECT_EQ(CountNamed(*s.fg, "Det"), 0);
  ExpectSameValues("slogdet signs", {p}, signed_outs, *s.fg);
}

// det read by anything else is computed anyway: log(det) stays.
TEST(LinalgRulesTest, ADeterminantReadElsewhereStays) {
  const Var x = Matrix("x");
  const Var d = det(x);
  Optimized o = OnlyRules({x}, {log(d), d * constant(2.0)}, {"slogdet_specialization"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(o.report.rules["slogdet_specialization"].count, 0);
  EXPECT_EQ(CountOps(*o.fg, "SLogDet"), 0);
  // abs(det) read by something other than a log, and det as an output itself.
  const Var ad = abs(d);
  Optimized a = OnlyRules({x}, {log(ad), ad}, {"slogdet_specialization"});
  ASSERT_NE(a.fg, nullptr);
  EXPECT_EQ(a.report.rules["slogdet_specialization"].count, 0);
  Optimized out = OnlyRules({x}, {log(d), d}, {"slogdet_specialization"});
  ASSERT_NE(out.fg, nullptr);
  EXPECT_EQ(out.report.rules["slogdet_specialization"].count, 0);
}

// In FAST_RUN each rule runs in PyTensor's phase: the Gaussian-log-likelihood shape
// log(det(a)) + b^T inv(a) b becomes an SLogDet and a solve, inv(inv(a)) disappears.
TEST(LinalgRulesTest, FastRunUsesThePhases) {
  const Var x = Matrix("x"), b = tensor(DType::kFloat64, {3}, "b");
  const Var a = Spd(x);
  const Var out = log(det(a)) + dot(b, dot(matrix_inverse(a), b));
  const Var twice = matrix_inverse(matrix_inverse(a));
  Optimized o = Optimize({x, b}, {out, twice});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_GT(o.report.rules["slogdet_specialization"].count, 0);
  EXPECT_GT(o.report.rules["inv_as_solve"].count, 0);
  EXPECT_GT(o.report.rules["rewrite_inv_inv"].count, 0);
  EXPECT_EQ(CountOps(*o.fg, "MatrixInverse"), 0) << Printed(*o.fg);
  EXPECT_EQ(CountNamed(*o.fg, "Det"), 0);
  ExpectSameValues("fast run", {x, b}, {out, twice}, *o.fg);
}


// The printed form of each rule's result (debugprint without ids), as PyTensor's graphs print.
TEST(LinalgRulesTest, PrintedForms) {
  const Var x = Matrix("x"), b = Matrix("b");
  const Var v = tensor(DType::kFloat64, {3}, "v");
  const Var l = cholesky(x);
  struct Case {
    std::string rule;
    std::vector<Var> inputs;
    Var out;
    std::string printed;
  };
  const std::string chol = "Cholesky{lower=True, destructive=False, on_error='raise'}";
  const std::vector<Case> cases = {
      {"rewrite_inv_inv", {x}, matrix_inverse(matrix_inverse(x)), "x\n"},
      {"rewrite_det_diag_to_prod_diag", {v}, det(diag(v)),
       "Prod{mul}{axis=[0], acc_dtype=float64}\n |v\n"},
      {"rewrite_remove_useless_cholesky", {}, cholesky(eye(3)),
       "Eye{dtype='float64'}\n |TensorConstant{3}\n |TensorConstant{3}\n |TensorConstant{0}\n"},
      {"generic_solve_to_solve_triangular", {x, b}, solve(l, b),
       "SolveTriangular{lower=True, trans=0, unit_diagonal=False, check_finite=True}\n |" + chol +
           "\n | |x\n |b\n"},
      {"inv_as_solve", {x, b}, dot(matrix_inverse(x), b),
       "Solve{assume_a='gen', lower=False, check_finite=True}\n |x\n |b\n"},
      {"local_solve_of_inv", {x, b}, solve(matrix_inverse(x), b), "dot\n |x\n |b\n"},
      {"local_triangular_solves_to_cho_solve", {x, b},
       solve_triangular(transpose(l), solve_triangular(l, b, 0, true), 0, false),
       "CholeskySolve{lower=True, check_finite=True}\n |" + chol + "\n | |x\n |b\n"},
      {"slogdet_specialization", {x}, log(det(x)),
       "Elemwise{switch,no_inplace}\n |Elemwise{eq,no_inplace}\n | |SLogDet.0\n | | |x\n"
       " | |TensorConstant{-1.0}\n |TensorConstant{nan}\n |SLogDet.1\n   |x\n"},
  };
  for (const Case& c : cases) {
    Optimized o = OnlyRules(c.inputs, {c.out}, {c.rule});
    ASSERT_NE(o.fg, nullptr) << c.rule;
    EXPECT_EQ(o.report.rules[c.rule].count, 1) << c.rule;
    EXPECT_EQ(Printed(*o.fg), c.printed) << c.rule;
  }
  Optimized o = OnlyRules({x}, {det(x), l}, {"local_det_chol"});
  ASSERT_NE(o.fg, nullptr);
  EXPECT_EQ(Printed(*o.fg), "Prod{mul}{acc_dtype=float64}\n |Elemwise{sqr,no_inplace}\n"
                            "   |ExtractDiag{offset=0, axis1=0, axis2=1, view=False}\n     |" +
                                chol + "\n       |x\n" + chol + "\n |x\n");
}

}  // namespace
}  // namespace kiln
