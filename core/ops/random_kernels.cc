#include "core/ops/random_kernels.h"

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "core/ops/philox.h"
#include "core/ops/random_samplers.h"
#include "core/ops/sleef_kernels.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/parallel.h"

namespace kiln::philox {

__attribute__((target_clones("avx512f", "avx2", "default"))) void UniformPairs(
    uint64_t key, uint64_t counter, int n, double* a, double* b) {
  uint64_t c0[512], c1[512], c2[512], c3[512];
  for (int k = 0; k < n; ++k) {
    c0[k] = (counter + k) & kLow;
    c1[k] = (counter + k) >> 32;
    c2[k] = c3[k] = 0;
  }
  uint64_t k0 = key & kLow, k1 = key >> 32;
  for (int round = 0; round < 10; ++round, BumpKey(k0, k1)) {
    for (int k = 0; k < n; ++k) Round(c0[k], c1[k], c2[k], c3[k], k0, k1);
  }
  for (int k = 0; k < n; ++k) {
    a[k] = static_cast<double>(static_cast<int64_t>((c0[k] | c1[k] << 32) >> 11) + 1) * 0x1.0p-53;
    b[k] = static_cast<double>(static_cast<int64_t>((c2[k] | c3[k] << 32) >> 11)) * 0x1.0p-53;
  }
}

}  // namespace kiln::philox

namespace kiln::random {
namespace {

// Aesara 2.9.4's RandomVariable instances (aesara.tensor.random.basic): each op's name,
// ndim_supp, ndims_params and dtype as its class declares them, and its parameters' names.
// (random is uniform, negative_binomial is nbinom: Python's instances of the same ops.)
const std::vector<Distribution>& Table() {
  constexpr uint32_t kFirst = 1, kFirstTwo = 3, kAll3 = 7;
  static const std::vector<Distribution> table = {
      {"uniform", 0, {0, 0}, "floatX", {"low", "high"}},
      {"normal", 0, {0, 0}, "floatX", {"loc", "scale"}},
      {"integers", 0, {0, 0}, "int64", {"low", "high"}, kFirstTwo},
      {"binomial", 0, {0, 0}, "int64", {"n", "p"}, kFirst},
      {"bernoulli", 0, {0}, "int64", {"p"}},
      {"categorical", 0, {1}, "int64", {"p"}},
      {"poisson", 0, {0}, "int64", {"lam"}},
      {"gamma", 0, {0, 0}, "floatX", {"shape", "scale"}},
      {"beta", 0, {0, 0}, "floatX", {"alpha", "beta"}},
      {"exponential", 0, {0}, "floatX", {"scale"}},
      {"dirichlet", 1, {1}, "floatX", {"alphas"}},
      {"multivariate_normal", 1, {1, 2}, "floatX", {"mean", "cov"}},
      {"permutation", 1, {1}, "None", {"x"}},
      {"choice", 0, {1, 1, 0}, "None", {"a", "p", "replace"}},
      {"beta_binomial", 0, {0, 0, 0}, "int64", {"n", "a", "b"}, kFirst},
      {"cauchy", 0, {0, 0}, "floatX", {"loc", "scale"}},
      {"chisquare", 0, {0}, "floatX", {"df"}},
      {"f", 0, {0, 0}, "floatX", {"dfn", "dfd"}},
      {"gengamma", 0, {0, 0, 0}, "floatX", {"alpha", "p", "lambd"}},
      {"geometric", 0, {0}, "int64", {"p"}},
      {"gumbel", 0, {0, 0}, "floatX", {"loc", "scale"}},
      {"halfcauchy", 0, {0, 0}, "floatX", {"loc", "scale"}},
      {"halfnormal", 0, {0, 0}, "floatX", {"loc", "scale"}},
      {"hypergeometric", 0, {0, 0, 0}, "int64", {"ngood", "nbad", "nsample"}, kAll3},
      {"invgamma", 0, {0, 0}, "floatX", {"shape", "scale"}},
      {"laplace", 0, {0, 0}, "floatX", {"loc", "scale"}},
      {"logistic", 0, {0, 0}, "floatX", {"loc", "scale"}},
      {"lognormal", 0, {0, 0}, "floatX", {"mean", "sigma"}},
      {"multinomial", 1, {0, 1}, "int64", {"n", "p"}, kFirst, 1},
      {"nbinom", 0, {0, 0}, "int64", {"n", "p"}},
      {"pareto", 0, {0, 0}, "floatX", {"b", "scale"}},
      {"power", 0, {0}, "floatX", {"a"}},
      {"randint", 0, {0, 0}, "int64", {"low", "high"}, kFirstTwo},
      {"rayleigh", 0, {0}, "floatX", {"scale"}},
      {"t", 0, {0, 0, 0}, "floatX", {"df", "loc", "scale"}},
      {"triangular", 0, {0, 0, 0}, "floatX", {"left", "mode", "right"}},
      {"truncexpon", 0, {0, 0, 0}, "floatX", {"b", "loc", "scale"}},
      {"vonmises", 0, {0, 0}, "floatX", {"mu", "kappa"}},
      {"wald", 0, {0, 0}, "floatX", {"mean", "scale"}},
      {"weibull", 0, {0}, "floatX", {"shape"}},
      {"zipf", 0, {0}, "int64", {"a"}},
  };
  return table;
}

// The batch elements of a call, walked in order from `begin`, with each parameter's offset.
class BatchWalker {
 public:
  BatchWalker(const Shape& batch, std::span<const Param> params, int64_t begin)
      : batch_(batch), params_(params), index_(batch.size()), offsets_(params.size()) {
    for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
      index_[d] = begin % batch[d];
      begin /= batch[d];
    }
    for (size_t p = 0; p < params.size(); ++p) {
      for (size_t d = 0; d < batch.size(); ++d)
        offsets_[p] += index_[d] * params[p].batch_strides[d];
    }
  }
  // The offset, in one-draw units, of parameter p at the current element.
  int64_t offset(size_t p) const { return offsets_[p]; }
  void Next() {
    for (int d = static_cast<int>(batch_.size()) - 1; d >= 0; --d) {
      for (size_t p = 0; p < params_.size(); ++p) offsets_[p] += params_[p].batch_strides[d];
      if (++index_[d] < batch_[d]) return;
      for (size_t p = 0; p < params_.size(); ++p) {
        offsets_[p] -= index_[d] * params_[p].batch_strides[d];
      }
      index_[d] = 0;
    }
  }

