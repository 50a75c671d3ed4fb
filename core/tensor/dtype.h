// Aesara's 14 dtypes, their sizes and names, and NumPy's promotion rules between them.
#ifndef KILN_CORE_TENSOR_DTYPE_H_
#define KILN_CORE_TENSOR_DTYPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

// The element type of a tensor, in NumPy's promotion order within each kind.
enum class DType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
};

// Number of dtypes; DType values are 0..kNumDTypes-1.
inline constexpr int kNumDTypes = 14;

// NumPy's name of the dtype: "float64", "int8", "bool"...
std::string DTypeName(DType dtype);

// Parses a NumPy dtype name; nullopt when unknown.
std::optional<DType> ParseDType(std::string_view name);

// Size of one element in bytes.
int DTypeSize(DType dtype);

// Kind predicates, as NumPy's dtype.kind: b, i, u, f, c.
bool IsBool(DType dtype);
bool IsSignedInt(DType dtype);
bool IsUnsignedInt(DType dtype);
bool IsInteger(DType dtype);  // signed or unsigned, not bool
bool IsFloat(DType dtype);    // float16/32/64
bool IsComplex(DType dtype);

// True when every value of `from` is exactly representable in `to` (numpy.can_cast 'safe').
bool CanCastSafely(DType from, DType to);

// The smallest dtype both can be safely cast to (numpy.promote_types): int8+uint8 -> int16,
// int32+float32 -> float64, uint64+int64 -> float64.
DType PromoteTypes(DType a, DType b);

// Aesara's upgrade_to_float: the float dtype a math function of `dtype` returns
// (bool/int8/int16/uint8/uint16 -> float32, wider ints -> float64, floats and complex unchanged).
DType UpgradeToFloat(DType dtype);

}  // namespace kiln

#endif  // KILN_CORE_TENSOR_DTYPE_H_
