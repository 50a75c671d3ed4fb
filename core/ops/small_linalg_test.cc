// The batched small-matrix path of Blockwise{Cholesky, Solve, SolveTriangular, CholeskySolve}
// (small_linalg_batch.cc) against the per-item LAPACK path (the core op's Perform on each item)
// and against NumPy's values: random, ill-conditioned, broadcast and strided batches, float32,
// and items that fail (not positive definite, singular, non-finite) in the middle of a batch.
#include "core/ops/small_linalg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "core/kiln.h"
#include "core/ops/blockwise.h"
#include "core/ops/slinalg.h"
#include "core/tensor/call_limits.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

using testing::Elements;

// A tensor of standard normal values.
Tensor Random(DType d, Shape shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;
  return testing::Filled(d, std::move(shape), [&](int64_t) { return normal(gen); });
}

// `batch` symmetric positive definite n x n matrices m m^T + n I.
Tensor Spd(DType d, int64_t batch, int n, uint32_t seed) {
  const std::vector<double> m = Elements(Random(DType::kFloat64, {batch, n, n}, seed));
  std::vector<double> a(m.size());
  for (int64_t b = 0; b < batch; ++b) {
    const double* mb = m.data() + b * n * n;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        double s = i == j ? n : 0.0;
        for (int k = 0; k < n; ++k) s += mb[i * n + k] * mb[j * n + k];
        a[b * n * n + i * n + j] = s;
      }
    }
  }
  return *Tensor::FromValues<double>(d, {batch, n, n}, a);
}

// `t` with item `item` (of its leading dim) set to the n x n `values` (row-major).
Tensor WithItem(const Tensor& t, int64_t item, const std::vector<double>& values) {
  std::vector<double> v = Elements(t);
  const int64_t size = t.size() / t.shape()[0];
  for (int64_t e = 0; e < size; ++e) v[item * size + e] = values[e % values.size()];
  return *Tensor::FromValues<double>(t.dtype(), t.shape(), v);
}

struct BlockwiseRun {
  absl::Status status;
  Tensor out;
  std::string name;            // the Blockwise's name
  OpPtr core;                  // the core op
  ApplyPtr core_node;          // its node on the core types
  std::vector<int> core_ndim;  // per input
};

// The Blockwise of `core` with `sig` on `in` (types from the values, size-1 dims broadcastable).
BlockwiseRun RunBlockwise(OpPtr core, const std::string& sig, const std::vector<Tensor>& in) {
  BlockwiseRun r;
  absl::StatusOr<std::shared_ptr<const Blockwise>> op = Blockwise::Make(core, sig);
  EXPECT_TRUE(op.ok()) << op.status();
  std::vector<Var> args;
  for (const Tensor& t : in) args.push_back(tensor(t.dtype(), testing::BroadcastableShape(t)));
  const Var y = ApplyOp(*op, args);
  EXPECT_TRUE(y.ok()) << y.status();
  std::vector<Tensor> outs;
  r.status = (*op)->Perform(*y->owner(), in, outs);
  if (r.status.ok()) r.out = outs[0];
  r.name = (*op)->Name();
  r.core = core;
  r.core_node = *(*op)->CoreNode(y->owner()->inputs());
  for (const auto& s : (*op)->signature().inputs) r.core_ndim.push_back(static_cast<int>(s.size()));
  return r;
}

// Item b of t along its one batch dim (size 1: broadcast), a view of its core dims.
Tensor Item(const Tensor& t, int core_ndim, int64_t b) {
  if (t.ndim() == core_ndim) return t;
  Shape shape(t.shape().end() - core_ndim, t.shape().end());
  Shape strides(t.strides().end() - core_ndim, t.strides().end());
  return t.View(shape, strides, t.shape()[0] == 1 ? 0 : b * t.strides()[0]);
}

