#include "core/tensor/dtype.h"

#include <array>

namespace kiln {
namespace {

struct DTypeInfo {
  std::string_view name;
  int size;
};

constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"bool", 1},
    {"int8", 1},
    {"int16", 2},
    {"int32", 4},
    {"int64", 8},
    {"uint8", 1},
    {"uint16", 2},
    {"uint32", 4},
    {"uint64", 8},
    {"float16", 2},
    {"float32", 4},
    {"float64", 8},
    {"complex64", 8},
    {"complex128", 16},
}};

// NumPy's search order for promote_types: bool, then by size with unsigned before signed, then
// floats, then complex. The first dtype both operands cast to safely is the result.
constexpr std::array<DType, kNumDTypes> kPromotionOrder = {
    DType::kBool,    DType::kUInt8,   DType::kInt8,      DType::kUInt16,     DType::kInt16,
    DType::kUInt32,  DType::kInt32,   DType::kUInt64,    DType::kInt64,      DType::kFloat16,
    DType::kFloat32, DType::kFloat64, DType::kComplex64, DType::kComplex128,
};

// Size in bytes of one real component: complex64 -> 4, float32 -> 4.
int ComponentSize(DType dtype) {
  return IsComplex(dtype) ? DTypeSize(dtype) / 2 : DTypeSize(dtype);
}

// Value bits of an integer dtype (sign excluded).
int IntegerValueBits(DType dtype) {
  int bits = 8 * DTypeSize(dtype);
  return IsSignedInt(dtype) ? bits - 1 : bits;
}

}  // namespace

std::string DTypeName(DType dtype) { return std::string(kInfo[static_cast<int>(dtype)].name); }

int DTypeSize(DType dtype) { return kInfo[static_cast<int>(dtype)].size; }

std::optional<DType> ParseDType(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kInfo[i].name == name) return static_cast<DType>(i);
  }
  return std::nullopt;
}

bool IsBool(DType dtype) { return dtype == DType::kBool; }
bool IsSignedInt(DType dtype) { return dtype >= DType::kInt8 && dtype <= DType::kInt64; }
bool IsUnsignedInt(DType dtype) { return dtype >= DType::kUInt8 && dtype <= DType::kUInt64; }
bool IsInteger(DType dtype) { return IsSignedInt(dtype) || IsUnsignedInt(dtype); }
bool IsFloat(DType dtype) { return dtype >= DType::kFloat16 && dtype <= DType::kFloat64; }
bool IsComplex(DType dtype) { return dtype == DType::kComplex64 || dtype == DType::kComplex128; }

bool CanCastSafely(DType from, DType to) {
  if (from == to || IsBool(from)) return true;
  if (IsBool(to)) return false;
  if (IsInteger(from)) {
    if (IsInteger(to)) {
      if (IsSignedInt(from) && IsUnsignedInt(to)) return false;
      return IntegerValueBits(from) <= IntegerValueBits(to);
    }
    // NumPy's rule: an integer goes to a wider float; 64-bit integers go to float64.
    return ComponentSize(to) > DTypeSize(from) || ComponentSize(to) == 8;
  }
  if (IsFloat(from)) {
    if (IsInteger(to)) return false;
    return DTypeSize(from) <= ComponentSize(to);
  }
  // complex
  return IsComplex(to) && DTypeSize(from) <= DTypeSize(to);
}

DType PromoteTypes(DType a, DType b) {
  for (DType candidate : kPromotionOrder) {
    if (CanCastSafely(a, candidate) && CanCastSafely(b, candidate)) return candidate;
  }
  return DType::kComplex128;  // unreachable: every dtype casts safely to complex128
}

DType UpgradeToFloat(DType dtype) {
  switch (dtype) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kUInt8:
    case DType::kUInt16:
      return DType::kFloat32;
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt32:
    case DType::kUInt64:
      return DType::kFloat64;
    default:
      return dtype;
  }
}

}  // namespace kiln
