// One draw of each scalar distribution from a Philox stream (the algorithms NumPy's Generator
// uses where they are short: Marsaglia-Tsang gamma, PTRS Poisson, inversion and Devroye's
// beta splitting for binomials, Lemire's bounded integers). Internal to random_kernels.cc.
#ifndef KILN_CORE_OPS_RANDOM_SAMPLERS_H_
#define KILN_CORE_OPS_RANDOM_SAMPLERS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/ops/philox.h"

namespace kiln::random {

// Gamma(shape a, scale 1), a >= 0 (Marsaglia and Tsang 2000; a < 1 by Gamma(a + 1) * U^(1/a)).
inline double StandardGamma(philox::Stream& s, double a) {
  if (a <= 0) return 0;
  double boost = 1;
  if (a < 1) {
    boost = std::pow(s.OpenUniform(), 1 / a);
    a += 1;
  }
  const double d = a - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    const double x = s.Normal();
    double v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = s.OpenUniform();
    if (u < 1 - 0.0331 * x * x * x * x || std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) {
      return boost * d * v;
    }
  }
}

// Beta(a, b) as the ratio of gammas.
inline double Beta(philox::Stream& s, double a, double b) {
  const double x = StandardGamma(s, a), y = StandardGamma(s, b);
  return x + y > 0 ? x / (x + y) : (s.Uniform() < a / (a + b) ? 1.0 : 0.0);
}

// Poisson(lam), 0 <= lam: multiplication below 10, else Hormann's PTRS (1993).
inline int64_t Poisson(philox::Stream& s, double lam) {
  if (lam < 10) {
    const double limit = std::exp(-lam);
    int64_t k = 0;
    for (double prod = s.Uniform(); prod > limit; prod *= s.Uniform()) ++k;
    return k;
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = s.Uniform() - 0.5, v = s.Uniform(), us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return static_cast<int64_t>(k);
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
        -lam + k * loglam - std::lgamma(k + 1)) {
      return static_cast<int64_t>(k);
    }
  }
}

// Binomial(n, p) by inversion, for n * min(p, 1 - p) small.
inline int64_t BinomialInversion(philox::Stream& s, int64_t n, double p) {
  const bool flip = p > 0.5;
  if (flip) p = 1 - p;
  const double q = 1 - p, ratio = p / q;
  const double bound = std::min<double>(n, n * p + 10 * std::sqrt(n * p * q + 1));
  for (;;) {
    double px = std::pow(q, static_cast<double>(n)), u = s.Uniform();
    int64_t x = 0;
    while (u > px && x <= bound) {
      u -= px;
      ++x;
      px *= (n - x + 1) * ratio / x;
    }
    if (x <= bound) return flip ? n - x : x;
  }
}

// Binomial(n, p): Devroye's splitting on the median order statistic (Beta) until n * p is small,
// then inversion: O(log n) steps, exact.
inline int64_t Binomial(philox::Stream& s, int64_t n, double p) {
  int64_t count = 0;
  while (n > 0 && n * std::min(p, 1 - p) >= 30) {
    const int64_t i = (n + 1) / 2;
    const double y = Beta(s, static_cast<double>(i), static_cast<double>(n + 1 - i));
    if (y <= p) {  // the i smallest of n uniforms are below p; the rest are uniform on (y, 1)
      count += i;
      n -= i;
      p = (p - y) / (1 - y);
    } else {  // the i - 1 below y are uniform on (0, y)
      n = i - 1;
      p = p / y;
    }
  }
  return count + (n > 0 ? BinomialInversion(s, n, std::clamp(p, 0.0, 1.0)) : 0);
}

// An integer in [low, high), high > low (Lemire 2019: unbiased, one multiply in the common case).
inline int64_t Integer(philox::Stream& s, int64_t low, int64_t high) {
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  unsigned __int128 m = static_cast<unsigned __int128>(s.Next()) * range;
  if (static_cast<uint64_t>(m) < range) {
    const uint64_t threshold = (0 - range) % range;
    while (static_cast<uint64_t>(m) < threshold) {
      m = static_cast<unsigned __int128>(s.Next()) * range;
    }
  }
  return static_cast<int64_t>(static_cast<uint64_t>(low) + static_cast<uint64_t>(m >> 64));
}

}  // namespace kiln::random

#endif  // KILN_CORE_OPS_RANDOM_SAMPLERS_H_