// The per-item path's status and output for item b: the core op's Perform on its views.
absl::Status PerItem(const BlockwiseRun& r, const std::vector<Tensor>& in, int64_t b, Tensor* out) {
  std::vector<Tensor> items;
  for (size_t i = 0; i < in.size(); ++i) items.push_back(Item(in[i], r.core_ndim[i], b));
  std::vector<Tensor> outs(1);
  absl::Status st = r.core->Perform(*r.core_node, items, outs);
  if (st.ok()) *out = outs[0];
  return st;
}

// Every item of r's output against the per-item path, to a relative `tol`.
void ExpectMatchesPerItem(const BlockwiseRun& r, const std::vector<Tensor>& in, int64_t batch,
                          double tol) {
  ASSERT_TRUE(r.status.ok()) << r.status;
  const std::vector<double> got = Elements(r.out);
  const int64_t size = r.out.size() / batch;
  for (int64_t b = 0; b < batch; ++b) {
    Tensor want;
    ASSERT_TRUE(PerItem(r, in, b, &want).ok());
    const std::vector<double> w = Elements(want);
    ASSERT_EQ(static_cast<int64_t>(w.size()), size);
    double scale = 0;
    for (double v : w) scale = std::max(scale, std::abs(v));
    for (int64_t e = 0; e < size; ++e) {
      if (std::isnan(w[e])) {
        EXPECT_TRUE(std::isnan(got[b * size + e])) << "item " << b << " element " << e;
      } else {
        EXPECT_NEAR(got[b * size + e], w[e], tol * (scale + 1e-300)) << "item " << b << " " << e;
      }
    }
  }
}

// r failed as the per-item path does at item b: "<Blockwise>: batch item b: <core's error>".
void ExpectItemError(const BlockwiseRun& r, const std::vector<Tensor>& in, int64_t b) {
  Tensor unused;
  const absl::Status want = PerItem(r, in, b, &unused);
  ASSERT_FALSE(want.ok());
  EXPECT_EQ(r.status.code(), want.code());
  EXPECT_EQ(r.status.message(),
            r.name + ": batch item " + std::to_string(b) + ": " + std::string(want.message()));
}

OpPtr CholeskyOp(bool lower, const std::string& on_error = "raise") {
  return std::make_shared<Cholesky>(CholeskyAttrs{.lower = lower, .on_error = on_error});
}
OpPtr SolveOp(const std::string& assume_a, bool lower = false, bool check_finite = true) {
  return std::make_shared<Solve>(
      SolveAttrs{.assume_a = assume_a, .lower = lower, .check_finite = check_finite});
}

constexpr double kTol64 = 1e-12, kTol32 = 2e-5;

TEST(SmallLinalgTest, CholeskyMatchesPerItem) {
  for (DType d : {DType::kFloat64, DType::kFloat32}) {
    for (int n : {1, 2, 3, 8, 16, 32, 33}) {
      for (bool lower : {true, false}) {
        SCOPED_TRACE(absl::StrCat(DTypeName(d), " n=", n, " lower=", lower));
        const std::vector<Tensor> in = {Spd(d, 37, n, n)};
        const BlockwiseRun r = RunBlockwise(CholeskyOp(lower), "(m,m)->(m,m)", in);
        ExpectMatchesPerItem(r, in, 37, d == DType::kFloat64 ? kTol64 : kTol32);
      }
    }
  }
}

TEST(SmallLinalgTest, CholeskyReadsOneTriangleOfStridedItems) {
  // A non-symmetric, transposed (F-order) batch: lower reads the lower triangle only.
  Tensor a = Spd(DType::kFloat64, 9, 5, 1);
  std::vector<double> v = Elements(a);
  for (int64_t b = 0; b < 9; ++b) v[b * 25 + 1] += 0.5;  // (0, 1): upper triangle only
  a = *Tensor::FromValues<double>(DType::kFloat64, {9, 5, 5}, v);
  for (bool lower : {true, false}) {
    const std::vector<Tensor> in = {testing::NonContiguous(a)};
    ExpectMatchesPerItem(RunBlockwise(CholeskyOp(lower), "(m,m)->(m,m)", in), in, 9, kTol64);
  }
}

