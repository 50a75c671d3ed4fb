// RandomVariable: Philox's known answer, Aesara's names and types, the state's advance, the
// moments (or quantiles) of every distribution, the shape it infers and its refusals. The
// Kolmogorov-Smirnov tests against SciPy and NumPy are in tests/python/test_random.py and
// tests/python/test_random_distributions.py.
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

double g(double x) { return std::tgamma(x); }
constexpr double kEuler = 0.5772156649015329;
// Riemann's zeta for s > 1: the sum to 10^5 and the integral of the tail.
double Zeta(double s) {
  double sum = 0;
  for (int k = 100000; k >= 1; --k) sum += std::pow(k, -s);
  return sum + std::pow(100000.5, 1 - s) / (s - 1);
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
      {"beta_binomial", {10, 2, 3}, 4, 6},
      {"beta_binomial", {1000, 0.5, 0.5}, 500, 1000.0 * 0.25 * 1001 / 2},
      {"chisquare", {3}, 3, 6},
      {"chisquare", {0.4}, 0.4, 0.8},
      {"f", {5, 20}, 20.0 / 18, 2.0 * 400 * 23 / (5 * 324 * 16)},
      {"gengamma", {2, 1.5, 3}, 3 * g(2) / g(4.0 / 3),
       9 * g(8.0 / 3) / g(4.0 / 3) - std::pow(3 * g(2) / g(4.0 / 3), 2)},
      {"geometric", {0.3}, 1 / 0.3, 0.7 / 0.09},
      {"geometric", {0.9}, 1 / 0.9, 0.1 / 0.81},
      {"gumbel", {1, 2}, 1 + 2 * kEuler, M_PI * M_PI / 6 * 4},
      {"halfnormal", {1, 2}, 1 + 2 * std::sqrt(2 / M_PI), 4 * (1 - 2 / M_PI)},
      {"hypergeometric", {10, 5, 7}, 7 * 10.0 / 15, 7 * (10.0 / 15) * (5.0 / 15) * (8.0 / 14)},
      {"hypergeometric", {500, 700, 300}, 125, 300 * (5.0 / 12) * (7.0 / 12) * (900.0 / 1199)},
      // Standard deviations of 90 and 7000: the ratio-of-uniforms sampler.
      {"hypergeometric", {100000, 300000, 50000}, 12500,
       50000 * 0.25 * 0.75 * (350000.0 / 399999)},
      {"hypergeometric", {400000000, 500000000, 300000000}, 300000000 * 4.0 / 9,
       300000000 * (4.0 / 9) * (5.0 / 9) * (600000000.0 / 899999999)},
      {"invgamma", {6, 2}, 0.4, 4.0 / (25 * 4)},
      {"laplace", {1, 2}, 1, 8},
      {"logistic", {1, 2}, 1, 4 * M_PI * M_PI / 3},
      {"lognormal", {0.5, 0.3}, std::exp(0.5 + 0.045), (std::exp(0.09) - 1) * std::exp(1.09)},
      {"nbinom", {3.5, 0.4}, 5.25, 13.125},
      {"nbinom", {40, 0.02}, 1960, 98000},
      {"pareto", {5, 2}, 2.5, 4.0 * 5 / (16 * 3)},
      {"power", {3}, 0.75, 3.0 / 80},
      {"randint", {2, 9}, 5, 4},
      {"rayleigh", {2}, 2 * std::sqrt(M_PI / 2), (4 - M_PI) / 2 * 4},
      {"t", {10, 1, 2}, 1, 4 * 10.0 / 8},
      {"triangular", {0, 1, 4}, 5.0 / 3, 13.0 / 18},
      {"truncexpon", {2, 1, 3}, 1 + 3 * (1 - 2 * std::exp(-2) / (1 - std::exp(-2))),
       9 * (2 - 8 * std::exp(-2) / (1 - std::exp(-2)) -
            std::pow(1 - 2 * std::exp(-2) / (1 - std::exp(-2)), 2))},
      {"vonmises", {0, 200}, 0, 1 / 200.0 * (1 + 1 / 400.0)},
      {"wald", {2, 3}, 2, 8.0 / 3},
      {"weibull", {1.5}, g(1 + 1 / 1.5), g(1 + 2 / 1.5) - g(1 + 1 / 1.5) * g(1 + 1 / 1.5)},
      {"zipf", {6}, Zeta(5) / Zeta(6), Zeta(4) / Zeta(6) - std::pow(Zeta(5) / Zeta(6), 2)},
  };
  constexpr int64_t kN = 200000;
  for (const Moments& c : cases) {
    std::vector<Var> params;
    const random::Distribution* dist = random::FindDistribution(c.name);
    ASSERT_NE(dist, nullptr) << c.name;
    for (double p : c.params) {
      const bool integer = dist->IsIntegerParam(params.size());
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
  EXPECT_EQ(random_variable("gauss", rng, {}).status().message(),
            "RandomVariable: unknown distribution 'gauss' (known: uniform, normal, integers, "
            "binomial, bernoulli, categorical, poisson, gamma, beta, exponential, dirichlet, "
            "multivariate_normal, permutation, choice, beta_binomial, cauchy, chisquare, f, "
            "gengamma, geometric, gumbel, halfcauchy, halfnormal, hypergeometric, invgamma, "
            "laplace, logistic, lognormal, multinomial, nbinom, pareto, power, randint, "
            "rayleigh, t, triangular, truncexpon, vonmises, wald, weibull, zipf)");
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

// Aesara 2.9.4's op of each distribution (op.name, ndim_supp, ndims_params, dtype, from the
// oracle), as core prints it.
TEST(RandomTest, EveryDistributionIsDeclaredAsAesaras) {
  const std::vector<std::string> expected = {
      "uniform_rv{0, (0, 0), floatX, False}",        "normal_rv{0, (0, 0), floatX, False}",
      "integers_rv{0, (0, 0), int64, False}",        "binomial_rv{0, (0, 0), int64, False}",
      "bernoulli_rv{0, (0,), int64, False}",         "categorical_rv{0, (1,), int64, False}",
      "poisson_rv{0, (0,), int64, False}",           "gamma_rv{0, (0, 0), floatX, False}",
      "beta_rv{0, (0, 0), floatX, False}",           "exponential_rv{0, (0,), floatX, False}",
      "dirichlet_rv{1, (1,), floatX, False}",        "multivariate_normal_rv{1, (1, 2), floatX, False}",
      "permutation_rv{1, (1,), None, False}",        "choice_rv{0, (1, 1, 0), None, False}",
      "beta_binomial_rv{0, (0, 0, 0), int64, False}", "cauchy_rv{0, (0, 0), floatX, False}",
      "chisquare_rv{0, (0,), floatX, False}",        "f_rv{0, (0, 0), floatX, False}",
      "gengamma_rv{0, (0, 0, 0), floatX, False}",    "geometric_rv{0, (0,), int64, False}",
      "gumbel_rv{0, (0, 0), floatX, False}",         "halfcauchy_rv{0, (0, 0), floatX, False}",
      "halfnormal_rv{0, (0, 0), floatX, False}",     "hypergeometric_rv{0, (0, 0, 0), int64, False}",
      "invgamma_rv{0, (0, 0), floatX, False}",       "laplace_rv{0, (0, 0), floatX, False}",
      "logistic_rv{0, (0, 0), floatX, False}",       "lognormal_rv{0, (0, 0), floatX, False}",
      "multinomial_rv{1, (0, 1), int64, False}",     "nbinom_rv{0, (0, 0), int64, False}",
      "pareto_rv{0, (0, 0), floatX, False}",         "power_rv{0, (0,), floatX, False}",
      "randint_rv{0, (0, 0), int64, False}",         "rayleigh_rv{0, (0,), floatX, False}",
      "t_rv{0, (0, 0, 0), floatX, False}",           "triangular_rv{0, (0, 0, 0), floatX, False}",
      "truncexpon_rv{0, (0, 0, 0), floatX, False}",  "vonmises_rv{0, (0, 0), floatX, False}",
      "wald_rv{0, (0, 0), floatX, False}",           "weibull_rv{0, (0,), floatX, False}",
      "zipf_rv{0, (0,), int64, False}",
  };
  std::vector<std::string> names;
  for (const random::Distribution& d : random::Distributions()) {
    absl::StatusOr<OpPtr> op = RandomVariableOp(d.name);
    ASSERT_TRUE(op.ok()) << op.status();
    names.push_back((*op)->Name());
    EXPECT_EQ(d.params.size(), d.ndims_params.size()) << d.name;
    absl::StatusOr<OpPtr> remade = MakeOp("RandomVariable", (*op)->Attrs());
    ASSERT_TRUE(remade.ok()) << remade.status();
    EXPECT_EQ(**remade, **op);
  }
  EXPECT_EQ(names, expected);
}

// Shapes and dtypes: the parameters' broadcast batch, size, and the support of multinomial.
TEST(RandomTest, NewDistributionsHaveAesarasShapesAndDtypes) {
  const Var rng = Rng();
  auto t = random_variable("t", rng, {constant(3.0), dvector("loc"), constant(1.0)});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[1].type().ToString(), "TensorType(float64, (?,))");
  auto hyper = random_variable("hypergeometric", rng, {lvector("g"), constant(int64_t{3}),
                                                       constant(int64_t{2})});
  ASSERT_TRUE(hyper.ok()) << hyper.status();
  EXPECT_EQ((*hyper)[1].type().ToString(), "TensorType(int64, (?,))");
  auto p2 = *Tensor::Of<double>(DType::kFloat64, {3, 2}, {0.5, 0.5, 0.1, 0.9, 1, 0});
  auto mn = random_variable("multinomial", rng, {constant(int64_t{5}), constant(p2)}, {2, 3});
  ASSERT_TRUE(mn.ok()) << mn.status();
  EXPECT_EQ((*mn)[1].type().ToString(), "TensorType(int64, (2, 3, 2))");
  const std::vector<Tensor> out = Eval({rng}, {(*mn)[1]}, {RngState(4)});
  ASSERT_EQ(out[0].shape(), (Shape{2, 3, 2}));
  const int64_t* v = out[0].data<int64_t>();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v[2 * i] + v[2 * i + 1], 5);
  EXPECT_EQ(v[4], 5);  // p = (1, 0)
  auto ns = *Tensor::Of<int64_t>(DType::kInt64, {2}, {3, 4});
  auto mn2 = random_variable("multinomial", rng, {constant(ns), constant(p2)}, {});
  EXPECT_FALSE(mn2.ok());  // batch dims (2,) and (3,) do not broadcast
  auto p1 = *Tensor::Of<double>(DType::kFloat64, {1, 2}, {0.5, 0.5});
  auto mn3 = random_variable("multinomial", rng, {constant(ns), constant(p1)});
  ASSERT_TRUE(mn3.ok()) << mn3.status();
  EXPECT_EQ((*mn3)[1].type().ToString(), "TensorType(int64, (2, 2))");
  absl::StatusOr<ShapeVars> shape = infer_shape((*mn3)[1]);
  ASSERT_TRUE(shape.ok()) << shape.status();
  // permutation has no size: Aesara ignores one, in the type and in the draw.
  auto perm = random_variable("permutation", rng, {constant(int64_t{10})}, {2, 3});
  ASSERT_TRUE(perm.ok()) << perm.status();
  EXPECT_EQ((*perm)[1].type().ToString(), "TensorType(int8, (10,))");
  EXPECT_EQ(Eval({rng}, {(*perm)[1]}, {RngState(4)})[0].shape(), (Shape{10}));
  // Binomial's n may be a float, truncated as NumPy does.
  std::vector<Tensor> b = Draw("binomial", {constant(10.0), constant(1.0)}, {3});
  EXPECT_EQ(Values(b[1]), (std::vector<double>{10, 10, 10}));
  // An integer distribution draws int64 whatever its parameters' dtypes; a floatX one float64.
  EXPECT_EQ(Draw("zipf", {constant(2.0)}, {4})[1].dtype(), DType::kInt64);
  EXPECT_EQ(Draw("power", {constant(int64_t{2})}, {4})[1].dtype(), DType::kFloat64);
}

