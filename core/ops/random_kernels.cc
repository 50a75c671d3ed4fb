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

namespace kiln::random {
namespace {

const std::vector<Distribution>& Table() {
  static const std::vector<Distribution> table = {
      {"uniform", 0, {0, 0}, "floatX"}, {"normal", 0, {0, 0}, "floatX"},
      {"integers", 0, {0, 0}, "int64"}, {"binomial", 0, {0, 0}, "int64"},
      {"bernoulli", 0, {0}, "int64"},   {"categorical", 0, {1}, "int64"},
      {"poisson", 0, {0}, "int64"},     {"gamma", 0, {0, 0}, "floatX"},
      {"beta", 0, {0, 0}, "floatX"},    {"exponential", 0, {0}, "floatX"},
      {"dirichlet", 1, {1}, "floatX"},  {"multivariate_normal", 1, {1, 2}, "floatX"},
      {"permutation", 1, {1}, "None"},  {"choice", 0, {1, 1, 0}, "None"},
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

// An error unless pred holds for every value of parameter `which`.
template <typename T, typename Pred>
absl::Status CheckAll(const Param& p, absl::string_view dist, absl::string_view which,
                      absl::string_view rule, Pred pred) {
  const T* v = p.values.data<T>();
  for (int64_t i = 0, n = p.values.size(); i < n; ++i) {
    if (!pred(v[i])) {
      return absl::InvalidArgumentError(absl::StrCat(dist, "_rv: parameter ", which, " must be ",
                                                     rule, ", got ", v[i], " at index ", i));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckParams(const Distribution& dist, std::span<const Param> p) {
  const std::string name = dist.name;
  auto non_negative = [](double x) { return x >= 0; };
  auto positive = [](double x) { return x > 0; };
  auto probability = [](double x) { return x >= 0 && x <= 1; };
  if (name == "normal") return CheckAll<double>(p[1], name, "scale", ">= 0", non_negative);
  if (name == "exponential") return CheckAll<double>(p[0], name, "scale", ">= 0", non_negative);
  if (name == "bernoulli") return CheckAll<double>(p[0], name, "p", "in [0, 1]", probability);
  if (name == "poisson") {
    return CheckAll<double>(p[0], name, "lam", "in [0, 1e10]",
                            [](double x) { return x >= 0 && x <= 1e10; });
  }
  if (name == "gamma") {
    RETURN_IF_ERROR(CheckAll<double>(p[0], name, "shape", ">= 0", non_negative));
    return CheckAll<double>(p[1], name, "scale", ">= 0", non_negative);
  }
  if (name == "beta") {
    RETURN_IF_ERROR(CheckAll<double>(p[0], name, "alpha", "> 0", positive));
    return CheckAll<double>(p[1], name, "beta", "> 0", positive);
  }
  if (name == "binomial") {
    RETURN_IF_ERROR(CheckAll<int64_t>(p[0], name, "n", ">= 0", [](int64_t x) { return x >= 0; }));
    return CheckAll<double>(p[1], name, "p", "in [0, 1]", probability);
  }
  if (name == "dirichlet") return CheckAll<double>(p[0], name, "alphas", "> 0", positive);
  if (name == "categorical") return CheckAll<double>(p[0], name, "p", "in [0, 1]", probability);
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
  auto f = [&](size_t k, const BatchWalker& w) { return F(p[k])[w.offset(k)]; };
  if (name == "exponential") {
    PerElement(key, counter, batch, p, out.data<double>(), n,
               [&](philox::Stream& s, auto& w) { return -std::log(s.OpenUniform()) * f(0, w); });
  } else if (name == "gamma") {
    PerElement(key, counter, batch, p, out.data<double>(), n,
               [&](philox::Stream& s, auto& w) { return StandardGamma(s, f(0, w)) * f(1, w); });
  } else if (name == "beta") {
    PerElement(key, counter, batch, p, out.data<double>(), n,
               [&](philox::Stream& s, auto& w) { return Beta(s, f(0, w), f(1, w)); });
  } else if (name == "poisson") {
    PerElement(key, counter, batch, p, out.data<int64_t>(), n,
               [&](philox::Stream& s, auto& w) { return Poisson(s, f(0, w)); });
  } else if (name == "bernoulli") {
    PerElement(key, counter, batch, p, out.data<int64_t>(), n,
               [&](philox::Stream& s, auto& w) { return int64_t{s.Uniform() < f(0, w)}; });
  } else if (name == "binomial") {
    PerElement(key, counter, batch, p, out.data<int64_t>(), n, [&](philox::Stream& s, auto& w) {
      return Binomial(s, I(p[0])[w.offset(0)], f(1, w));
    });
  } else if (name == "integers") {
    std::atomic<bool> empty_range = false;  // low and high broadcast, so checked per element
    PerElement(key, counter, batch, p, out.data<int64_t>(), n, [&](philox::Stream& s, auto& w) {
      const int64_t low = I(p[0])[w.offset(0)], high = I(p[1])[w.offset(1)];
      if (low >= high) {
        empty_range = true;
        return low;
      }
      return Integer(s, low, high);
    });
    if (empty_range) return absl::InvalidArgumentError("integers_rv: low >= high");
  } else if (name == "categorical") {
    const int64_t k = SuppSize(p[0]);
    PerElement(key, counter, batch, p, out.data<int64_t>(), n, [&](philox::Stream& s, auto& w) {
      const double* probs = F(p[0]) + w.offset(0) * k;
      double u = s.Uniform() * std::accumulate(probs, probs + k, 0.0);
      int64_t j = 0;
      while (j + 1 < k && (u -= probs[j]) >= 0) ++j;
      return j;
    });
  } else if (name == "dirichlet") {
    const int64_t k = SuppSize(p[0]);
    PerVector(key, counter, batch, p, out.data<double>(), n, k,
              [&](philox::Stream& s, auto& w, double* o) {
                double total = 0;
                for (int64_t j = 0; j < k; ++j)
                  total += o[j] = StandardGamma(s, F(p[0])[w.offset(0) * k + j]);
                for (int64_t j = 0; j < k; ++j) o[j] /= total;
              });
  } else if (name == "multivariate_normal") {
    const int64_t k = SuppSize(p[0]);
    const bool one_cov = std::all_of(p[1].batch_strides.begin(), p[1].batch_strides.end(),
                                     [](int64_t s) { return s == 0; });
    const Eigen::MatrixXd shared = one_cov ? CovFactor(F(p[1]), k) : Eigen::MatrixXd();
    PerVector(key, counter, batch, p, out.data<double>(), n, k,
              [&](philox::Stream& s, auto& w, double* o) {
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
