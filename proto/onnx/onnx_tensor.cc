#include "proto/onnx/onnx_tensor.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kiln::onnx {
namespace {

using TP = ::onnx::TensorProto;

// The typed field's values as the dtype's bytes (each value narrowed to the element's width, as
// ONNX stores int8..uint16, bool and float16 bits in int32_data).
template <typename Field>
std::string Narrowed(const Field& values, size_t width) {
  std::string bytes(values.size() * width, '\0');
  for (int i = 0; i < values.size(); ++i) {
    const auto v = values.Get(i);
    std::memcpy(&bytes[i * width], &v, width);  // little-endian: the low bytes
  }
  return bytes;
}

}  // namespace

absl::StatusOr<DType> DTypeFromOnnx(int32_t elem_type) {
  switch (elem_type) {
    case TP::FLOAT:
      return DType::kFloat32;
    case TP::UINT8:
      return DType::kUInt8;
    case TP::INT8:
      return DType::kInt8;
    case TP::UINT16:
      return DType::kUInt16;
    case TP::INT16:
      return DType::kInt16;
    case TP::INT32:
      return DType::kInt32;
    case TP::INT64:
      return DType::kInt64;
    case TP::BOOL:
      return DType::kBool;
    case TP::FLOAT16:
      return DType::kFloat16;
    case TP::DOUBLE:
      return DType::kFloat64;
    case TP::UINT32:
      return DType::kUInt32;
    case TP::UINT64:
      return DType::kUInt64;
    case TP::COMPLEX64:
      return DType::kComplex64;
    case TP::COMPLEX128:
      return DType::kComplex128;
    case TP::STRING:
    case TP::BFLOAT16:
      return absl::UnimplementedError(
          absl::StrCat("ONNX element type ", TP::DataType_Name(elem_type), " has no Kiln dtype"));
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown ONNX element type ", elem_type));
  }
}

int32_t DTypeToOnnx(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return TP::BOOL;
    case DType::kInt8:
      return TP::INT8;
    case DType::kInt16:
      return TP::INT16;
    case DType::kInt32:
      return TP::INT32;
    case DType::kInt64:
      return TP::INT64;
    case DType::kUInt8:
      return TP::UINT8;
    case DType::kUInt16:
      return TP::UINT16;
    case DType::kUInt32:
      return TP::UINT32;
    case DType::kUInt64:
      return TP::UINT64;
    case DType::kFloat16:
      return TP::FLOAT16;
    case DType::kFloat32:
      return TP::FLOAT;
    case DType::kFloat64:
      return TP::DOUBLE;
    case DType::kComplex64:
      return TP::COMPLEX64;
    case DType::kComplex128:
      return TP::COMPLEX128;
  }
  return TP::UNDEFINED;
}

absl::StatusOr<Tensor> TensorFromOnnx(const TP& proto, absl::string_view what, int64_t max_bytes) {
  if (proto.data_location() == TP::EXTERNAL || proto.external_data_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(what, ": external data is not supported"));
  }
  absl::StatusOr<DType> dtype = DTypeFromOnnx(proto.data_type());
  if (!dtype.ok())
    return absl::Status(dtype.status().code(), absl::StrCat(what, ": ", dtype.status().message()));
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat(what, ": negative dim ", d));
    shape.push_back(d);
  }
  const size_t width = DTypeSize(*dtype);
  std::string bytes;
  if (proto.has_raw_data()) {
    bytes = proto.raw_data();
  } else {
    switch (proto.data_type()) {
      case TP::FLOAT:
      case TP::COMPLEX64:
        bytes = Narrowed(proto.float_data(), sizeof(float));
        break;
      case TP::DOUBLE:
      case TP::COMPLEX128:
        bytes = Narrowed(proto.double_data(), sizeof(double));
        break;
      case TP::INT64:
        bytes = Narrowed(proto.int64_data(), width);
        break;
      case TP::UINT32:
      case TP::UINT64:
        bytes = Narrowed(proto.uint64_data(), width);
        break;
      default:
        bytes = Narrowed(proto.int32_data(), width);
        break;
    }
  }
  if (static_cast<int64_t>(bytes.size()) > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(what, " holds ", bytes.size(), " bytes, more than the limit of ", max_bytes));
  }
  return Tensor::FromBytes(*dtype, std::move(shape), bytes, std::string(what));
}

TP TensorToOnnx(const Tensor& t, const std::string& name) {
  TP proto;
  proto.set_name(name);
  proto.set_data_type(DTypeToOnnx(t.dtype()));
  for (int64_t d : t.shape()) proto.add_dims(d);
  const Tensor c = t.Contiguous();
  proto.set_raw_data(
      std::string(static_cast<const char*>(c.raw_data()), static_cast<size_t>(c.nbytes())));
  return proto;
}

}  // namespace kiln::onnx
