#include "core/ops/slinalg_lu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "core/ops/slinalg.h"
#include "core/ops/slinalg_matfun.h"
#include "tests/testing/numpy_cases.h"
#include "tests/testing/op_cases.h"

namespace kiln {
namespace {

std::vector<OpPtr> Candidates() {
  std::vector<OpPtr> ops;
  ops.push_back(std::make_shared<LU>());
  ops.push_back(std::make_shared<LU>(LUAttrs{.permute_l = true}));
  ops.push_back(std::make_shared<LU>(LUAttrs{.p_indices = true}));
  ops.push_back(std::make_shared<LUFactor>());
  for (bool inverse : {true, false}) {
    ops.push_back(std::make_shared<PivotToPermutations>(PivotToPermutationsAttrs{inverse}));
  }
  for (int n : {1, 2, 3}) ops.push_back(std::make_shared<BlockDiagonal>(BlockDiagonalAttrs{n}));
  return ops;
}

// Each line of tests/golden/pytensor_slinalg_lu.txt: PyTensor's name, output types, values
// (contiguous and strided inputs) and inferred shapes.
TEST(SlinalgLuTest, MatchesPyTensorAndScipy) {
  const int checked = testing::CheckOpCases(
      "tests/golden/pytensor_slinalg_lu.txt", Candidates(),
      [](const testing::OpCase& c, size_t i, const Tensor& got) {
        const std::vector<double> g = testing::Elements(got), w = testing::Elements(c.want[i]);
        const bool single = c.want[i].dtype() == DType::kFloat32;
        for (size_t e = 0; e < w.size(); ++e) {
          EXPECT_NEAR(g[e], w[e], (single ? 1e-5 : 1e-12) * std::max(1.0, std::abs(w[e])));
        }
      });
  EXPECT_GE(checked, 20);
}

TEST(SlinalgLuTest, NamesTypesAndErrors) {
  const Var x = dmatrix("x");
  const std::vector<Var> plu = lu(x);
  ASSERT_EQ(plu.size(), 3u);
  EXPECT_EQ(plu[0]->owner()->op().Name(),
            "LU{permute_l=False, overwrite_a=False, check_finite=True, p_indices=False}");
  EXPECT_EQ(lu(fmatrix())[0]->type()->ToString(), "TensorType(float32, (?, ?))");
  EXPECT_EQ(lu(x, false, true, true)[0]->type()->ToString(), "TensorType(int32, (?,))");
  EXPECT_EQ(lu(x, true).size(), 2u);
  EXPECT_EQ(lu_factor(tensor(DType::kFloat64, {3, 3}))[1]->type()->ToString(),
            "TensorType(int32, (3,))");
  EXPECT_EQ(block_diag({tensor(DType::kFloat32, {2, 3}), tensor(DType::kInt64, {1, 1})})
                ->type()
                ->ToString(),
            "TensorType(float64, (3, 4))");
  EXPECT_EQ(block_diag({x, tensor(DType::kFloat64, {1, 1})})->type()->ToString(),
            "TensorType(float64, (?, ?))");
  EXPECT_EQ(lu(x, true, true, true)[0].status().message(),
            "LU: Only one of permute_l and p_indices can be True");
  EXPECT_EQ(lu(dvector("v"))[0].status().message(),
            "LU{permute_l=False, overwrite_a=False, check_finite=True, p_indices=False}: input 0 "
            "(x) has type TensorType(float64, (?,)): `x` must be a matrix");
  EXPECT_EQ(block_diag({}).status().message(),
            "BlockDiagonal: attribute 'n_inputs' must be in [1, 4096], not 0");
  EXPECT_EQ(ApplyOp(MakeOp("BlockDiagonal", {{"n_inputs", int64_t{2}}}), {x}).status().message(),
            "BlockDiagonal{n_inputs=2}: Expected 2 matrices, got 1");
  EXPECT_EQ(MakeOp("LUFactor", {{"overwrite_a", true}}).status().message(),
            "LUFactor: attribute 'overwrite_a' must be False (Kiln never writes into an input)");
  // Run time: non-square, non-finite, bad pivots, an output too large.
  auto f = function({x}, {lu(x)[1]});
  ASSERT_TRUE(f.ok());
  const Tensor rect = Tensor::Zeros(DType::kFloat64, {2, 3});
  EXPECT_EQ((*f)({rect}).status().message(),
            "LU{permute_l=False, overwrite_a=False, check_finite=True, p_indices=False}: input 0 "
            "(x) has shape (2, 3): expected a square matrix");
  const Var p = lvector("p");
  auto g = function({p}, {pivot_to_permutation(p, true)});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)({*Tensor::Of<int64_t>(DType::kInt64, {2}, {0, 2})}).status().message(),
            "PivotToPermutations{inverse=True}: input 0 (pivots) has the entry 2 at 1, outside "
            "[0, 2)");
  const Var y = dmatrix("y");
  auto h = function({x, y}, {block_diag({x, y})});
  ASSERT_TRUE(h.ok());
  const int64_t big = int64_t{1} << 40;
  // Two empty blocks whose dims make a 2^80-element output: refused before allocating.
  const absl::Status huge =
      (*h)({Tensor::Zeros(DType::kFloat64, {big, 0}), Tensor::Zeros(DType::kFloat64, {0, big})})
          .status();
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(huge.message().rfind("BlockDiagonal{n_inputs=2}", 0), 0u) << huge;
  EXPECT_NE(huge.message().find("(1099511627776, 1099511627776)"), std::string::npos) << huge;
}