// P(X <= x) within 6 standard errors, for distributions without moments.
TEST(RandomTest, HeavyTailedDistributionsHaveTheirQuantiles) {
  struct Case {
    const char* name;
    std::vector<double> params;
    double x, cdf;
  };
  const std::vector<Case> cases = {
      {"cauchy", {1, 2}, 3, 0.75},      {"cauchy", {1, 2}, -1, 0.25},
      {"halfcauchy", {1, 2}, 3, 0.5},   {"zipf", {1.5}, 1, 1 / 2.6123753486854883},
      {"pareto", {1, 2}, 4, 0.5},       {"t", {1, 0, 1}, 1, 0.75},
      {"f", {2, 2}, 1, 0.5},            {"vonmises", {0, 2}, 0, 0.5},
      {"weibull", {0.5}, std::log(2) * std::log(2), 0.5},
  };
  constexpr int64_t kN = 200000;
  for (const Case& c : cases) {
    std::vector<Var> params;
    for (double p : c.params) params.push_back(constant(p));
    const std::vector<double> v = Values(Draw(c.name, params, {kN})[1]);
    double below = 0;
    for (double x : v) below += (x <= c.x) / static_cast<double>(kN);
    EXPECT_NEAR(below, c.cdf, 6 * std::sqrt(c.cdf * (1 - c.cdf) / kN)) << c.name;
  }
  // Von Mises: on [-pi, pi], E[cos(X - mu)] = I1(kappa) / I0(kappa).
  const std::vector<double> vm = Values(Draw("vonmises", {constant(3.0), constant(2.0)}, {kN})[1]);
  double mean_cos = 0;
  for (double x : vm) {
    EXPECT_LE(std::fabs(x), M_PI);
    mean_cos += std::cos(x - 3.0) / kN;
  }
  EXPECT_NEAR(mean_cos, std::cyl_bessel_i(1.0, 2.0) / std::cyl_bessel_i(0.0, 2.0), 0.005);
  // Supports: truncexpon on [loc, loc + b scale], hypergeometric between its bounds.
  for (double x : Values(Draw("truncexpon", {constant(2.0), constant(1.0), constant(3.0)}, {kN})[1])) {
    ASSERT_TRUE(x >= 1 && x <= 7) << x;
  }
  for (double x : Values(Draw("hypergeometric", {constant(int64_t{10}), constant(int64_t{5}),
                                                  constant(int64_t{12})}, {10000})[1])) {
    ASSERT_TRUE(x >= 7 && x <= 10) << x;
  }
}