TEST(SmallLinalgTest, CholeskyFailingItemsRaiseOrGiveNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = Spd(DType::kFloat64, 40, 4, 2);
  a = WithItem(a, 7, {1, 2, 2, 1});  // [[1, 2], [2, 1]] tiled: not positive definite
  a = WithItem(a, 30, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, nan, 0, 0, 0, 0, 1});  // not finite
  const std::vector<Tensor> in = {a};
  ExpectItemError(RunBlockwise(CholeskyOp(true), "(m,m)->(m,m)", in), in, 7);
  // The first failing item names the error, whichever its kind.
  const std::vector<Tensor> nan_first = {WithItem(a, 3, {nan})};
  ExpectItemError(RunBlockwise(CholeskyOp(false), "(m,m)->(m,m)", nan_first), nan_first, 3);
  // on_error="nan": item 7 is NaNs, the others their factors; a non-finite input still raises.
  const std::vector<Tensor> one_bad = {WithItem(Spd(DType::kFloat64, 40, 4, 2), 7, {1, 2, 2, 1})};
  const BlockwiseRun r = RunBlockwise(CholeskyOp(true, "nan"), "(m,m)->(m,m)", one_bad);
  ExpectMatchesPerItem(r, one_bad, 40, kTol64);
  EXPECT_TRUE(std::isnan(Elements(r.out)[7 * 16]));
  EXPECT_FALSE(std::isnan(Elements(r.out)[6 * 16]));
  ExpectItemError(RunBlockwise(CholeskyOp(true, "nan"), "(m,m)->(m,m)", in), in, 30);
}

TEST(SmallLinalgTest, CholeskyMatchesNumpy) {
  // np.linalg.cholesky(a).ravel().tolist() of the two matrices below, printed with repr.
  const Tensor a = *Tensor::FromValues<double>(
      DType::kFloat64, {2, 3, 3},
      std::vector<double>{4, 2, -2, 2, 10, 4, -2, 4, 9, 2, 1, 0, 1, 3, 0, 0, 0, 7});
  const BlockwiseRun r = RunBlockwise(CholeskyOp(true), "(m,m)->(m,m)", {a});
  ASSERT_TRUE(r.status.ok()) << r.status;
  const std::vector<double> want = {2.0,
                                    0.0,
                                    0.0,
                                    1.0,
                                    3.0,
                                    0.0,
                                    -1.0,
                                    1.6666666666666665,
                                    2.2852182001336816,
                                    1.4142135623730951,
                                    0.0,
                                    0.0,
                                    0.7071067811865475,
                                    1.5811388300841898,
                                    0.0,
                                    0.0,
                                    0.0,
                                    2.6457513110645907};
  const std::vector<double> got = Elements(r.out);
  for (size_t e = 0; e < want.size(); ++e) EXPECT_NEAR(got[e], want[e], 1e-15) << e;
}

TEST(SmallLinalgTest, SolveMatchesNumpy) {
  // np.linalg.solve(a, b[..., None])[..., 0].ravel().tolist() of the two systems below (the
  // second needs row interchanges), printed with repr.
  const Tensor a = *Tensor::FromValues<double>(
      DType::kFloat64, {2, 3, 3},
      std::vector<double>{3, 1, 2, 1, 5, 1, 2, 1, 4, 0, 2, 1, 1, 1, 1, 2, 1, 0});
  const Tensor b =
      *Tensor::FromValues<double>(DType::kFloat64, {2, 3}, std::vector<double>{1, 2, 3, 1, 0, -1});
  const std::vector<double> want = {-0.3243243243243243, 0.2972972972972973,  0.8378378378378377,
                                    -0.6666666666666667, 0.33333333333333337, 0.3333333333333333};
  for (const Tensor& layout : {a, testing::NonContiguous(a)}) {
    const BlockwiseRun r = RunBlockwise(SolveOp("gen"), "(m,m),(m)->(m)", {layout, b});
    ASSERT_TRUE(r.status.ok()) << r.status;
    const std::vector<double> got = Elements(r.out);
    for (size_t e = 0; e < want.size(); ++e) EXPECT_NEAR(got[e], want[e], 4e-16) << e;
  }
}

