// Maps a runtime DType to its C++ element type. Include only from .cc files: it pulls in Eigen.
#ifndef KILN_CORE_TENSOR_DTYPE_DISPATCH_H_
#define KILN_CORE_TENSOR_DTYPE_DISPATCH_H_

#include <Eigen/Core>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/tensor/dtype.h"

namespace kiln {

// A value-less tag carrying an element type through generic lambdas.
template <typename T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with T the C++ type that stores `dtype` (float16 is Eigen::half).
template <typename F>
decltype(auto) DispatchDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBool:
      return f(TypeTag<bool>{});
    case DType::kInt8:
      return f(TypeTag<int8_t>{});
    case DType::kInt16:
      return f(TypeTag<int16_t>{});
    case DType::kInt32:
      return f(TypeTag<int32_t>{});
    case DType::kInt64:
      return f(TypeTag<int64_t>{});
    case DType::kUInt8:
      return f(TypeTag<uint8_t>{});
    case DType::kUInt16:
      return f(TypeTag<uint16_t>{});
    case DType::kUInt32:
      return f(TypeTag<uint32_t>{});
    case DType::kUInt64:
      return f(TypeTag<uint64_t>{});
    case DType::kFloat16:
      return f(TypeTag<Eigen::half>{});
    case DType::kFloat32:
      return f(TypeTag<float>{});
    case DType::kFloat64:
      return f(TypeTag<double>{});
    case DType::kComplex64:
      return f(TypeTag<std::complex<float>>{});
    case DType::kComplex128:
      break;
  }
  return f(TypeTag<std::complex<double>>{});
}

template <typename T>
struct IsComplexType : std::false_type {};
template <typename T>
struct IsComplexType<std::complex<T>> : std::true_type {};

// A real number to integer type To as NumPy's astype does on x86, defined for every value (C++
// leaves NaN and out-of-range conversions undefined): truncated through int32 (int64 for 64-bit
// types), whose minimum stands for NaN and values out of its range, then wrapped to To; unsigned
// 32- and 64-bit types also take [2^(w-1), 2^w) exactly and 0 above.
template <typename To>
To RealToInteger(double value) {
  using Wide = std::conditional_t<sizeof(To) == 8, int64_t, int32_t>;
  constexpr double kHalf = sizeof(To) == 8 ? 0x1p63 : 0x1p31;
  if (value >= -kHalf && value < kHalf) return static_cast<To>(static_cast<Wide>(value));
  if constexpr (std::is_unsigned_v<To> && sizeof(To) >= 4) {
    if (value >= kHalf) return value < 2 * kHalf ? static_cast<To>(value) : To(0);
  }
  return static_cast<To>(std::numeric_limits<Wide>::min());
}

// Converts between any two element types as NumPy's astype does (complex -> real keeps the real
// part, anything -> bool tests for non-zero, reals -> integers as RealToInteger).
template <typename To, typename From>
To ConvertElement(const From& value) {
  if constexpr (std::is_same_v<To, bool>) {
    return value != From(0);
  } else if constexpr (IsComplexType<From>::value && !IsComplexType<To>::value) {
    return ConvertElement<To>(value.real());
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>) {
    return RealToInteger<To>(static_cast<double>(value));
  } else if constexpr (IsComplexType<To>::value) {
    if constexpr (IsComplexType<From>::value) {
      return To(static_cast<typename To::value_type>(value.real()),
                static_cast<typename To::value_type>(value.imag()));
    } else {
      return To(static_cast<typename To::value_type>(static_cast<double>(value)));
    }
  } else if constexpr (std::is_same_v<From, Eigen::half> || std::is_same_v<To, Eigen::half>) {
    return static_cast<To>(static_cast<float>(value));
  } else {
    return static_cast<To>(value);
  }
}

}  // namespace kiln

#endif  // KILN_CORE_TENSOR_DTYPE_DISPATCH_H_