Tensor Filled(Shape shape, double start) {
  return testing::Filled(DType::kFloat64, std::move(shape),
                         [&](int64_t i) { return std::sin(start + 1.7 * i) + (i % 5 == 0); });
}

TEST(SlinalgLuTest, LuSolveMatchesSolve) {
  const Var a = dmatrix("a"), b = dvector("b"), bm = dmatrix("bm");
  const std::vector<Var> f = lu_factor(a);
  auto fn = function({a, b, bm}, {lu_solve(f[0], f[1], b), lu_solve(f[0], f[1], bm, true),
                                  solve(a, b), solve(transpose(a), bm)});
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto r = (*fn)({Filled({4, 4}, 0.3), Filled({4}, 1.0), Filled({4, 2}, 2.0)});
  ASSERT_TRUE(r.ok()) << r.status();
  for (int k : {0, 1}) {
    const std::vector<double> got = testing::Elements((*r)[k]);
    const std::vector<double> want = testing::Elements((*r)[k + 2]);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12);
  }
}

TEST(SlinalgLuTest, GradientsMatchFiniteDifferences) {
  const Tensor a = Filled({4, 4}, 0.3);
  for (int mode = 0; mode < 3; ++mode) {
    SCOPED_TRACE(mode);
    // Every output but the permutation, weighted by verify_grad's random projections.
    const absl::Status s = verify_grad(
        [&](const std::vector<Var>& in) {
          const std::vector<Var> out = lu(in[0], mode == 1, true, mode == 2);
          const Var l = out[out.size() - 2], u = out[out.size() - 1];
          return l * 1.5 + u;
        },
        {a});
    EXPECT_TRUE(s.ok()) << s;
  }
  absl::Status s = verify_grad([](const std::vector<Var>& in) { return lu_factor(in[0])[0]; }, {a});
  EXPECT_TRUE(s.ok()) << s;
  s = verify_grad(
      [](const std::vector<Var>& in) {
        const std::vector<Var> f = lu_factor(in[0]);
        return lu_solve(f[0], f[1], in[1]);
      },
      {a, Filled({4, 2}, 1.0)});
  EXPECT_TRUE(s.ok()) << s;
  s = verify_grad(
      [](const std::vector<Var>& in) {
        return block_diag({in[0], in[1], in[0]});
      },
      {Filled({2, 3}, 0.1), Filled({1, 2}, 0.4)});
  EXPECT_TRUE(s.ok()) << s;
}

// Every op of the slinalg family on 0 x 0 matrices (and a 0 x 3 right-hand side): empty results of
// the right shapes, no LAPACK call with a zero leading dimension.
TEST(SlinalgLuTest, EmptyMatricesGiveEmptyResults) {
  const Var a = dmatrix("a"), b = dmatrix("b");
  std::vector<Var> outs = {cholesky(a),
                           solve(a, b),
                           solve(a, b, "sym"),
                           solve(a, b, "pos"),
                           solve_triangular(a, b, 1, true),
                           cho_solve(a, true, b),
                           eigvalsh(a),
                           eigvalsh(a, a),
                           expm(a),
                           grad(sum(expm(a)), a),
                           grad(sum(eigvalsh(a, a)), a),
                           solve_continuous_lyapunov(a, a),
                           solve_discrete_lyapunov(a, a, "bilinear"),
                           lu_factor(a)[0],
                           lu_factor(a)[1],
                           block_diag({a, a})};
  for (const Var& v : lu(a)) outs.push_back(v);
  for (const Var& v : lu(a, true)) outs.push_back(v);
  for (const Var& v : lu(a, false, true, true)) outs.push_back(v);
  for (const Var& v : outs) ASSERT_TRUE(v.ok()) << v.status();
  auto f = function({a, b}, outs);
  ASSERT_TRUE(f.ok()) << f.status();
  auto r = (*f)({Tensor::Zeros(DType::kFloat64, {0, 0}), Tensor::Zeros(DType::kFloat64, {0, 3})});
  ASSERT_TRUE(r.ok()) << r.status();
  for (size_t i = 0; i < r->size(); ++i) {
    EXPECT_EQ((*r)[i].size(), 0) << i;
    EXPECT_EQ((*r)[i].shape()[0], 0) << i;
  }
  EXPECT_EQ((*r)[1].shape(), (Shape{0, 3}));
}

}  // namespace
}  // namespace kiln
