// Scalar special functions that the C++ standard library lacks, for float and double: the stable
// sigmoid, softplus and log1mexp, erfcx, erfinv, erfcinv, digamma and the modified Bessel
// functions i0 and i1.
#ifndef KILN_CORE_OPS_SPECIAL_MATH_H_
#define KILN_CORE_OPS_SPECIAL_MATH_H_

#include <cmath>
#include <limits>
#include <numbers>

namespace kiln::special {

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

// exp(x^2) * erfc(x), finite where both factors would overflow or underflow.
template <typename T>
T Erfcx(T x) {
  if (x < T(0)) {
    if (x < T(-26.7)) return std::numeric_limits<T>::infinity();
    return T(2) * std::exp(x * x) - Erfcx(-x);
  }
  if (x < T(10)) return static_cast<T>(std::exp(double(x) * x) * std::erfc(double(x)));
  // Asymptotic series 1/(x sqrt(pi)) * sum (-1)^k (2k-1)!! / (2x^2)^k, converging to double
  // precision for x >= 10 within 30 terms.
  const double inv = 1.0 / (2.0 * double(x) * x);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 30 && std::fabs(term) > 1e-18; ++k) {
    term *= -(2 * k - 1) * inv;
    sum += term;
  }
  return static_cast<T>(sum / (double(x) * std::sqrt(std::numbers::pi)));
}

// The inverse of erf on (-1, 1): Giles' approximation refined by Newton steps on erf.
template <typename T>
T Erfinv(T y) {
  const double a = double(y);
  if (!(a >= -1 && a <= 1)) return std::numeric_limits<T>::quiet_NaN();
  if (a == 1) return std::numeric_limits<T>::infinity();
  if (a == -1) return -std::numeric_limits<T>::infinity();
  double w = -std::log((1.0 - a) * (1.0 + a)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941}) {
      x = c + x * w;
    }
  } else {
    w = std::sqrt(w) - 3.0;
    x = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682}) {
      x = c + x * w;
    }
  }
  x *= a;
  const double two_over_sqrt_pi = 2.0 / std::sqrt(std::numbers::pi);
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - a) / (two_over_sqrt_pi * std::exp(-x * x));
  return static_cast<T>(x);
}

// The inverse of erfc on (0, 2); Newton steps on log(erfc) keep tiny arguments accurate.
template <typename T>
T Erfcinv(T y) {
  const double a = double(y);
  if (!(a >= 0 && a <= 2)) return std::numeric_limits<T>::quiet_NaN();
  if (a == 0) return std::numeric_limits<T>::infinity();
  if (a == 2) return -std::numeric_limits<T>::infinity();
  if (a > 0.0625) return static_cast<T>(Erfinv(1.0 - a));
  // erfc(x) ~ exp(-x^2) / (x sqrt(pi)): a fixed point for the start, then Newton on
  // f(x) = log(erfc(x)) - log(a), f'(x) = -2 / (sqrt(pi) erfcx(x)).
  double x = std::sqrt(-std::log(a));
  for (int i = 0; i < 4; ++i) x = std::sqrt(-std::log(a * x * std::sqrt(std::numbers::pi)));
  for (int i = 0; i < 4; ++i) {
    const double ex = Erfcx(x);
    const double f = std::log(ex) - x * x - std::log(a);
    x += f * std::sqrt(std::numbers::pi) * ex / 2.0;
  }
  return static_cast<T>(x);
}

// The digamma function psi = d/dx log(gamma(x)): -inf at +0 (+inf at -0) and NaN at the
// negative integers, as scipy.special.psi.
template <typename T>
T Digamma(T value) {
  double x = double(value);
  if (std::isnan(x) || x == -std::numeric_limits<double>::infinity()) {
    return std::numeric_limits<T>::quiet_NaN();
  }
  if (x == 0) return static_cast<T>(-std::copysign(std::numeric_limits<double>::infinity(), x));
  if (x < 0 && x == std::floor(x)) return std::numeric_limits<T>::quiet_NaN();
  double result = 0;
  if (x < 0) {  // reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
    result = -std::numbers::pi / std::tan(std::numbers::pi * x);
    x = 1 - x;
  }
  for (; x < 10; x += 1) result -= 1 / x;
  // Asymptotic series in the Bernoulli numbers; at x >= 10 the first omitted term is below 1e-15.
  const double inv2 = 1 / (x * x);
  double tail = 691.0 / 32760;
  for (double c : {1.0 / 132, 1.0 / 240, 1.0 / 252, 1.0 / 120, 1.0 / 12}) tail = c - inv2 * tail;
  result += std::log(x) - 0.5 / x - inv2 * tail;
  return static_cast<T>(result);
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