TEST(SmallLinalgTest, SolveMatchesPerItem) {
  for (DType d : {DType::kFloat64, DType::kFloat32}) {
    for (int n : {1, 3, 8, 32}) {
      for (const std::string assume : {"gen", "pos", "sym", "her"}) {
        for (bool lower : {true, false}) {
          SCOPED_TRACE(absl::StrCat(DTypeName(d), " n=", n, " ", assume, " lower=", lower));
          const Tensor a = assume == "gen" ? Random(d, {23, n, n}, n) : Spd(d, 23, n, n);
          const double tol = d == DType::kFloat64 ? 1e-10 : 1e-3;
          const std::vector<Tensor> vec = {a, Random(d, {23, n}, 5)};
          ExpectMatchesPerItem(RunBlockwise(SolveOp(assume, lower), "(m,m),(m)->(m)", vec), vec, 23,
                               tol);
          const std::vector<Tensor> mat = {testing::NonContiguous(a), Random(d, {23, n, 3}, 6)};
          ExpectMatchesPerItem(RunBlockwise(SolveOp(assume, lower), "(m,m),(m,k)->(m,k)", mat), mat,
                               23, tol);
        }
      }
    }
  }
}

TEST(SmallLinalgTest, SolveIllConditionedHasASmallResidual) {
  // Hilbert matrices of order 8 (condition ~1.5e10) scaled per item: the solution's forward
  // error follows the condition, its backward error stays at rounding level, as LAPACK's.
  const int n = 8;
  std::vector<double> h(5 * n * n);
  for (int b = 0; b < 5; ++b) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) h[(b * n + i) * n + j] = (b + 1) / (i + j + 1.0);
    }
  }
  const Tensor a = *Tensor::FromValues<double>(DType::kFloat64, {5, n, n}, h);
  const Tensor rhs = Random(DType::kFloat64, {5, n}, 9);
  const BlockwiseRun r = RunBlockwise(SolveOp("gen"), "(m,m),(m)->(m)", {a, rhs});
  ASSERT_TRUE(r.status.ok()) << r.status;
  const std::vector<double> x = Elements(r.out), bv = Elements(rhs);
  for (int b = 0; b < 5; ++b) {
    double res = 0, norm_a = 0, norm_x = 0;
    for (int i = 0; i < n; ++i) {
      double s = -bv[b * n + i];
      for (int j = 0; j < n; ++j) {
        s += h[(b * n + i) * n + j] * x[b * n + j];
        norm_a = std::max(norm_a, std::abs(h[(b * n + i) * n + j]));
      }
      res = std::max(res, std::abs(s));
      norm_x = std::max(norm_x, std::abs(x[b * n + i]));
    }
    EXPECT_LT(res / (norm_a * norm_x * n), 1e-14) << "item " << b;
  }
}

