#include "core/graph/constructors.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/graph/basic.h"

namespace kiln {
namespace {

constexpr StaticDim kU = std::nullopt;

Var Scalar0(DType dtype, std::string name) { return tensor(dtype, {}, std::move(name)); }

template <typename T>
Var ScalarConstant(DType dtype, T value, std::string name) {
  absl::StatusOr<Tensor> data = Tensor::FromValues<T>(dtype, {}, std::span<const T>(&value, 1));
  if (!data.ok()) return Var(data.status());
  return constant(*std::move(data), std::move(name));
}

}  // namespace

Var tensor(DType dtype, StaticShape shape, std::string name) {
  for (const StaticDim& d : shape) {
    if (d && *d < 0) {
      return Var(absl::InvalidArgumentError(absl::StrCat(
          "tensor: static shape ", StaticShapeToString(shape), " has a negative dimension")));
    }
  }
  return Var(Variable::Make(TensorType::Make(dtype, std::move(shape)), std::move(name)));
}

Var tensor(std::string_view dtype, StaticShape shape, std::string name) {
  std::optional<DType> d = ParseDType(dtype);
  if (!d)
    return Var(absl::InvalidArgumentError(
        absl::StrCat("tensor: unknown dtype '", std::string(dtype), "'")));
  return tensor(*d, std::move(shape), std::move(name));
}

#define KILN_DEFINE_CONSTRUCTORS(prefix, dtype)                                                    \
  Var prefix##scalar(std::string name) { return Scalar0(dtype, std::move(name)); }                 \
  Var prefix##vector(std::string name) { return tensor(dtype, {kU}, std::move(name)); }            \
  Var prefix##row(std::string name) { return tensor(dtype, {1, kU}, std::move(name)); }            \
  Var prefix##col(std::string name) { return tensor(dtype, {kU, 1}, std::move(name)); }            \
  Var prefix##matrix(std::string name) { return tensor(dtype, {kU, kU}, std::move(name)); }        \
  Var prefix##tensor3(std::string name) { return tensor(dtype, StaticShape(3), std::move(name)); } \
  Var prefix##tensor4(std::string name) { return tensor(dtype, StaticShape(4), std::move(name)); } \
  Var prefix##tensor5(std::string name) { return tensor(dtype, StaticShape(5), std::move(name)); } \
  Var prefix##tensor6(std::string name) { return tensor(dtype, StaticShape(6), std::move(name)); } \
  Var prefix##tensor7(std::string name) { return tensor(dtype, StaticShape(7), std::move(name)); }
KILN_DEFINE_CONSTRUCTORS(, kFloatX)
KILN_DEFINE_CONSTRUCTORS(b, DType::kInt8)
KILN_DEFINE_CONSTRUCTORS(w, DType::kInt16)
KILN_DEFINE_CONSTRUCTORS(i, DType::kInt32)
KILN_DEFINE_CONSTRUCTORS(l, DType::kInt64)
KILN_DEFINE_CONSTRUCTORS(f, DType::kFloat32)
KILN_DEFINE_CONSTRUCTORS(d, DType::kFloat64)
KILN_DEFINE_CONSTRUCTORS(c, DType::kComplex64)
KILN_DEFINE_CONSTRUCTORS(z, DType::kComplex128)
#undef KILN_DEFINE_CONSTRUCTORS

DType AutocastIntDType(int64_t value) {
  if (value >= std::numeric_limits<int8_t>::min() && value <= std::numeric_limits<int8_t>::max()) {
    return DType::kInt8;
  }
  if (value >= std::numeric_limits<int16_t>::min() &&
      value <= std::numeric_limits<int16_t>::max()) {
    return DType::kInt16;
  }
  if (value >= std::numeric_limits<int32_t>::min() &&
      value <= std::numeric_limits<int32_t>::max()) {
    return DType::kInt32;
  }
  return DType::kInt64;
}

DType AutocastFloatDType(double value) {
  // NaN != NaN, so NaN stays float64 as in Aesara; inf == float32(inf) becomes float32.
  if (std::isinf(value)) return DType::kFloat32;
  if (!(std::fabs(value) <= std::numeric_limits<float>::max())) return DType::kFloat64;
  return static_cast<double>(static_cast<float>(value)) == value ? DType::kFloat32
                                                                 : DType::kFloat64;
}

Var constant(double value, std::string name) {
  return ScalarConstant<double>(AutocastFloatDType(value), value, std::move(name));
}
Var constant(float value, std::string name) {
  return ScalarConstant<float>(DType::kFloat32, value, std::move(name));
}
Var constant(int64_t value, std::string name) {
  return ScalarConstant<int64_t>(AutocastIntDType(value), value, std::move(name));
}
Var constant(int value, std::string name) { return constant(int64_t{value}, std::move(name)); }
Var constant(bool value, std::string name) {
  return ScalarConstant<bool>(DType::kBool, value, std::move(name));
}
Var scalar_constant(double value, DType dtype) { return ScalarConstant<double>(dtype, value, ""); }
Var scalar_constant(int64_t value, DType dtype) {
  return ScalarConstant<int64_t>(dtype, value, "");
}

Var constant(Tensor data, std::string name) {
  return Var(VariablePtr(Constant::FromTensor(std::move(data), std::move(name))));
}

}  // namespace kiln
