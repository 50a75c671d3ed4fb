#include "core/ops/sleef_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "core/ops/sleef_isa.h"

namespace kiln::sleef {
namespace {

struct Selected {
  Table table;
  const char* name;
};

// The widest table the CPU runs, or a narrower one named by KILN_ISA (sse2, avx2) for tests.
const Selected& Select() {
  static const Selected selected = [] {
    __builtin_cpu_init();
    const char* env = std::getenv("KILN_ISA");
    const std::string wanted = env != nullptr ? env : "";
    const bool avx512 = __builtin_cpu_supports("avx512f") && wanted != "avx2" && wanted != "sse2";
    const bool avx2 =
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && wanted != "sse2";
    if (avx512) return Selected{Avx512Table(), "avx512f"};
    if (avx2) return Selected{Avx2Table(), "avx2"};
    return Selected{Sse2Table(), "sse2"};
  }();
  return selected;
}

template <typename T>
auto Kernel(ScalarOpKind op) {
  if constexpr (std::is_same_v<T, double>) {
    return Select().table.d[static_cast<int>(op)];
  } else {
    return Select().table.f[static_cast<int>(op)];
  }
}

// Elements per block of the composite functions: small enough to stay in L1.
constexpr int64_t kBlock = 512;

// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = exp(-|x|) <= 1: no
// overflow, and the subnormal values of large negative x (3.7e-44 in float32 at -100) kept.
template <typename T>
void Sigmoid(const T* in, T* out, int64_t n) {
  const auto exp = Kernel<T>(ScalarOpKind::kExp);
  T buf[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    for (int64_t i = 0; i < m; ++i) buf[i] = -std::fabs(in[b + i]);
    exp(buf, buf, m);
    for (int64_t i = 0; i < m; ++i) {
      const T x = in[b + i], e = buf[i];
      out[b + i] = (x >= T(0) ? T(1) : e) / (T(1) + e);
    }
  }
}

// softplus(x) = max(x, 0) + log1p(e) with e = exp(-|x|) <= 1, exact where exp(x) would overflow.
// log1p(e) is log(u) + c / u for u = 1 + e rounded and c = e - (u - 1) its rounding error (exact);
// c / u needs little precision (c is below half an ulp of u), so 2 - u stands in for 1 / u.
template <typename T>
void Softplus(const T* in, T* out, int64_t n) {
  const auto exp = Kernel<T>(ScalarOpKind::kExp);
  const auto log = Kernel<T>(ScalarOpKind::kLog);
  T e[kBlock], u[kBlock], log_u[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    for (int64_t i = 0; i < m; ++i) e[i] = -std::fabs(in[b + i]);
    exp(e, e, m);
    for (int64_t i = 0; i < m; ++i) u[i] = T(1) + e[i];
    log(u, log_u, m);
    for (int64_t i = 0; i < m; ++i) {
      const T c = e[i] - (u[i] - T(1));
      const T x = in[b + i];
      out[b + i] = (x > T(0) ? x : T(0)) + (log_u[i] + c * (T(2) - u[i]));
    }
  }
}

// Where SLEEF's asinh and acosh overflow (x * x beyond the range of T), both are log(2|x|) to
// within an ULP (the next term, 1 / (4 x^2), is far below it); asinh keeps x's sign.
template <typename T>
void InverseHyperbolic(ScalarOpKind op, const T* in, T* out, int64_t n) {
  const T large = std::is_same_v<T, double> ? T(1e150) : T(1e18);
  const auto kernel = Kernel<T>(op);
  T x[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    std::copy(in + b, in + b + m, x);  // out may alias in
    kernel(x, out + b, m);
    for (int64_t i = 0; i < m; ++i) {
      if (std::fabs(x[i]) > large && std::isfinite(x[i]) &&
          (x[i] > 0 || op == ScalarOpKind::kArcsinh)) {
        out[b + i] = std::copysign(std::log(std::fabs(x[i])) + T(0.69314718055994530942), x[i]);
      }
    }
  }
}

// The one-pass kernel of the instruction set for T (sigmoid_d/softplus_d or the float ones).
template <typename T>
auto OnePass(MapD Table::*d, MapF Table::*f) {
  if constexpr (std::is_same_v<T, double>) {
    return Select().table.*d;
  } else {
    return Select().table.*f;
  }
}

template <typename T>
bool MapT(ScalarOpKind op, const T* in, T* out, int64_t n) {
  if (op == ScalarOpKind::kSigmoid || op == ScalarOpKind::kSoftplus) {
    const bool sigmoid = op == ScalarOpKind::kSigmoid;
    const auto one_pass = sigmoid ? OnePass<T>(&Table::sigmoid_d, &Table::sigmoid_f)
                                  : OnePass<T>(&Table::softplus_d, &Table::softplus_f);
    if (one_pass != nullptr) {
      one_pass(in, out, n);
    } else if (sigmoid) {
      Sigmoid(in, out, n);
    } else {
      Softplus(in, out, n);
    }
    return true;
  }
  const bool exact_for_large =
      std::is_same_v<T, double> && Select().table.large_inverse_hyperbolic_d;
  if ((op == ScalarOpKind::kArcsinh || op == ScalarOpKind::kArccosh) && !exact_for_large) {
    InverseHyperbolic(op, in, out, n);
    return true;
  }
  const auto kernel = Kernel<T>(op);
  if (kernel == nullptr) return false;
  kernel(in, out, n);
  return true;
}

}  // namespace

bool Map(ScalarOpKind op, const double* in, double* out, int64_t n) { return MapT(op, in, out, n); }

bool Map(ScalarOpKind op, const float* in, float* out, int64_t n) { return MapT(op, in, out, n); }

void Map2(ScalarOpKind op, const double* a, const double* b, int64_t b_stride, double* out,
          int64_t n) {
  Select().table.d2[static_cast<int>(op)](a, b, b_stride, out, n);
}

void Map2(ScalarOpKind op, const float* a, const float* b, int64_t b_stride, float* out,
          int64_t n) {
  Select().table.f2[static_cast<int>(op)](a, b, b_stride, out, n);
}

const char* IsaName() { return Select().name; }

}  // namespace kiln::sleef