TEST(SmallLinalgTest, SolveFailingItemsRaiseAsPerItem) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor a = Spd(DType::kFloat64, 30, 3, 3);
  const Tensor rhs = Random(DType::kFloat64, {30, 3}, 4);
  // A zero row and column: singular for getrf and sysv, not positive definite for posv.
  const Tensor singular = WithItem(a, 12, {1, 0, 3, 0, 0, 0, 3, 0, 6});
  for (const std::string assume : {"gen", "sym", "pos"}) {
    SCOPED_TRACE(assume);
    const std::vector<Tensor> in = {singular, rhs};
    ExpectItemError(RunBlockwise(SolveOp(assume), "(m,m),(m)->(m)", in), in, 12);
  }
  const std::vector<Tensor> not_pd = {WithItem(a, 4, {1, 2, 0, 2, 1, 0, 0, 0, 1}), rhs};
  ExpectItemError(RunBlockwise(SolveOp("pos"), "(m,m),(m)->(m)", not_pd), not_pd, 4);
  // check_finite: a NaN in b (item 9) raises before item 12's singular a; without the check
  // item 9 is NaN and item 12 still raises.
  std::vector<double> bv = Elements(rhs);
  bv[9 * 3 + 1] = nan;
  const Tensor nan_b = *Tensor::FromValues<double>(DType::kFloat64, {30, 3}, bv);
  const std::vector<Tensor> both = {singular, nan_b};
  ExpectItemError(RunBlockwise(SolveOp("gen"), "(m,m),(m)->(m)", both), both, 9);
  const std::vector<Tensor> unchecked = {a, nan_b};
  const BlockwiseRun r = RunBlockwise(SolveOp("gen", false, false), "(m,m),(m)->(m)", unchecked);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(std::isnan(Elements(r.out)[9 * 3]));
  EXPECT_FALSE(std::isnan(Elements(r.out)[8 * 3]));
}

TEST(SmallLinalgTest, SolveBroadcastsBatchDims) {
  // One a (batch dim of length 1, stride 0 in the batch) for 17 right-hand sides, and the
  // reverse; then two batch dims, (4, 1) by (1, 5).
  const Tensor a = Random(DType::kFloat64, {1, 6, 6}, 11);
  const Tensor many_a = Random(DType::kFloat64, {17, 6, 6}, 12);
  const Tensor rhs = Random(DType::kFloat64, {17, 6}, 13);
  const std::vector<Tensor> one_a = {a, rhs};
  ExpectMatchesPerItem(RunBlockwise(SolveOp("gen"), "(m,m),(m)->(m)", one_a), one_a, 17, 1e-10);
  const std::vector<Tensor> one_b = {many_a, Random(DType::kFloat64, {1, 6}, 14)};
  ExpectMatchesPerItem(RunBlockwise(SolveOp("gen"), "(m,m),(m)->(m)", one_b), one_b, 17, 1e-10);
  const Tensor a4 = Random(DType::kFloat64, {4, 1, 6, 6}, 15);
  const Tensor b5 = Random(DType::kFloat64, {1, 5, 6}, 16);
  const BlockwiseRun r = RunBlockwise(SolveOp("gen"), "(m,m),(m)->(m)", {a4, b5});
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.out.shape(), Shape({4, 5, 6}));
  const std::vector<double> got = Elements(r.out);
  for (int64_t p = 0; p < 4; ++p) {
    for (int64_t q = 0; q < 5; ++q) {
      Tensor want;
      std::vector<Tensor> items = {a4.View({6, 6}, {6, 1}, p * 36), b5.View({6}, {1}, q * 6)};
      std::vector<Tensor> outs(1);
      ASSERT_TRUE(r.core->Perform(*r.core_node, items, outs).ok());
      const std::vector<double> w = Elements(outs[0]);
      for (int e = 0; e < 6; ++e)
        EXPECT_NEAR(got[(p * 5 + q) * 6 + e], w[e], 1e-10 * (1 + std::abs(w[e])));
    }
  }
}

