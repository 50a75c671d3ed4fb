#include "client/python/native/numpy_dtypes.h"

#include <array>
#include <string>

namespace kiln {

namespace py = pybind11;

const py::dtype& NumpyDType(DType dtype) {
  static const auto* dtypes = [] {
    auto* d = new std::array<py::dtype, kNumDTypes>();
    for (int i = 0; i < kNumDTypes; ++i) {
      (*d)[i] = py::dtype(std::string(DTypeName(static_cast<DType>(i))));
    }
    return d;
  }();
  return (*dtypes)[static_cast<int>(dtype)];
}

std::optional<DType> DTypeOfNumpy(const py::dtype& dtype) {
  switch (dtype.num()) {
    case 0:
      return DType::kBool;
    case 1:
      return DType::kInt8;
    case 2:
      return DType::kUInt8;
    case 3:
      return DType::kInt16;
    case 4:
      return DType::kUInt16;
    case 5:
      return DType::kInt32;
    case 6:
      return DType::kUInt32;
    case 7:
    case 9:
      return DType::kInt64;  // long, long long
    case 8:
    case 10:
      return DType::kUInt64;  // unsigned long, unsigned long long
    case 11:
      return DType::kFloat32;
    case 12:
      return DType::kFloat64;
    case 14:
      return DType::kComplex64;
    case 15:
      return DType::kComplex128;
    case 23:
      return DType::kFloat16;
    default:
      return std::nullopt;
  }
}

}  // namespace kiln
