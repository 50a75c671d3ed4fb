// One draw of each scalar distribution from a Philox stream (the algorithms NumPy's Generator
// uses where they are short: Marsaglia-Tsang gamma, PTRS Poisson, inversion and Devroye's
// beta splitting for binomials, Lemire's bounded integers, Best-Fisher von Mises, Devroye's
// Zipf, Michael-Schucany-Haas Wald; inversion from the mode or Stadlober's ratio of uniforms for
// hypergeometrics). The others are
// transforms of these, in random_kernels.cc, which alone includes this file.
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


// Exponential(1): -log of a uniform on (0, 1].
inline double StandardExponential(philox::Stream& s) { return -std::log(s.OpenUniform()); }

// An exponential that is never 0 (for the logs of gumbel and logistic).
inline double PositiveExponential(philox::Stream& s) {
  for (;;) {
    const double e = StandardExponential(s);
    if (e > 0) return e;
  }
}

// Chi-square(df) = 2 Gamma(df / 2).
inline double ChiSquare(philox::Stream& s, double df) { return 2 * StandardGamma(s, df / 2); }

// Standard Cauchy: the tangent of a uniform angle in (-pi/2, pi/2).
inline double StandardCauchy(philox::Stream& s) { return std::tan(M_PI * (s.OpenUniform() - 0.5)); }

// Geometric(p) on {1, 2, ...}: the ceiling of an exponential over -log(1 - p).
inline int64_t Geometric(philox::Stream& s, double p) {
  if (p >= 1) return 1;
  const double x = std::ceil(StandardExponential(s) / -std::log1p(-p));
  return x < 1 ? 1 : (x >= 0x1p63 ? INT64_MAX : static_cast<int64_t>(x));
}

// Hypergeometric by Stadlober's ratio of uniforms (HRUA, as NumPy's for large samples): a
// constant expected number of tries whatever the counts, each with four lgammas.
inline int64_t HypergeometricRatioOfUniforms(philox::Stream& s, int64_t good, int64_t bad,
                                             int64_t sample) {
  const int64_t total = good + bad, n = std::min(sample, total - sample);
  const int64_t small = std::min(good, bad), large = std::max(good, bad);
  const double p = static_cast<double>(small) / total, q = static_cast<double>(large) / total;
  const double a = n * p + 0.5;
  const double var = static_cast<double>(total - n) * n * p * q / static_cast<double>(total - 1);
  const double c = std::sqrt(var + 0.5), h = 1.7155277699214135 * c + 0.8989161620588988;
  auto log_weight = [&](int64_t k) {  // log of k! (small - k)! (n - k)! (large - n + k)!
    return std::lgamma(k + 1.0) + std::lgamma(small - k + 1.0) + std::lgamma(n - k + 1.0) +
           std::lgamma(large - n + k + 1.0);
  };
  const int64_t mode = static_cast<int64_t>(
      std::floor((static_cast<double>(n) + 1) * (small + 1) / (static_cast<double>(total) + 2)));
  const double g = log_weight(mode);
  const double bound = std::min(std::min<double>(n, small) + 1, std::floor(a + 16 * c));
  int64_t k;
  for (;;) {
    const double u = s.Uniform(), v = s.Uniform();
    const double x = a + h * (v - 0.5) / u;
    if (x < 0 || x >= bound) continue;  // outside the hat
    k = static_cast<int64_t>(std::floor(x));
    const double t = g - log_weight(k);
    if (u * (4 - u) - 3 <= t) break;  // surely under the density
    if (u * (u - t) >= 1) continue;   // surely over it
    if (2 * std::log(u) <= t) break;
  }
  if (good > bad) k = n - k;       // k counted the smaller kind
  if (n < sample) k = good - k;    // n counted the complement of the sample
  return k;
}