TEST(SmallLinalgTest, SolveTriangularMatchesPerItem) {
  for (DType d : {DType::kFloat64, DType::kFloat32}) {
    for (bool lower : {true, false}) {
      for (int trans : {0, 1, 2}) {
        for (bool unit : {false, true}) {
          SCOPED_TRACE(
              absl::StrCat(DTypeName(d), " lower=", lower, " trans=", trans, " unit=", unit));
          // A well-conditioned triangle: a Cholesky factor (the other triangle random noise).
          const Tensor a = Spd(d, 19, 7, 21);
          OpPtr op = std::make_shared<SolveTriangular>(
              SolveTriangularAttrs{.lower = lower, .trans = trans, .unit_diagonal = unit});
          const std::vector<Tensor> in = {a, Random(d, {19, 7, 2}, 22)};
          ExpectMatchesPerItem(RunBlockwise(op, "(m,m),(m,k)->(m,k)", in), in, 19,
                               d == DType::kFloat64 ? 1e-11 : 1e-3);
        }
      }
    }
  }
  // A zero on the diagonal of item 5 is singular, except with a unit diagonal.
  const Tensor a = WithItem(Spd(DType::kFloat64, 10, 2, 23), 5, {1, 0, 0, 0});
  const std::vector<Tensor> in = {a, Random(DType::kFloat64, {10, 2}, 24)};
  OpPtr op = std::make_shared<SolveTriangular>(SolveTriangularAttrs{.lower = true});
  ExpectItemError(RunBlockwise(op, "(m,m),(m)->(m)", in), in, 5);
  OpPtr unit =
      std::make_shared<SolveTriangular>(SolveTriangularAttrs{.lower = true, .unit_diagonal = true});
  ExpectMatchesPerItem(RunBlockwise(unit, "(m,m),(m)->(m)", in), in, 10, kTol64);
}

TEST(SmallLinalgTest, CholeskySolveMatchesPerItem) {
  for (DType d : {DType::kFloat64, DType::kFloat32}) {
    for (bool lower : {true, false}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(d), " lower=", lower));
      // The factors of SPD matrices, from the batched Cholesky itself.
      const BlockwiseRun c = RunBlockwise(CholeskyOp(lower), "(m,m)->(m,m)", {Spd(d, 15, 6, 31)});
      ASSERT_TRUE(c.status.ok());
      OpPtr op = std::make_shared<CholeskySolve>(CholeskySolveAttrs{.lower = lower});
      const std::vector<Tensor> in = {c.out, Random(d, {15, 6, 4}, 32)};
      ExpectMatchesPerItem(RunBlockwise(op, "(m,m),(m,k)->(m,k)", in), in, 15,
                           d == DType::kFloat64 ? 1e-11 : 1e-3);
    }
  }
}

TEST(SmallLinalgTest, OtherDtypesAndUnnamedDimsTakeThePerItemPath) {
  // int64 input (computed in float64) and mixed float32/float64 solves still give the op's values.
  const Tensor a = testing::Filled(DType::kInt64, {6, 3, 3}, [](int64_t e) {
    return e % 9 % 4 == 0 ? 5.0 : 1.0;  // 5 on the diagonal, 1 elsewhere
  });
  const std::vector<Tensor> ints = {a};
  ExpectMatchesPerItem(RunBlockwise(CholeskyOp(true), "(m,m)->(m,m)", ints), ints, 6, kTol64);
  const std::vector<Tensor> mixed = {Spd(DType::kFloat32, 6, 3, 42),
                                     Random(DType::kFloat64, {6, 3}, 43)};
  ExpectMatchesPerItem(RunBlockwise(SolveOp("gen"), "(m,m),(m)->(m)", mixed), mixed, 6, 1e-6);
}

TEST(SmallLinalgTest, BatchStopsWhenTheCallIsInterrupted) {
  const std::function<absl::Status()> cancelled = [] {
    return absl::CancelledError("the call was cancelled");
  };
  const std::vector<Tensor> in = {Spd(DType::kFloat64, 2000, 4, 51)};
  InterruptScope scope(&cancelled);
  const BlockwiseRun r = RunBlockwise(CholeskyOp(true), "(m,m)->(m,m)", in);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kCancelled) << r.status;
}

}  // namespace
}  // namespace kiln