TEST(RandomTest, MultinomialHasItsMoments) {
  constexpr int64_t kN = 100000;
  auto p = *Tensor::Of<double>(DType::kFloat64, {3}, {0.2, 0.3, 0.5});
  const std::vector<double> v =
      Values(Draw("multinomial", {constant(int64_t{40}), constant(p)}, {kN})[1]);
  ASSERT_EQ(v.size(), static_cast<size_t>(3 * kN));
  const double probs[] = {0.2, 0.3, 0.5};
  for (int j = 0; j < 3; ++j) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < kN; ++i) mean += v[3 * i + j] / kN;
    for (int64_t i = 0; i < kN; ++i) var += std::pow(v[3 * i + j] - mean, 2) / (kN - 1);
    const double m = 40 * probs[j], s2 = 40 * probs[j] * (1 - probs[j]);
    EXPECT_NEAR(mean, m, 6 * std::sqrt(s2 / kN)) << j;
    EXPECT_NEAR(var, s2, 0.05 * s2) << j;
  }
}

// Each new distribution's parameter checks: the message names the distribution and parameter.
TEST(RandomTest, NewDistributionsRefuseBadParameters) {
  struct Case {
    const char* name;
    std::vector<double> params;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"beta_binomial", {-1, 1, 1}, "beta_binomial_rv: parameter n must be >= 0, got -1 at index 0"},
      {"beta_binomial", {3, 0, 1}, "beta_binomial_rv: parameter a must be > 0, got 0 at index 0"},
      {"cauchy", {0, -2}, "cauchy_rv: parameter scale must be >= 0, got -2 at index 0"},
      {"chisquare", {0}, "chisquare_rv: parameter df must be > 0, got 0 at index 0"},
      {"f", {1, -1}, "f_rv: parameter dfd must be > 0, got -1 at index 0"},
      {"gengamma", {1, 0, 1}, "gengamma_rv: parameter p must be > 0, got 0 at index 0"},
      {"geometric", {0}, "geometric_rv: parameter p must be in (0, 1], got 0 at index 0"},
      {"gumbel", {0, -1}, "gumbel_rv: parameter scale must be >= 0, got -1 at index 0"},
      {"halfcauchy", {0, -1}, "halfcauchy_rv: parameter scale must be >= 0, got -1 at index 0"},
      {"halfnormal", {0, -1}, "halfnormal_rv: parameter scale must be >= 0, got -1 at index 0"},
      {"hypergeometric", {-1, 2, 1},
       "hypergeometric_rv: parameter ngood must be >= 0, got -1 at index 0"},
      {"hypergeometric", {2, 2, 5},
       "hypergeometric_rv: parameters must be nsample <= ngood + nbad < 1e9"},
      {"invgamma", {1, 0}, "invgamma_rv: parameter scale must be > 0, got 0 at index 0"},
      {"laplace", {0, -1}, "laplace_rv: parameter scale must be >= 0, got -1 at index 0"},
      {"logistic", {0, -1}, "logistic_rv: parameter scale must be >= 0, got -1 at index 0"},
      {"lognormal", {0, -1}, "lognormal_rv: parameter sigma must be >= 0, got -1 at index 0"},
      {"nbinom", {0, 0.5}, "nbinom_rv: parameter n must be > 0, got 0 at index 0"},
      {"nbinom", {1, 1.5}, "nbinom_rv: parameter p must be in (0, 1], got 1.5 at index 0"},
      {"pareto", {0, 1}, "pareto_rv: parameter b must be > 0, got 0 at index 0"},
      {"power", {-1}, "power_rv: parameter a must be > 0, got -1 at index 0"},
      {"randint", {3, 3}, "randint_rv: low >= high"},
      {"rayleigh", {-1}, "rayleigh_rv: parameter scale must be >= 0, got -1 at index 0"},
      {"t", {0, 0, 1}, "t_rv: parameter df must be > 0, got 0 at index 0"},
      {"triangular", {0, 2, 1},
       "triangular_rv: parameters must be left <= mode <= right and left < right"},
      {"truncexpon", {0, 0, 1}, "truncexpon_rv: parameter b must be > 0, got 0 at index 0"},
      {"vonmises", {0, -1}, "vonmises_rv: parameter kappa must be >= 0, got -1 at index 0"},
      {"wald", {1, 0}, "wald_rv: parameter scale must be > 0, got 0 at index 0"},
      {"weibull", {-1}, "weibull_rv: parameter shape must be >= 0, got -1 at index 0"},
      {"zipf", {1}, "zipf_rv: parameter a must be > 1, got 1 at index 0"},
  };
  for (const Case& c : cases) {
    const random::Distribution* dist = random::FindDistribution(c.name);
    ASSERT_NE(dist, nullptr) << c.name;
    const Var rng = Rng();
    std::vector<Var> params;
    for (double p : c.params) {
      const bool integer = dist->IsIntegerParam(params.size());
      params.push_back(integer ? constant(static_cast<int64_t>(p)) : constant(p));
    }
    auto rv = random_variable(c.name, rng, params, {3});
    ASSERT_TRUE(rv.ok()) << rv.status();
    auto f = function({rng}, {(*rv)[1]});
    ASSERT_TRUE(f.ok()) << f.status();
    absl::StatusOr<std::vector<Tensor>> out = (*f)({RngState(1)});
    ASSERT_FALSE(out.ok()) << c.name;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_EQ(out.status().message(), c.message);
  }
  auto p = *Tensor::Of<double>(DType::kFloat64, {3}, {0.7, 0.6, 0});
  const Var rng = Rng();
  auto mn = random_variable("multinomial", rng, {constant(int64_t{4}), constant(p)}, {2});
  auto f = function({rng}, {(*mn)[1]});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)({RngState(1)}).status().message(), "multinomial_rv: sum(p[:-1]) must be <= 1");
  auto nan_n = random_variable("binomial", rng, {constant(NAN), constant(0.5)}, {2});
  auto g = function({rng}, {(*nan_n)[1]});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)({RngState(1)}).status().message(),
            "binomial_rv{0, (0, 0), int64, False}: parameter n must be an integer, got nan at "
            "index 0");
  // integers' and randint's bounds must be integers, as NumPy's.
  EXPECT_FALSE(random_variable("randint", rng, {constant(0.5), constant(3.0)}).ok());
}

}  // namespace
}  // namespace kiln