 private:
  const Shape& batch_;
  std::span<const Param> params_;
  std::vector<int64_t> index_, offsets_;
};

int64_t SuppSize(const Param& p) { return ShapeSize(p.supp_shape); }
const double* F(const Param& p) { return p.values.data<double>(); }
const int64_t* I(const Param& p) { return p.values.data<int64_t>(); }

// An error unless pred holds for every value of parameter k (float64 or int64 values).
absl::Status CheckAll(const Distribution& dist, std::span<const Param> p, size_t k,
                      absl::string_view rule, bool (*pred)(double)) {
  const Tensor& t = p[k].values;
  for (int64_t i = 0, n = t.size(); i < n; ++i) {
    const bool integer = t.dtype() == DType::kInt64;
    const double x = integer ? static_cast<double>(t.data<int64_t>()[i]) : t.data<double>()[i];
    if (!pred(x)) {
      return absl::InvalidArgumentError(absl::StrCat(
          dist.name, "_rv: parameter ", dist.params[k], " must be ", rule, ", got ",
          integer ? absl::StrCat(t.data<int64_t>()[i]) : absl::StrCat(x), " at index ", i));
    }
  }
  return absl::OkStatus();
}

bool NonNegative(double x) { return x >= 0; }
bool Positive(double x) { return x > 0; }
bool Probability(double x) { return x >= 0 && x <= 1; }

// What each parameter must be (NumPy's and SciPy's rules): {distribution, parameter, rule, test}.
struct Rule {
  const char* dist;
  size_t param;
  const char* text;
  bool (*pred)(double);
};
constexpr Rule kRules[] = {
    {"normal", 1, ">= 0", NonNegative},
    {"exponential", 0, ">= 0", NonNegative},
    {"bernoulli", 0, "in [0, 1]", Probability},
    {"poisson", 0, "in [0, 1e10]", [](double x) { return x >= 0 && x <= 1e10; }},
    {"gamma", 0, ">= 0", NonNegative},
    {"gamma", 1, ">= 0", NonNegative},
    {"beta", 0, "> 0", Positive},
    {"beta", 1, "> 0", Positive},
    {"binomial", 0, ">= 0", NonNegative},
    {"binomial", 1, "in [0, 1]", Probability},
    {"dirichlet", 0, "> 0", Positive},
    {"categorical", 0, "in [0, 1]", Probability},
    {"beta_binomial", 0, ">= 0", NonNegative},
    {"beta_binomial", 1, "> 0", Positive},
    {"beta_binomial", 2, "> 0", Positive},
    {"cauchy", 1, ">= 0", NonNegative},
    {"chisquare", 0, "> 0", Positive},
    {"f", 0, "> 0", Positive},
    {"f", 1, "> 0", Positive},
    {"gengamma", 0, "> 0", Positive},
    {"gengamma", 1, "> 0", Positive},
    {"gengamma", 2, "> 0", Positive},
    {"geometric", 0, "in (0, 1]", [](double x) { return x > 0 && x <= 1; }},
    {"gumbel", 1, ">= 0", NonNegative},
    {"halfcauchy", 1, ">= 0", NonNegative},
    {"halfnormal", 1, ">= 0", NonNegative},
    {"hypergeometric", 0, ">= 0", NonNegative},
    {"hypergeometric", 1, ">= 0", NonNegative},
    {"hypergeometric", 2, ">= 0", NonNegative},
    {"invgamma", 0, "> 0", Positive},
    {"invgamma", 1, "> 0", Positive},
    {"laplace", 1, ">= 0", NonNegative},
    {"logistic", 1, ">= 0", NonNegative},
    {"lognormal", 1, ">= 0", NonNegative},
    {"multinomial", 0, ">= 0", NonNegative},
    {"multinomial", 1, "in [0, 1]", Probability},
    {"nbinom", 0, "> 0", Positive},
    {"nbinom", 1, "in (0, 1]", [](double x) { return x > 0 && x <= 1; }},
    {"pareto", 0, "> 0", Positive},
    {"pareto", 1, "> 0", Positive},
    {"power", 0, "> 0", Positive},
    {"rayleigh", 0, ">= 0", NonNegative},
    {"t", 0, "> 0", Positive},
    {"t", 2, ">= 0", NonNegative},
    {"truncexpon", 0, "> 0", Positive},
    {"truncexpon", 2, "> 0", Positive},
    {"vonmises", 1, ">= 0", NonNegative},
    {"wald", 0, "> 0", Positive},
    {"wald", 1, "> 0", Positive},
    {"weibull", 0, ">= 0", NonNegative},
    {"zipf", 0, "> 1", [](double x) { return x > 1; }},
};

absl::Status CheckParams(const Distribution& dist, std::span<const Param> p) {
  for (const Rule& r : kRules) {
    if (absl::string_view(r.dist) == dist.name) {
      RETURN_IF_ERROR(CheckAll(dist, p, r.param, r.text, r.pred));
    }
  }
  return absl::OkStatus();
}

// o[2k] = x + scale * c[k], o[2k + 1] = x + scale * b[k], for the first n values.
__attribute__((target_clones("avx512f", "avx2", "default"))) void Interleave(
    const double* c, const double* b, int64_t n, double x, double scale, double* o) {
  for (int64_t k = 0; k < n / 2; ++k) {
    o[2 * k] = x + scale * c[k];
    o[2 * k + 1] = x + scale * b[k];
  }
  if (n & 1) o[n - 1] = x + scale * c[n / 2];
}

// Draws n normals (or uniforms) two per Philox block, vectorized: out[2k], out[2k + 1] come from
// block (key, counter + k). Parameters a, b (loc and scale, or low and high) broadcast: a
// parameter with batch strides all 0 is read once, the others per element.
void Pairs(bool normal, uint64_t key, uint64_t counter, const Shape& batch,
           std::span<const Param> p, double* out, int64_t n) {
  const bool scalars = std::all_of(p.begin(), p.end(), [](const Param& q) {
    return std::all_of(q.batch_strides.begin(), q.batch_strides.end(),
                       [](int64_t s) { return s == 0; });
  });
  const int64_t pairs = (n + 1) / 2;
  ParallelFor(pairs, 4096, [&](int64_t begin, int64_t end) {
    constexpr int kTile = 512;
    alignas(64) double a[kTile], b[kTile], c[kTile];
    for (int64_t t = begin; t < end; t += kTile) {
      const int m = static_cast<int>(std::min<int64_t>(kTile, end - t));
      philox::UniformPairs(key, counter + t, m, a, b);  // a in (0, 1], b in [0, 1)
      if (normal) {
        sleef::Map(ScalarOpKind::kLog, a, a, m);
        for (int k = 0; k < m; ++k) {
          a[k] = std::sqrt(-2 * a[k]);
          b[k] *= 2 * M_PI;
        }
        sleef::Map(ScalarOpKind::kCos, b, c, m);
        sleef::Map(ScalarOpKind::kSin, b, b, m);
        for (int k = 0; k < m; ++k) {
          c[k] *= a[k];
          b[k] *= a[k];
        }
      } else {
        for (int k = 0; k < m; ++k) c[k] = 1 - a[k];  // [0, 1)
      }
      // Interleave: value 2k is c[k], value 2k + 1 is b[k]; then the parameters.
      const int64_t first = 2 * t, count = std::min<int64_t>(2 * m, n - first);
      double* o = out + first;
      if (scalars) {
        const double x = F(p[0])[0], y = F(p[1])[0];
        Interleave(c, b, count, x, normal ? y : y - x, o);
        continue;
      }
      Interleave(c, b, count, 0, 1, o);
      BatchWalker w(batch, p, first);
      for (int64_t j = 0; j < count; ++j, w.Next()) {
        const double x = F(p[0])[w.offset(0)], y = F(p[1])[w.offset(1)];
        o[j] = normal ? x + y * o[j] : x + (y - x) * o[j];
      }
    }
  });
}

// A distribution whose draw is one value from one stream: fills out[i] = draw(stream_i, params).
template <typename T, typename Draw>
void PerElement(uint64_t key, uint64_t counter, const Shape& batch, std::span<const Param> p,
                T* out, int64_t n, Draw draw) {
  ParallelFor(n, 1024, [&](int64_t begin, int64_t end) {
    BatchWalker w(batch, p, begin);
    for (int64_t i = begin; i < end; ++i, w.Next()) {
      philox::Stream s(key, counter + i);
      out[i] = draw(s, w);
    }
  });
}

// A draw with a support (dirichlet, multivariate_normal, permutation, choice): fills the k values
// of element i from stream i.
template <typename T, typename Draw>
void PerVector(uint64_t key, uint64_t counter, const Shape& batch, std::span<const Param> p, T* out,
               int64_t n, int64_t k, Draw draw) {
  ParallelFor(n, std::max<int64_t>(1, 4096 / std::max<int64_t>(k, 1)),
              [&](int64_t begin, int64_t end) {
                BatchWalker w(batch, p, begin);
                for (int64_t i = begin; i < end; ++i, w.Next()) {
                  philox::Stream s(key, counter + i);
                  draw(s, w, out + i * k);
                }
              });
}

// A with A A^T = cov (from its eigendecomposition, negative eigenvalues taken as 0, as NumPy's
// svd method tolerates a positive-semidefinite cov).
Eigen::MatrixXd CovFactor(const double* cov, int64_t k) {
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> c(cov, k,
                                                                                             k);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(0.5 * (c + c.transpose()));
  return eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal();
}

}  // namespace

