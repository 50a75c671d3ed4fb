#include "core/ops/sleef_kernels.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/ops/sleef_isa.h"

namespace kiln::sleef {
namespace {

struct Selected {
  Table table;
  const char* name;
};

const Selected& Select() {
  static const Selected selected = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return Selected{Avx512Table(), "avx512f"};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      return Selected{Avx2Table(), "avx2"};
    }
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

// sigmoid(x) = 1 / (1 + exp(-x)); exp(-x) = inf gives the correct limit 0.
template <typename T>
void Sigmoid(const T* in, T* out, int64_t n) {
  const auto exp = Kernel<T>(ScalarOpKind::kExp);
  T buf[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    for (int64_t i = 0; i < m; ++i) buf[i] = -in[b + i];
    exp(buf, buf, m);
    for (int64_t i = 0; i < m; ++i) out[b + i] = T(1) / (T(1) + buf[i]);
  }
}

// softplus(x) = log1p(exp(x)) below 18, x + exp(-x) above (exact where exp(x) would overflow).
template <typename T>
void Softplus(const T* in, T* out, int64_t n) {
  const auto exp = Kernel<T>(ScalarOpKind::kExp);
  const auto log1p = Kernel<T>(ScalarOpKind::kLog1p);
  T buf[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    exp(in + b, buf, m);
    log1p(buf, buf, m);
    for (int64_t i = 0; i < m; ++i) {
      const T x = in[b + i];
      out[b + i] = x < T(18) ? buf[i] : x + std::exp(-x);
    }
  }
}

template <typename T>
bool MapT(ScalarOpKind op, const T* in, T* out, int64_t n) {
  if (op == ScalarOpKind::kSigmoid) {
    Sigmoid(in, out, n);
    return true;
  }
  if (op == ScalarOpKind::kSoftplus) {
    Softplus(in, out, n);
    return true;
  }
  const auto kernel = Kernel<T>(op);
  if (kernel == nullptr) return false;
  kernel(in, out, n);
  return true;
}

}  // namespace

bool Map(ScalarOpKind op, const double* in, double* out, int64_t n) {
  return MapT(op, in, out, n);
}

bool Map(ScalarOpKind op, const float* in, float* out, int64_t n) { return MapT(op, in, out, n); }

const char* IsaName() { return Select().name; }

}  // namespace kiln::sleef
