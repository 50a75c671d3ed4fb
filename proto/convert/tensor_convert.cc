#include "proto/convert/tensor_convert.h"

#include <bit>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"

namespace kiln {

static_assert(std::endian::native == std::endian::little, "the wire format is little-endian");

v1::DType ToProto(DType dtype) { return static_cast<v1::DType>(static_cast<int>(dtype) + 1); }

absl::StatusOr<DType> FromProto(v1::DType dtype) {
  const int value = static_cast<int>(dtype);
  if (value < 1 || value > kNumDTypes) {
    return absl::InvalidArgumentError(absl::StrCat("unknown dtype ", value));
  }
  return static_cast<DType>(value - 1);
}

v1::TensorType ToProto(const TensorType& type) {
  v1::TensorType msg;
  ToProto(type, &msg);
  return msg;
}

void ToProto(const TensorType& type, v1::TensorType* out) {
  out->set_dtype(ToProto(type.dtype()));
  for (const StaticDim& d : type.shape()) {
    v1::StaticDim* dim = out->add_shape();
    dim->set_known(d.has_value());
    dim->set_size(d.value_or(0));
  }
}

absl::StatusOr<TensorTypePtr> FromProto(const v1::TensorType& type) {
  ASSIGN_OR_RETURN(DType dtype, FromProto(type.dtype()));
  StaticShape shape;
  for (int i = 0; i < type.shape_size(); ++i) {
    const v1::StaticDim& d = type.shape(i);
    if (d.known() && d.size() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor type: dim ", i, " has negative size ", d.size()));
    }
    shape.push_back(d.known() ? StaticDim(d.size()) : std::nullopt);
  }
  // Its values must fit in memory: the known dims within a tensor's bounds (so that type
  // inference can multiply them without overflow).
  Shape known;
  for (const StaticDim& d : shape) {
    if (d) known.push_back(*d);
  }
  RETURN_IF_ERROR(CheckStaticShape("tensor type", known));
  return TensorType::Make(dtype, std::move(shape));
}

v1::Tensor ToProto(const Tensor& tensor) {
  v1::Tensor msg;
  ToProto(tensor, &msg);
  return msg;
}

void ToProto(const Tensor& tensor, v1::Tensor* out) {
  out->set_dtype(ToProto(tensor.dtype()));
  for (int64_t d : tensor.shape()) out->add_shape(d);
  const Tensor c = tensor.Contiguous();
  out->set_data(c.raw_data(), c.nbytes());
}

absl::StatusOr<Tensor> FromProto(const v1::Tensor& msg, int64_t max_bytes) {
  ASSIGN_OR_RETURN(DType dtype, FromProto(msg.dtype()));
  Shape shape(msg.shape().begin(), msg.shape().end());
  RETURN_IF_ERROR(CheckShape("tensor", shape, dtype));
  if (ShapeSize(shape) * DTypeSize(dtype) > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("tensor: more than ", max_bytes, " bytes"));
  }
  return Tensor::FromBytes(dtype, std::move(shape), msg.data());
}

absl::StatusOr<std::vector<Tensor>> FromProto(
    const google::protobuf::RepeatedPtrField<v1::Tensor>& tensors) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const v1::Tensor& t : tensors) {
    ASSIGN_OR_RETURN(Tensor value, FromProto(t));
    out.push_back(std::move(value));
  }
  return out;
}

}  // namespace kiln
