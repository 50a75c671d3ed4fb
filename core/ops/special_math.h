// Scalar special functions that the C++ standard library lacks, for float and double: the stable
// sigmoid, softplus and log1mexp, erfcx, erfinv, erfcinv, digamma (the last three by Boost.Math,
// in special_scalar.cc) and the modified Bessel functions i0 and i1.
#ifndef KILN_CORE_OPS_SPECIAL_MATH_H_
#define KILN_CORE_OPS_SPECIAL_MATH_H_

#include <cmath>
#include <limits>
#include <numbers>

namespace kiln::special {

// Boost.Math's digamma, erf_inv and erfc_inv (special_scalar.cc), for the templates below.
double BoostDigamma(double x);
double BoostErfInv(double y);
double BoostErfcInv(double y);

// 1 / (1 + exp(-x)) without overflow for large |x|.
template <typename T>
T Sigmoid(T x) {
  if (x >= 0) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}

// Euler's gamma function with scipy.special.gamma's poles: +inf at 0, -0 and the negative integers.
template <typename T>
T Gamma(T x) {
  if (x <= 0 && x == std::floor(x)) return std::numeric_limits<T>::infinity();
  return std::tgamma(x);
}

// log(1 + exp(x)) by Aesara's piecewise form (exact where exp would overflow or underflow).
template <typename T>
T Softplus(T x) {
  if (x < T(-37)) return std::exp(x);
  if (x < T(18)) return std::log1p(std::exp(x));
  if (x < T(33.3)) return x + std::exp(-x);
  return x;
}

// log(1 - exp(x)) for x <= 0, accurate near 0 and for very negative x.
template <typename T>
T Log1mexp(T x) {
  if (x < -std::numbers::ln2_v<T>) return std::log1p(-std::exp(x));
  return std::log(-std::expm1(x));
}

// exp(x^2) with the rounding error of x^2 carried (fma): exp(hi + lo) = exp(hi) (1 + lo).
inline double ExpOfSquare(double x) {
  const double hi = x * x;
  return std::exp(hi) * (1 + std::fma(x, x, -hi));
}

// exp(x^2) * erfc(x), in double: below x = 2 the product, beyond Laplace's continued fraction
// erfcx(x) = 1 / (sqrt(pi) (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))))), 60 terms (its
// error there is below 1e-24); 2 exp(x^2) - erfcx(-x) for x < 0 (inf from -26.7).
template <typename T>
T Erfcx(T value) {
  const double x = double(value);
  if (std::isnan(x)) return static_cast<T>(x);
  if (x < 0) {
    if (x < -26.7) return std::numeric_limits<T>::infinity();
    return static_cast<T>(2 * ExpOfSquare(x) - Erfcx(-x));
  }
  if (x < 2) return static_cast<T>(ExpOfSquare(x) * std::erfc(x));
  if (std::isinf(x)) return T(0);
  double t = x;
  for (int n = 60; n > 0; --n) t = x + 0.5 * n / t;
  return static_cast<T>(std::numbers::inv_sqrtpi / t);
}

// The inverse of erf on (-1, 1) (Boost.Math's erf_inv, in double).
template <typename T>
T Erfinv(T y) {
  const double a = double(y);
  if (!(a >= -1 && a <= 1)) return std::numeric_limits<T>::quiet_NaN();
  if (a == 1) return std::numeric_limits<T>::infinity();
  if (a == -1) return -std::numeric_limits<T>::infinity();
  return static_cast<T>(BoostErfInv(a));
}

// The inverse of erfc on (0, 2) (Boost.Math's erfc_inv, in double).
template <typename T>
T Erfcinv(T y) {
  const double a = double(y);
  if (!(a >= 0 && a <= 2)) return std::numeric_limits<T>::quiet_NaN();
  if (a == 0) return std::numeric_limits<T>::infinity();
  if (a == 2) return -std::numeric_limits<T>::infinity();
  return static_cast<T>(BoostErfcInv(a));
}

// The digamma function psi = d/dx log(gamma(x)) (Boost.Math's, in double, accurate near its
// positive root): -inf at +0 (+inf at -0) and NaN at the negative integers, as scipy.special.psi.
template <typename T>
T Digamma(T value) {
  const double x = double(value);
  if (std::isnan(x) || x == -std::numeric_limits<double>::infinity()) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  if (x == 0) return static_cast<T>(-std::copysign(std::numeric_limits<double>::infinity(), x));
  if (x < 0 && x == std::floor(x)) return std::numeric_limits<T>::quiet_NaN();
  if (x == std::numeric_limits<double>::infinity()) return static_cast<T>(x);
  return static_cast<T>(BoostDigamma(x));
}

// I_n(x) for n = 0 or 1 and x >= 0, in long double: below x = 25 the power series
// sum (x/2)^(2k+n) / (k! (k+n)!), whose terms are all positive; beyond, the asymptotic expansion
// e^x / sqrt(2 pi x) * sum_k prod_{j<=k} -(4n^2 - (2j-1)^2) / (8 j x), whose smallest term there
// is below 1e-21. Rounded once to double, the result is within about half an ulp.
inline long double BesselIOfAbs(int n, long double x) {
  if (x <= 25) {
    const long double q = x * x / 4;
    long double term = n == 0 ? 1.0L : x / 2, sum = term;
    for (int k = 1; term > sum * 1e-22L; ++k) {
      term *= q / (k * (k + n));
      sum += term;
    }
    return sum;
  }
  if (std::isinf(x)) return x;
  const long double mu = 4.0L * n * n;
  long double term = 1, sum = 1;
  for (int k = 1; k < 100 && std::fabs(term) > 1e-22L; ++k) {
    const long double next = -term * (mu - (2.0L * k - 1) * (2.0L * k - 1)) / (8.0L * k * x);
    if (std::fabs(next) >= std::fabs(term)) break;  // past the smallest term the series diverges
    term = next;
    sum += term;
  }
  return std::exp(x) / std::sqrt(2 * std::numbers::pi_v<long double> * x) * sum;
}

// Past this |x|, scipy.special.i0 and i1 (Cephes: e^x times a series) overflow to inf, although
// I_n is finite up to 713.98: Kiln gives Aesara's (SciPy's) numbers there.
inline constexpr double kBesselIOverflow = 709.782712893384;  // log(DBL_MAX)

// The modified Bessel function of the first kind of order 0 (scipy.special.i0): even, 1 at 0,
// +inf past |x| = kBesselIOverflow.
inline double BesselI0(double x) {
  if (std::isnan(x)) return x;
  if (std::fabs(x) > kBesselIOverflow) return std::numeric_limits<double>::infinity();
  return static_cast<double>(BesselIOfAbs(0, std::fabs(x)));
}

// The modified Bessel function of the first kind of order 1 (scipy.special.i1): odd, so
// i1(-0.0) is -0.0.
inline double BesselI1(double x) {
  if (std::isnan(x)) return x;
  if (std::fabs(x) > kBesselIOverflow) {
    return std::copysign(std::numeric_limits<double>::infinity(), x);
  }
  return std::copysign(static_cast<double>(BesselIOfAbs(1, std::fabs(x))), x);
}

}  // namespace kiln::special

#endif  // KILN_CORE_OPS_SPECIAL_MATH_H_
