// RandomVariable: Philox's known answer, Aesara's names and types, the state's advance, the
// moments of every distribution, the shape it infers and its refusals. The Kolmogorov-Smirnov
// tests against SciPy are in tests/python/test_random.py.
#include "core/ops/random.h"

#include <cmath>

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/philox.h"
#include "core/ops/random_kernels.h"
#include "core/ops/shape_infer.h"
#include "gtest/gtest.h"
#include "tests/testing/eval.h"

namespace kiln {
namespace {

using testing::Eval;

Var Rng() { return tensor(DType::kUInt64, {2}, "rng"); }

// {next state, draw} of one call of `name` from the state of `seed`.
std::vector<Tensor> Draw(absl::string_view name, std::vector<Var> params, std::vector<int64_t> size,
                         uint64_t seed = 7) {
  const Var rng = Rng();
  absl::StatusOr<std::vector<Var>> rv = random_variable(name, rng, std::move(params), size);
  EXPECT_TRUE(rv.ok()) << rv.status();
  if (!rv.ok()) return {};
  return Eval({rng}, *rv, {RngState(seed)});
}

std::vector<double> Values(const Tensor& t) {
  const Tensor d = t.AsType(DType::kFloat64);
  return {d.data<double>(), d.data<double>() + d.size()};
}

TEST(RandomTest, PhiloxMatchesTheKnownAnswer) {
  // Random123's kat_vectors: philox4x32_10, counter 0 and key 0.
  const std::array<uint64_t, 2> words = philox::Block(0, 0, 0);
  EXPECT_EQ(words[0], 0xe169c58d6627e8d5u);
  EXPECT_EQ(words[1], 0x9b00dbd8bc57ac4cu);
  // The vectorized tile computes the same blocks.
  double a[3], b[3];
  philox::UniformPairs(5, (uint64_t{1} << 32) - 1, 3, a, b);
  for (int k = 0; k < 3; ++k) {
    const std::array<uint64_t, 2> w = philox::Block(5, (uint64_t{1} << 32) - 1 + k, 0);
    EXPECT_EQ(a[k], philox::ToOpenUnit(w[0]));
    EXPECT_EQ(b[k], philox::ToUnit(w[1]));
  }
}

TEST(RandomTest, NamesAndTypesAreAesaras) {
  const Var rng = Rng();
  auto rv = random_variable("normal", rng, {constant(0.0), constant(1.0)}, {2});
  ASSERT_TRUE(rv.ok()) << rv.status();
  EXPECT_EQ((*rv)[1]->owner()->op().Name(), "normal_rv{0, (0, 0), floatX, False}");
  EXPECT_EQ((*rv)[1].type().ToString(), "TensorType(float64, (2,))");
  EXPECT_EQ((*rv)[0].type().ToString(), "TensorType(uint64, (2,))");
  const OpPtr& op = (*rv)[1]->owner()->op_ptr();
  absl::StatusOr<OpPtr> remade = MakeOp("RandomVariable", op->Attrs());
  ASSERT_TRUE(remade.ok()) << remade.status();
  EXPECT_EQ(**remade, *op);
  EXPECT_EQ((*RandomVariableOp("exponential"))->Name(), "exponential_rv{0, (0,), floatX, False}");
  EXPECT_EQ((*RandomVariableOp("choice"))->Name(), "choice_rv{0, (1, 1, 0), None, False}");
  EXPECT_EQ((*RandomVariableOp("permutation"))->Name(), "permutation_rv{1, (1,), None, False}");
  auto mvn = random_variable("multivariate_normal", rng, {dvector("m"), dmatrix("c")}, {4});
  ASSERT_TRUE(mvn.ok()) << mvn.status();
  EXPECT_EQ((*mvn)[1].type().ToString(), "TensorType(float64, (4, ?))");
  // Without a size, the parameters' broadcast shape.
  auto no_size = random_variable("normal", rng, {tensor(DType::kFloat64, {3}), constant(1.0)});
  ASSERT_TRUE(no_size.ok()) << no_size.status();
  EXPECT_EQ((*no_size)[1].type().ToString(), "TensorType(float64, (3,))");
  auto ints = random_variable("poisson", rng, {constant(2.0)}, {5});
  EXPECT_EQ((*ints)[1].type().ToString(), "TensorType(int64, (5,))");
  auto perm = random_variable("permutation", rng, {constant(int64_t{6})});
  ASSERT_TRUE(perm.ok()) << perm.status();
  EXPECT_EQ((*perm)[1].type().ToString(), "TensorType(int8, (6,))");  // x's dtype, as Aesara
}

TEST(RandomTest, TheStateAdvancesAndASeedRepeats) {
  const std::vector<Tensor> a = Draw("normal", {constant(0.0), constant(1.0)}, {1000});
  const std::vector<Tensor> b = Draw("normal", {constant(0.0), constant(1.0)}, {1000});
  ASSERT_EQ(a.size(), 2u);
  EXPECT_TRUE(a[1].BitwiseEquals(b[1]));
  EXPECT_EQ(a[0].data<uint64_t>()[1], 1000u);
  const Var rng = Rng();
  auto rv = random_variable("normal", rng, {constant(0.0), constant(1.0)}, {1000});
  const std::vector<Tensor> next = Eval({rng}, {(*rv)[1]}, {a[0]});
  EXPECT_FALSE(next[0].BitwiseEquals(a[1]));
  // Another seed, other draws.
  EXPECT_FALSE(Draw("normal", {constant(0.0), constant(1.0)}, {1000}, 8)[1].BitwiseEquals(a[1]));
}

struct Moments {
  const char* name;
  std::vector<double> params;
  double mean, variance;
};

// Sample mean within 6 standard errors and sample variance within 5% of the distribution's.
TEST(RandomTest, EveryScalarDistributionHasItsMoments) {
  const std::vector<Moments> cases = {
      {"uniform", {-1, 3}, 1, 16.0 / 12},
      {"normal", {3, 2}, 3, 4},
      {"integers", {-2, 5}, 1, (49.0 - 1) / 12},
      {"binomial", {20, 0.3}, 6, 4.2},
      {"binomial", {100000, 0.4}, 40000, 24000},
      {"bernoulli", {0.25}, 0.25, 0.1875},
      {"poisson", {3.5}, 3.5, 3.5},
      {"poisson", {250}, 250, 250},
      {"gamma", {0.5, 2}, 1, 2},
      {"gamma", {9, 0.5}, 4.5, 2.25},
      {"beta", {2, 5}, 2.0 / 7, 10.0 / (49 * 8)},
      {"exponential", {1.5}, 1.5, 2.25},
  };
  constexpr int64_t kN = 200000;
  for (const Moments& c : cases) {
    std::vector<Var> params;
    for (double p : c.params) {
      const bool integer = std::string(c.name) == "integers" ||
                           (std::string(c.name) == "binomial" && params.empty());
      params.push_back(integer ? constant(static_cast<int64_t>(p)) : constant(p));
    }
    const std::vector<Tensor> out = Draw(c.name, params, {kN});
    ASSERT_EQ(out.size(), 2u) << c.name;
    const std::vector<double> v = Values(out[1]);
    double mean = 0, var = 0;
    for (double x : v) mean += x / kN;
    for (double x : v) var += (x - mean) * (x - mean) / (kN - 1);
    EXPECT_NEAR(mean, c.mean, 6 * std::sqrt(c.variance / kN)) << c.name;
    EXPECT_NEAR(var, c.variance, 0.05 * c.variance) << c.name;
  }
}

TEST(RandomTest, VectorDistributionsHaveTheirMeans) {
  constexpr int64_t kN = 50000;
  auto alphas = *Tensor::Of<double>(DType::kFloat64, {3}, {1, 2, 5});
  std::vector<double> d = Values(Draw("dirichlet", {constant(alphas)}, {kN})[1]);
  std::vector<double> mean(3);
  for (int64_t i = 0; i < kN; ++i) {
    EXPECT_NEAR(d[3 * i] + d[3 * i + 1] + d[3 * i + 2], 1.0, 1e-12);
    for (int j = 0; j < 3; ++j) mean[j] += d[3 * i + j] / kN;
  }
  EXPECT_NEAR(mean[0], 1.0 / 8, 0.005);
  EXPECT_NEAR(mean[2], 5.0 / 8, 0.005);
  auto mu = *Tensor::Of<double>(DType::kFloat64, {2}, {1, -2});
  auto cov = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {4, 1.2, 1.2, 1});
  std::vector<double> m =
      Values(Draw("multivariate_normal", {constant(mu), constant(cov)}, {kN})[1]);
  double m0 = 0, m1 = 0, c01 = 0;
  for (int64_t i = 0; i < kN; ++i) {
    m0 += m[2 * i] / kN;
    m1 += m[2 * i + 1] / kN;
  }
  for (int64_t i = 0; i < kN; ++i) c01 += (m[2 * i] - m0) * (m[2 * i + 1] - m1) / kN;
  EXPECT_NEAR(m0, 1, 0.05);
  EXPECT_NEAR(m1, -2, 0.05);
  EXPECT_NEAR(c01, 1.2, 0.06);
  auto p = *Tensor::Of<double>(DType::kFloat64, {3}, {0.2, 0.5, 0.3});
  std::vector<double> cat = Values(Draw("categorical", {constant(p)}, {kN})[1]);
  std::vector<double> freq(3);
  for (double x : cat) freq[static_cast<int>(x)] += 1.0 / kN;
  EXPECT_NEAR(freq[1], 0.5, 0.01);
  EXPECT_NEAR(freq[2], 0.3, 0.01);
}

TEST(RandomTest, PermutationAndChoice) {
  std::vector<double> perm = Values(Draw("permutation", {constant(int64_t{50})}, {})[1]);
  std::vector<double> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_NE(perm, sorted);
  // A matrix's rows are permuted whole.
  auto rows = *Tensor::Of<double>(DType::kFloat64, {3, 2}, {0, 1, 10, 11, 20, 21});
  std::vector<double> shuffled = Values(Draw("permutation", {constant(rows)}, {})[1]);
  ASSERT_EQ(shuffled.size(), 6u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(shuffled[2 * r + 1], shuffled[2 * r] + 1);
  auto a = *Tensor::Of<double>(DType::kFloat64, {4}, {10, 20, 30, 40});
  auto none = *Tensor::Of<double>(DType::kFloat64, {0}, {});
  std::vector<double> picks =
      Values(Draw("choice", {constant(a), constant(none), constant(false)}, {4})[1]);
  std::sort(picks.begin(), picks.end());
  EXPECT_EQ(picks, (std::vector<double>{10, 20, 30, 40}));
  auto p = *Tensor::Of<double>(DType::kFloat64, {4}, {0, 0, 1, 0});
  EXPECT_EQ(Values(Draw("choice", {constant(a), constant(p), constant(true)}, {3})[1]),
            (std::vector<double>{30, 30, 30}));
}

TEST(RandomTest, BadParametersAndTypesAreErrors) {
  const Var rng = Rng();
  auto rv = random_variable("normal", rng, {constant(0.0), constant(-1.0)}, {3});
  auto f = function({rng}, {(*rv)[1]});
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<std::vector<Tensor>> out = (*f)({RngState(1)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "normal_rv: parameter scale must be >= 0, got -1 at index 0");
  auto bad_rng = random_variable("normal", dvector("r"), {constant(0.0), constant(1.0)});
  EXPECT_EQ(bad_rng.status().message(),
            "normal_rv{0, (0, 0), floatX, False}: input 0 (rng) has type TensorType(float64, (?,)) "
            "but TensorType(uint64, (2,)) is needed");
  EXPECT_EQ(random_variable("cauchy", rng, {}).status().message(),
            "RandomVariable: unknown distribution 'cauchy' (known: uniform, normal, integers, "
            "binomial, bernoulli, categorical, poisson, gamma, beta, exponential, dirichlet, "
            "multivariate_normal, permutation, choice)");
  // A constant size past the largest tensor makes no type.
  auto big = random_variable("normal", rng, {constant(0.0), constant(1.0)}, {1 << 30, 1 << 30});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(big.status().message(),
            "normal_rv{0, (0, 0), floatX, False}: shape (1073741824, 1073741824) has more than "
            "70368744177664 elements");
}

TEST(RandomTest, InferredShapeMatchesTheDraw) {
  const Var rng = Rng(), loc = dvector("loc");
  auto rv = random_variable("normal", rng, {loc, constant(1.0)});
  absl::StatusOr<ShapeVars> shape = infer_shape((*rv)[1]);
  ASSERT_TRUE(shape.ok()) << shape.status();
  auto loc_value = *Tensor::Of<double>(DType::kFloat64, {3}, {1, 2, 3});
  const std::vector<Tensor> out =
      Eval({rng, loc}, {Var((*shape)[0]), (*rv)[1]}, {RngState(3), loc_value});
  EXPECT_EQ(out[0].ElementAsDouble(0), 3);
  EXPECT_EQ(out[1].shape(), (Shape{3}));
  const Var n = bscalar("n");  // permutation(n) of an int8 n: n int64 values
  auto perm = random_variable("permutation", rng, {n});
  absl::StatusOr<ShapeVars> perm_shape = infer_shape((*perm)[1]);
  ASSERT_TRUE(perm_shape.ok()) << perm_shape.status();
  const std::vector<Tensor> p =
      Eval({rng, n}, {Var((*perm_shape)[0]), (*perm)[1]},
           {RngState(3), Tensor::Of<int64_t>(DType::kInt64, {}, {5})->AsType(DType::kInt8)});
  EXPECT_EQ(p[0].dtype(), DType::kInt64);
  EXPECT_EQ(p[0].ElementAsDouble(0), 5);
  EXPECT_EQ(p[1].shape(), (Shape{5}));
}

TEST(RandomTest, TheGradientIsUndefined) {
  const Var rng = Rng(), loc = dscalar("loc");
  auto rv = random_variable("normal", rng, {loc, constant(1.0)}, {2});
  const Var g = grad(sum((*rv)[1]), loc);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("No gradient defined for random variables"),
            std::string::npos)
      << g.status();
}

}  // namespace
}  // namespace kiln
