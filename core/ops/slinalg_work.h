// Private to the slinalg kernels (*_kernels.cc only): column-major work matrices copied from and
// to strided MatrixRefs (the layout LAPACK takes), with the helpers the kernels share.
#ifndef KILN_CORE_OPS_SLINALG_WORK_H_
#define KILN_CORE_OPS_SLINALG_WORK_H_

#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/ops/lapack.h"
#include "core/ops/slinalg_kernels.h"

namespace kiln::slinalg::internal {

using lapack::Int;

// A column-major rows x cols matrix owned by the kernel (leading dimension max(1, rows)), with
// one zero column of padding past its end: OpenBLAS 0.3's ztrsyl reads up to one column past
// the last (its zdotc of length 0), which faults when the buffer ends at a page (found under
// AddressSanitizer; reproduced with a guard page). Loops over `v` see the padding as zeros.
template <typename T>
struct Work {
  std::vector<T> v;
  Int rows = 0, cols = 0;
  Work(int64_t r, int64_t c)
      : v(static_cast<size_t>(r * (c + 1) + 8)), rows(Int(r)), cols(Int(c)) {}
  T* data() { return v.data(); }
  const T* data() const { return v.data(); }
  Int ld() const { return std::max<Int>(1, rows); }
  T& at(int64_t i, int64_t j) { return v[static_cast<size_t>(i + j * rows)]; }
};

// m transposed: a view of the same memory with rows and columns swapped.
template <typename T>
MatrixRef<T> Transposed(MatrixRef<T> m) {
  return {m.data, m.cols, m.rows, m.col_stride, m.row_stride};
}

// True when m's rows are contiguous (C order): its memory, read column-major, is m^T, so a
// kernel hands LAPACK m^T (and adjusts the routine's uplo or trans) instead of transposing.
template <typename T>
bool RowMajor(MatrixRef<T> m) {
  return m.col_stride == 1 && m.row_stride != 1;
}

// Copies `rows` x `cols` elements from src (strides sr, sc) into dst (strides dr, dc), a whole
// column (or row) at a time when both columns (or rows) are contiguous, else by 32 x 32 tiles.
template <typename T>
void CopyMatrix(const T* src, int64_t sr, int64_t sc, T* dst, int64_t dr, int64_t dc, int64_t rows,
                int64_t cols) {
  if (sr == 1 && dr == 1) {
    for (int64_t j = 0; j < cols; ++j) std::copy_n(src + j * sc, rows, dst + j * dc);
    return;
  }
  if (sc == 1 && dc == 1) {  // both rows contiguous: a row at a time
    for (int64_t i = 0; i < rows; ++i) std::copy_n(src + i * sr, cols, dst + i * dr);
    return;
  }
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j = j0; j < j1; ++j) dst[i * dr + j * dc] = src[i * sr + j * sc];
      }
    }
  }
}

// A copy of m, column-major.
template <typename T>
Work<T> Load(MatrixRef<const T> m) {
  Work<T> w(m.rows, m.cols);
  CopyMatrix(m.data, m.row_stride, m.col_stride, w.data(), 1, m.rows, m.rows, m.cols);
  return w;
}

// w written into out (same size).
template <typename T>
void Store(Work<T>& w, MatrixRef<T> out) {
  CopyMatrix<T>(w.data(), 1, w.rows, out.data, out.row_stride, out.col_stride, out.rows, out.cols);
}

// Every element of w conjugated (nothing for a real T).
template <typename T>
void ConjugateAll(Work<T>& w) {
  if constexpr (!std::is_same_v<T, Real<T>>) {
    for (T& x : w.v) x = std::conj(x);
  }
}

// Conjugate of a real or complex value.
template <typename T>
T Conj(T x) {
  if constexpr (std::is_same_v<T, Real<T>>) {
    return x;
  } else {
    return std::conj(x);
  }
}

// The work size LAPACK returned in work[0] of a query.
template <typename T>
Int WorkSize(T w) {
  return std::max<Int>(1, static_cast<Int>(std::real(w)));
}

}  // namespace kiln::slinalg::internal

#endif  // KILN_CORE_OPS_SLINALG_WORK_H_
