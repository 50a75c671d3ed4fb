// The strided matrix view that the LAPACK kernels (slinalg_kernels, nlinalg_kernels) take, and the
// real type of an element type.
#ifndef KILN_CORE_OPS_LAPACK_MATRIX_H_
#define KILN_CORE_OPS_LAPACK_MATRIX_H_

#include <complex>
#include <cstdint>

namespace kiln {

// A strided matrix: element (i, j) at data[i * row_stride + j * col_stride] (strides in
// elements, as a Tensor's).
template <typename T>
struct MatrixRef {
  T* data = nullptr;
  int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;
  T& operator()(int64_t i, int64_t j) const { return data[i * row_stride + j * col_stride]; }
};

// The real type of T (float for std::complex<float>).
template <typename T>
struct RealOf {
  using type = T;
};
template <typename R>
struct RealOf<std::complex<R>> {
  using type = R;
};
template <typename T>
using Real = typename RealOf<T>::type;

}  // namespace kiln

#endif  // KILN_CORE_OPS_LAPACK_MATRIX_H_
