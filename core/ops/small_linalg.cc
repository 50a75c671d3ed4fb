// Small-matrix kernels (see small_linalg.h): LAPACK's unblocked algorithms on row-major buffers,
// with the inner loops on contiguous rows so that they vectorize.
#include "core/ops/small_linalg.h"

#include <cmath>
#include <limits>
#include <utility>

namespace kiln::small_linalg {
namespace {

// The sum of x[p] * y[p] for p < len, in vector lanes (summed in another order than one by one,
// as OpenBLAS's dot that LAPACK's potf2 calls; -fopenmp-simd, core/CMakeLists.txt).
template <typename T>
[[gnu::always_inline]] inline T Dot(const T* x, const T* y, int len) {
  T s(0);
#pragma omp simd reduction(+ : s)
  for (int p = 0; p < len; ++p) s += x[p] * y[p];
  return s;
}

// Row i of b (k wide) -= s * row p.
template <typename T>
inline void RowAxpy(T* bi, const T* bp, T s, int k) {
  for (int c = 0; c < k; ++c) bi[c] -= s * bp[c];
}

// Forward (rows 0 up) or backward substitution with op(a) for op(a)(i, p) = a(i, p), or a(p, i)
// when Transposed; each row divided by op(a)'s diagonal unless Unit.
template <bool Forward, bool Transposed>
struct Substitution {
  template <int N, typename T>
  static void Run(const T* a, int dim, bool unit, T* b, int k) {
    const int n = N > 0 ? N : dim;
    auto at = [&](int i, int p) { return Transposed ? a[p * n + i] : a[i * n + p]; };
    for (int s = 0; s < n; ++s) {
      const int i = Forward ? s : n - 1 - s;
      T* bi = b + i * k;
      if (k == 1) {
        T v = bi[0];
        if (Forward) {
          for (int p = 0; p < i; ++p) v -= at(i, p) * b[p];
        } else {
          for (int p = i + 1; p < n; ++p) v -= at(i, p) * b[p];
        }
        bi[0] = unit ? v : v / at(i, i);
        continue;
      }
      if (Forward) {
        for (int p = 0; p < i; ++p) RowAxpy(bi, b + p * k, at(i, p), k);
      } else {
        for (int p = i + 1; p < n; ++p) RowAxpy(bi, b + p * k, at(i, p), k);
      }
      if (!unit) {
        const T d = at(i, i);
        for (int c = 0; c < k; ++c) bi[c] /= d;
      }
    }
  }
};

}  // namespace

namespace {

// potf2 on the lower triangle of the row-major w, in place (CholeskyLower's body).
template <typename T, int N>
[[gnu::always_inline]] inline int CholeskyLowerImpl(T* w, int dim) {
  const int n = N > 0 ? N : dim;
  for (int j = 0; j < n; ++j) {
    T* wj = w + j * n;
    const T s = wj[j] - Dot(wj, wj, j);
    if (!(s > T(0))) {  // potf2: not positive, or NaN
      wj[j] = s;
      return j + 1;
    }
    const T d = std::sqrt(s);
    wj[j] = d;
    const T r = T(1) / d;
    for (int i = j + 1; i < n; ++i) {
      T* wi = w + i * n;
      wi[j] = (wi[j] - Dot(wi, wj, j)) * r;
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) w[i * n + j] = T(0);
  }
  return 0;
}

// CholeskyLower of an order known only at run time (9 to 64: slinalg's unblocked path), cloned
// for AVX-512 and for AVX with FMA: its dot products are most of a 64-square factor's time, and
// the default build targets SSE2 (a 64-square factor called from Python, 7 rounds against SciPy
// in the same run: 0.76-1.32x before, 1.28-1.83x with the clones).
__attribute__((target_clones("avx512f", "fma", "default"))) int CholeskyLowerAnyOrder(double* w,
                                                                                      int n) {
  return CholeskyLowerImpl<double, 0>(w, n);
}
__attribute__((target_clones("avx512f", "fma", "default"))) int CholeskyLowerAnyOrder(float* w,
                                                                                      int n) {
  return CholeskyLowerImpl<float, 0>(w, n);
}

}  // namespace

template <typename T, int N>
int CholeskyLower(T* w, int dim) {
  if constexpr (N == 0) {
    return CholeskyLowerAnyOrder(w, dim);
  } else {
    return CholeskyLowerImpl<T, N>(w, dim);
  }
}

template <typename T, int N>
int LuFactor(T* w, int dim, int* piv) {
  const int n = N > 0 ? N : dim;
  const T sfmin = std::numeric_limits<T>::min();
  int info = 0;
  for (int j = 0; j < n; ++j) {
    int p = j;
    T best = std::abs(w[j * n + j]);
    for (int i = j + 1; i < n; ++i) {
      const T v = std::abs(w[i * n + j]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    piv[j] = p;
    T* wj = w + j * n;
    if (w[p * n + j] != T(0)) {
      if (p != j) {
        T* wp = w + p * n;
        for (int c = 0; c < n; ++c) std::swap(wj[c], wp[c]);
      }
      const T pivot = wj[j];
      if (std::abs(pivot) >= sfmin) {
        const T r = T(1) / pivot;
        for (int i = j + 1; i < n; ++i) w[i * n + j] *= r;
      } else {
        for (int i = j + 1; i < n; ++i) w[i * n + j] /= pivot;
      }
    } else if (info == 0) {
      info = j + 1;
    }
    // The trailing update: row i -= l(i, j) * row j, right of column j.
    for (int i = j + 1; i < n; ++i) {
      T* wi = w + i * n;
      const T l = wi[j];
      for (int c = j + 1; c < n; ++c) wi[c] -= l * wj[c];
    }
  }
  return info;
}

template <typename T, int N>
void LuSolve(const T* lu, const int* piv, int dim, bool transpose, T* b, int k) {
  const int n = N > 0 ? N : dim;
  auto swap_rows = [&](int i, int p) {
    if (i == p) return;
    for (int c = 0; c < k; ++c) std::swap(b[i * k + c], b[p * k + c]);
  };
  if (!transpose) {  // L U x = P^T b
    for (int j = 0; j < n; ++j) swap_rows(j, piv[j]);
    Substitution<true, false>::Run<N>(lu, n, true, b, k);
    Substitution<false, false>::Run<N>(lu, n, false, b, k);
  } else {  // U^T L^T (P^T x) = b
    Substitution<true, true>::Run<N>(lu, n, false, b, k);
    Substitution<false, true>::Run<N>(lu, n, true, b, k);
    for (int j = n - 1; j >= 0; --j) swap_rows(j, piv[j]);
  }
}

template <typename T, int N>
void TriangularSolve(const T* a, int dim, bool lower, bool transpose, bool unit, T* b, int k) {
  const int n = N > 0 ? N : dim;
  // op(a) is lower triangular (a forward substitution) when exactly one of lower, transpose.
  if (lower && !transpose) Substitution<true, false>::Run<N>(a, n, unit, b, k);
  if (lower && transpose) Substitution<false, true>::Run<N>(a, n, unit, b, k);
  if (!lower && !transpose) Substitution<false, false>::Run<N>(a, n, unit, b, k);
  if (!lower && transpose) Substitution<true, true>::Run<N>(a, n, unit, b, k);
}

template <typename T>
int ZeroDiagonal(const T* a, int n) {
  for (int i = 0; i < n; ++i) {
    if (a[i * n + i] == T(0)) return i + 1;
  }
  return 0;
}

#define KILN_SMALL_LINALG_INSTANTIATE(T, N)                              \
  template int CholeskyLower<T, N>(T*, int);                             \
  template int LuFactor<T, N>(T*, int, int*);                            \
  template void LuSolve<T, N>(const T*, const int*, int, bool, T*, int); \
  template void TriangularSolve<T, N>(const T*, int, bool, bool, bool, T*, int);
#define KILN_SMALL_LINALG_INSTANTIATE_DIMS(T)                                 \
  KILN_SMALL_LINALG_INSTANTIATE(T, 0)                                         \
  KILN_SMALL_LINALG_INSTANTIATE(T, 2)                                         \
  KILN_SMALL_LINALG_INSTANTIATE(T, 3)                                         \
  KILN_SMALL_LINALG_INSTANTIATE(T, 4) KILN_SMALL_LINALG_INSTANTIATE(T, 5)     \
      KILN_SMALL_LINALG_INSTANTIATE(T, 6) KILN_SMALL_LINALG_INSTANTIATE(T, 7) \
          KILN_SMALL_LINALG_INSTANTIATE(T, 8) template int                    \
          ZeroDiagonal<T>(const T*, int);
KILN_SMALL_LINALG_INSTANTIATE_DIMS(float)
KILN_SMALL_LINALG_INSTANTIATE_DIMS(double)
#undef KILN_SMALL_LINALG_INSTANTIATE_DIMS
#undef KILN_SMALL_LINALG_INSTANTIATE

}  // namespace kiln::small_linalg