// Hypergeometric(ngood, nbad, nsample): inversion outward from the mode, O(standard deviation)
// steps, the mode's probability from lgamma and its neighbours' by the pmf's ratio; by the ratio
// of uniforms when the standard deviation passes 64, so that no draw takes more than a few steps.
inline int64_t Hypergeometric(philox::Stream& s, int64_t good, int64_t bad, int64_t sample) {
  const int64_t lo = std::max<int64_t>(0, sample - bad), hi = std::min(sample, good);
  if (lo == hi) return lo;
  {
    const double total = static_cast<double>(good) + static_cast<double>(bad);
    const double var = sample * (good / total) * (bad / total) * (total - sample) / (total - 1);
    if (var > 64.0 * 64.0) return HypergeometricRatioOfUniforms(s, good, bad, sample);
  }
  if (lo == hi) return lo;
  const double g = good, b = bad, n = sample, total = g + b;
  auto log_choose = [](double a, double k) {
    return std::lgamma(a + 1) - std::lgamma(k + 1) - std::lgamma(a - k + 1);
  };
  const int64_t mode = std::clamp<int64_t>(
      static_cast<int64_t>(std::floor((n + 1) * (g + 1) / (total + 2))), lo, hi);
  const double pmode =
      std::exp(log_choose(g, mode) + log_choose(b, n - mode) - log_choose(total, n));
  // p(k + 1) / p(k) and p(k - 1) / p(k).
  auto up = [&](double k) { return (g - k) * (n - k) / ((k + 1) * (b - n + k + 1)); };
  auto down = [&](double k) { return k * (b - n + k) / ((g - k + 1) * (n - k + 1)); };
  for (;;) {
    double u = s.Uniform() - pmode;
    if (u < 0) return mode;
    int64_t below = mode, above = mode;
    double pbelow = pmode, pabove = pmode;
    while (below > lo || above < hi) {
      if (above < hi) {
        pabove *= up(static_cast<double>(above++));
        if ((u -= pabove) < 0) return above;
      }
      if (below > lo) {
        pbelow *= down(static_cast<double>(below--));
        if ((u -= pbelow) < 0) return below;
      }
    }
    // Rounding left a sliver of mass unassigned: draw again.
  }
}

// Von Mises(mu, kappa) on [-pi, pi] (Best and Fisher 1979; a wrapped normal for huge kappa).
inline double VonMises(philox::Stream& s, double mu, double kappa) {
  auto wrap = [](double x) { return std::remainder(x, 2 * M_PI); };
  if (kappa < 1e-8) return M_PI * (2 * s.Uniform() - 1);
  if (kappa > 1e6) return wrap(mu + s.Normal() / std::sqrt(kappa));
  double r;
  if (kappa < 1e-5) {
    r = 1 / kappa + kappa;
  } else {
    const double t = 1 + std::sqrt(1 + 4 * kappa * kappa), rho = (t - std::sqrt(2 * t)) / (2 * kappa);
    r = (1 + rho * rho) / (2 * rho);
  }
  double w;
  for (;;) {
    const double z = std::cos(M_PI * s.Uniform());
    w = (1 + r * z) / (r + z);
    const double y = kappa * (r - w), v = s.OpenUniform();
    if (y * (2 - y) - v >= 0 || std::log(y / v) + 1 - y >= 0) break;
  }
  const double angle = s.Uniform() < 0.5 ? -std::acos(std::clamp(w, -1.0, 1.0))
                                         : std::acos(std::clamp(w, -1.0, 1.0));
  return wrap(angle + mu);
}

// Wald (inverse Gaussian) with mean m and scale (shape) l (Michael, Schucany and Haas 1976).
inline double Wald(philox::Stream& s, double m, double l) {
  const double n = s.Normal(), y = m * n * n;
  const double x = m + m / (2 * l) * (y - std::sqrt(4 * l * y + y * y));
  return s.Uniform() <= m / (m + x) ? x : m * m / x;
}

// Zipf(a), a > 1, on {1, 2, ...} (Devroye 1986, the rejection NumPy uses).
inline int64_t Zipf(philox::Stream& s, double a) {
  const double am1 = a - 1, b = std::pow(2.0, am1);
  for (;;) {
    const double u = s.OpenUniform(), v = s.Uniform();
    const double x = std::floor(std::pow(u, -1 / am1));
    if (!(x >= 1) || x >= 0x1p63) continue;
    const double t = std::pow(1 + 1 / x, am1);
    if (v * x * (t - 1) / (b - 1) <= t / b) return static_cast<int64_t>(x);
  }
}

// Triangular(left, mode, right), left < right, by inversion.
inline double Triangular(philox::Stream& s, double left, double mode, double right) {
  const double base = right - left, left_base = mode - left, right_base = right - mode;
  const double u = s.Uniform();
  return u <= left_base / base ? left + std::sqrt(u * left_base * base)
                               : right - std::sqrt((1 - u) * right_base * base);
}

// Negative binomial(n, p): failures before the n-th success, a Poisson of a Gamma.
inline int64_t NegativeBinomial(philox::Stream& s, double n, double p) {
  if (p >= 1) return 0;
  return Poisson(s, std::min(StandardGamma(s, n) * (1 - p) / p, 1e18));  // int64 counts
}

}  // namespace kiln::random

#endif  // KILN_CORE_OPS_RANDOM_SAMPLERS_H_
