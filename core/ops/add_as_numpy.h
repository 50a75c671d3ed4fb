// a + b as NumPy adds two elements of one dtype, for the scatter kernels (indexing_kernels.cc,
// advanced_indexing_kernels.cc): bool is or, integers wrap, float16 rounds through float.
// Included only by kernel files that dispatch on dtype (it needs Eigen::half).
#ifndef KILN_CORE_OPS_ADD_AS_NUMPY_H_
#define KILN_CORE_OPS_ADD_AS_NUMPY_H_

#include <cstdint>
#include <type_traits>

#include "core/tensor/dtype_dispatch.h"

namespace kiln {

// a + b in T.
template <typename T>
inline T AddAsNumpy(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (std::is_same_v<T, Eigen::half>) {
    return T(static_cast<float>(a) + static_cast<float>(b));
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}

}  // namespace kiln

#endif  // KILN_CORE_OPS_ADD_AS_NUMPY_H_
