// NumPy's sort order for the array ops' kernels (searchsorted, unique, topk): NaN after every
// number, complex numbers by real part then imaginary part. Include only from .cc files.
#ifndef KILN_CORE_OPS_ARRAY_COMPARE_H_
#define KILN_CORE_OPS_ARRAY_COMPARE_H_

#include <cmath>
#include <complex>
#include <type_traits>

#include "core/tensor/dtype.h"
#include "core/tensor/dtype_dispatch.h"

namespace kiln::array_compare {

// a < b in NumPy's sort order (NaN last; NaNs equal among themselves).
template <typename T>
bool Less(const T& a, const T& b) {
  if constexpr (IsComplexType<T>::value) {
    if (Less(a.real(), b.real())) return true;
    if (Less(b.real(), a.real())) return false;
    return Less(a.imag(), b.imag());
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  } else {
    return a < b;
  }
}

// Neither sorts before the other (NaN equals NaN here, as numpy.unique collapses NaNs).
template <typename T>
bool Same(const T& a, const T& b) {
  return !Less(a, b) && !Less(b, a);
}

// The dtype the kernels compute in: float16 as float32 (Eigen::half has no isnan here).
inline DType ComputeDType(DType d) { return d == DType::kFloat16 ? DType::kFloat32 : d; }

}  // namespace kiln::array_compare

#endif  // KILN_CORE_OPS_ARRAY_COMPARE_H_