const Distribution* FindDistribution(absl::string_view name) {
  for (const Distribution& d : Table()) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

std::span<const Distribution> Distributions() { return Table(); }

absl::Status Sample(const Distribution& dist, uint64_t key, uint64_t counter, const Shape& batch,
                    std::span<const Param> p, Tensor& out) {
  RETURN_IF_ERROR(CheckParams(dist, p));
  const std::string name = dist.name;
  const int64_t n = ShapeSize(batch);
  if (name == "normal" || name == "uniform") {
    Pairs(name == "normal", key, counter, batch, p, out.data<double>(), n);
    return absl::OkStatus();
  }
  // Parameter k at the walker's element, as a double or as an int64.
  auto f = [&](size_t k, const BatchWalker& w) { return F(p[k])[w.offset(k)]; };
  auto i = [&](size_t k, const BatchWalker& w) { return I(p[k])[w.offset(k)]; };
  // A float (real) or an integer distribution, one draw per element.
  auto real = [&](auto draw) { PerElement(key, counter, batch, p, out.data<double>(), n, draw); };
  auto count = [&](auto draw) { PerElement(key, counter, batch, p, out.data<int64_t>(), n, draw); };
  // Parameters that must hold together (low < high...) broadcast, so are checked per element.
  std::atomic<bool> bad = false;
  using S = philox::Stream;
  using W = BatchWalker;
  if (name == "exponential") {
    real([&](S& s, const W& w) { return StandardExponential(s) * f(0, w); });
  } else if (name == "gamma") {
    real([&](S& s, const W& w) { return StandardGamma(s, f(0, w)) * f(1, w); });
  } else if (name == "beta") {
    real([&](S& s, const W& w) { return Beta(s, f(0, w), f(1, w)); });
  } else if (name == "poisson") {
    count([&](S& s, const W& w) { return Poisson(s, f(0, w)); });
  } else if (name == "bernoulli") {
    count([&](S& s, const W& w) { return int64_t{s.Uniform() < f(0, w)}; });
  } else if (name == "binomial") {
    count([&](S& s, const W& w) { return Binomial(s, i(0, w), f(1, w)); });
  } else if (name == "integers" || name == "randint") {
    count([&](S& s, const W& w) {
      const int64_t low = i(0, w), high = i(1, w);
      if (low >= high) {
        bad = true;
        return low;
      }
      return Integer(s, low, high);
    });
    if (bad) return absl::InvalidArgumentError(absl::StrCat(name, "_rv: low >= high"));
  } else if (name == "categorical") {
    const int64_t k = SuppSize(p[0]);
    count([&](S& s, const W& w) {
      const double* probs = F(p[0]) + w.offset(0) * k;
      double u = s.Uniform() * std::accumulate(probs, probs + k, 0.0);
      int64_t j = 0;
      while (j + 1 < k && (u -= probs[j]) >= 0) ++j;
      return j;
    });
  } else if (name == "beta_binomial") {
    count([&](S& s, const W& w) { return Binomial(s, i(0, w), Beta(s, f(1, w), f(2, w))); });
  } else if (name == "cauchy") {
    real([&](S& s, const W& w) { return f(0, w) + f(1, w) * StandardCauchy(s); });
  } else if (name == "halfcauchy") {
    real([&](S& s, const W& w) { return f(0, w) + f(1, w) * std::fabs(StandardCauchy(s)); });
  } else if (name == "halfnormal") {
    real([&](S& s, const W& w) { return f(0, w) + f(1, w) * std::fabs(s.Normal()); });
  } else if (name == "lognormal") {
    real([&](S& s, const W& w) { return std::exp(f(0, w) + f(1, w) * s.Normal()); });
  } else if (name == "chisquare") {
    real([&](S& s, const W& w) { return ChiSquare(s, f(0, w)); });
  } else if (name == "f") {
    real([&](S& s, const W& w) {
      return ChiSquare(s, f(0, w)) / f(0, w) / (ChiSquare(s, f(1, w)) / f(1, w));
    });
  } else if (name == "t") {  // loc + scale * N / sqrt(chi2(df) / df)
    real([&](S& s, const W& w) {
      const double z = s.Normal();
      return f(1, w) + f(2, w) * z / std::sqrt(ChiSquare(s, f(0, w)) / f(0, w));
    });
  } else if (name == "gengamma") {  // lambd * Gamma(alpha / p)^(1 / p)
    real([&](S& s, const W& w) {
      return f(2, w) * std::pow(StandardGamma(s, f(0, w) / f(1, w)), 1 / f(1, w));
    });
  } else if (name == "invgamma") {
    real([&](S& s, const W& w) { return f(1, w) / StandardGamma(s, f(0, w)); });
  } else if (name == "gumbel") {
    real([&](S& s, const W& w) { return f(0, w) - f(1, w) * std::log(PositiveExponential(s)); });
  } else if (name == "laplace") {
    real([&](S& s, const W& w) {
      const double e = StandardExponential(s);
      return f(0, w) + f(1, w) * (s.Next() & 1 ? e : -e);
    });
  } else if (name == "logistic") {  // log(u / (1 - u)) = log(expm1(E)) for E = -log(1 - u)
    real([&](S& s, const W& w) {
      return f(0, w) + f(1, w) * std::log(std::expm1(PositiveExponential(s)));
    });
  } else if (name == "pareto") {  // SciPy's: scale * U^(-1 / b), on [scale, inf)
    real([&](S& s, const W& w) { return f(1, w) * std::exp(StandardExponential(s) / f(0, w)); });
  } else if (name == "power") {  // (1 - exp(-E))^(1 / a), on [0, 1]
    real([&](S& s, const W& w) {
      return std::pow(-std::expm1(-StandardExponential(s)), 1 / f(0, w));
    });
  } else if (name == "rayleigh") {
    real([&](S& s, const W& w) { return f(0, w) * std::sqrt(2 * StandardExponential(s)); });
  } else if (name == "weibull") {
    real([&](S& s, const W& w) {
      return f(0, w) == 0 ? 0.0 : std::pow(StandardExponential(s), 1 / f(0, w));
    });
  } else if (name == "truncexpon") {  // SciPy's: loc + scale * X, X on [0, b] by inversion
    real([&](S& s, const W& w) {
      return f(1, w) + f(2, w) * -std::log1p(s.Uniform() * std::expm1(-f(0, w)));
    });
  } else if (name == "triangular") {
    real([&](S& s, const W& w) {
      const double left = f(0, w), mode = f(1, w), right = f(2, w);
      if (!(left <= mode && mode <= right && left < right)) {
        bad = true;
        return 0.0;
      }
      return Triangular(s, left, mode, right);
    });
    if (bad) {
      return absl::InvalidArgumentError(
          "triangular_rv: parameters must be left <= mode <= right and left < right");
    }
  } else if (name == "vonmises") {
    real([&](S& s, const W& w) { return VonMises(s, f(0, w), f(1, w)); });
  } else if (name == "wald") {
    real([&](S& s, const W& w) { return Wald(s, f(0, w), f(1, w)); });
  } else if (name == "geometric") {
    count([&](S& s, const W& w) { return Geometric(s, f(0, w)); });
  } else if (name == "nbinom") {
    count([&](S& s, const W& w) { return NegativeBinomial(s, f(0, w), f(1, w)); });
  } else if (name == "zipf") {
    count([&](S& s, const W& w) { return Zipf(s, f(0, w)); });
  } else if (name == "hypergeometric") {
    count([&](S& s, const W& w) {
      const int64_t good = i(0, w), bad_ = i(1, w), sample = i(2, w);
      // (good and bad are >= 0: compared so that no sum overflows.)
      if (good >= 1000000000 || bad_ >= 1000000000 - good || sample > good + bad_) {
        bad = true;
        return int64_t{0};
      }
      return Hypergeometric(s, good, bad_, sample);
    });
    if (bad) {
      return absl::InvalidArgumentError(
          "hypergeometric_rv: parameters must be nsample <= ngood + nbad < 1e9");
    }
  } else if (name == "dirichlet") {
    const int64_t k = SuppSize(p[0]);
    PerVector(key, counter, batch, p, out.data<double>(), n, k,
              [&](S& s, const W& w, double* o) {
                double total = 0;
                for (int64_t j = 0; j < k; ++j)
                  total += o[j] = StandardGamma(s, F(p[0])[w.offset(0) * k + j]);
                for (int64_t j = 0; j < k; ++j) o[j] /= total;
              });
  } else if (name == "multinomial") {  // a binomial per category of the draws left
    const int64_t k = SuppSize(p[1]);
    PerVector(key, counter, batch, p, out.data<int64_t>(), n, k,
              [&](S& s, const W& w, int64_t* o) {
                const double* probs = F(p[1]) + w.offset(1) * k;
                int64_t left = i(0, w);
                double mass = 1;
                for (int64_t j = 0; j + 1 < k; ++j) {
                  if (probs[j] > mass + 1e-12) bad = true;
                  o[j] = left > 0 && mass > 0
                             ? Binomial(s, left, std::clamp(probs[j] / mass, 0.0, 1.0))
                             : 0;
                  left -= o[j];
                  mass -= probs[j];
                }
                if (k > 0) o[k - 1] = left;
              });
    if (bad) {
      return absl::InvalidArgumentError("multinomial_rv: sum(p[:-1]) must be <= 1");
    }
  } else if (name == "multivariate_normal") {
    const int64_t k = SuppSize(p[0]);
    const bool one_cov = std::all_of(p[1].batch_strides.begin(), p[1].batch_strides.end(),
                                     [](int64_t s) { return s == 0; });
    const Eigen::MatrixXd shared = one_cov ? CovFactor(F(p[1]), k) : Eigen::MatrixXd();
    PerVector(key, counter, batch, p, out.data<double>(), n, k,
              [&](S& s, const W& w, double* o) {
                const Eigen::MatrixXd a =
                    one_cov ? shared : CovFactor(F(p[1]) + w.offset(1) * k * k, k);
                Eigen::VectorXd z(k);
                for (int64_t j = 0; j < k; ++j) z[j] = s.Normal();
                Eigen::Map<Eigen::VectorXd>(o, k) =
                    Eigen::Map<const Eigen::VectorXd>(F(p[0]) + w.offset(0) * k, k) + a * z;
              });
  } else {
    return absl::UnimplementedError(absl::StrCat(name, "_rv has no sampler"));
  }
  return absl::OkStatus();
}

namespace {

// A vector of [0, n) in a tensor.
Tensor Iota(int64_t n) {
  Tensor t = Tensor::Empty(DType::kInt64, {n});
  std::iota(t.data<int64_t>(), t.data<int64_t>() + n, 0);
  return t;
}

}  // namespace

absl::StatusOr<Tensor> Permutation(uint64_t key, uint64_t counter, int64_t n) {
  Tensor out = Iota(n);
  int64_t* order = out.data<int64_t>();
  philox::Stream s(key, counter);
  InterruptPoller poller;
  for (int64_t i = n - 1; i > 0; --i) {
    std::swap(order[i], order[Integer(s, 0, i + 1)]);
    RETURN_IF_ERROR(poller.Tick());
  }
  return out;
}

absl::StatusOr<Tensor> Choice(uint64_t key, uint64_t counter, int64_t len,
                              std::span<const double> p, bool replace, int64_t n) {
  if (len == 0 && n > 0) return absl::InvalidArgumentError("choice_rv: a must not be empty");
  if (!p.empty() && static_cast<int64_t>(p.size()) != len) {
    return absl::InvalidArgumentError(
        absl::StrCat("choice_rv: a has ", len, " values but p has ", p.size()));
  }
  Tensor cdf_tensor = Tensor::Empty(DType::kFloat64, {static_cast<int64_t>(p.size())});
  double* cdf = cdf_tensor.data<double>();
  double total = 0;
  for (size_t j = 0; j < p.size(); ++j) {
    if (!(p[j] >= 0 && p[j] <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat("choice_rv: p must be in [0, 1], got ", p[j]));
    }
    cdf[j] = total += p[j];
  }
  if (!p.empty() && std::fabs(total - 1) > 1e-8) {
    return absl::InvalidArgumentError(
        absl::StrCat("choice_rv: probabilities do not sum to 1 (", total, ")"));
  }
  if (!replace && n > len) {
    return absl::InvalidArgumentError(absl::StrCat("choice_rv: cannot take a larger sample (", n,
                                                   ") than the population (", len,
                                                   ") when replace=False"));
  }
  Tensor out_tensor = Tensor::Empty(DType::kInt64, {n});
  int64_t* out = out_tensor.data<int64_t>();
  if (replace) {
    ParallelFor(n, 1024, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        philox::Stream s(key, counter + i);
        out[i] = p.empty() ? Integer(s, 0, len)
                           : std::min<int64_t>(
                                 len - 1,
                                 std::upper_bound(cdf, cdf + p.size(), s.Uniform() * total) - cdf);
      }
    });
    return out_tensor;
  }
  philox::Stream s(key, counter);
  InterruptPoller poller;
  if (p.empty()) {  // a partial Fisher-Yates shuffle
    Tensor order_tensor = Iota(len);
    int64_t* order = order_tensor.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      std::swap(order[i], order[Integer(s, i, len)]);
      out[i] = order[i];
      RETURN_IF_ERROR(poller.Tick());
    }
    return out_tensor;
  }
  // Draw by the weights left, then remove the draw: len steps a draw, polled as it goes.
  Tensor w_tensor = Tensor::Empty(DType::kFloat64, {len});
  double* w = w_tensor.data<double>();
  std::copy(p.begin(), p.end(), w);
  for (int64_t i = 0; i < n; ++i) {
    double u = s.Uniform() * std::accumulate(w, w + len, 0.0);
    int64_t j = 0;
    while (j + 1 < len && (w[j] == 0 || (u -= w[j]) >= 0)) ++j;
    if (w[j] == 0) {
      return absl::InvalidArgumentError("choice_rv: fewer non-zero entries in p than size");
    }
    out[i] = j;
    w[j] = 0;
    RETURN_IF_ERROR(poller.Tick(2 * len));
  }
  return out_tensor;
}

}  // namespace kiln::random
