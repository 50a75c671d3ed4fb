// Conversion of dtypes, tensor types and tensors between kiln.v1 messages and core, validating
// everything that arrives from a client.
#ifndef KILN_PROTO_CONVERT_TENSOR_CONVERT_H_
#define KILN_PROTO_CONVERT_TENSOR_CONVERT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/type.h"
#include "core/tensor/tensor.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// The wire dtype of a core dtype.
v1::DType ToProto(DType dtype);
// The core dtype of a wire dtype; INVALID_ARGUMENT for DTYPE_UNSPECIFIED or unknown values.
absl::StatusOr<DType> FromProto(v1::DType dtype);

// TensorType <-> message; negative static sizes are INVALID_ARGUMENT.
v1::TensorType ToProto(const TensorType& type);
// Writes the message in place (on `out`'s arena, without a temporary).
void ToProto(const TensorType& type, v1::TensorType* out);
absl::StatusOr<TensorTypePtr> FromProto(const v1::TensorType& type);

// Tensor <-> message (raw little-endian bytes, C order). A byte count that does not match the
// dtype and shape, a negative dim or more than `max_bytes` of data is INVALID_ARGUMENT.
v1::Tensor ToProto(const Tensor& tensor);
// The same, written into `out` (a message on an arena stays there: no copy of the bytes).
void ToProto(const Tensor& tensor, v1::Tensor* out);
absl::StatusOr<Tensor> FromProto(const v1::Tensor& tensor, int64_t max_bytes = int64_t{1} << 40);
// Every tensor of a list (an Execute's outputs); the first error.
absl::StatusOr<std::vector<Tensor>> FromProto(
    const google::protobuf::RepeatedPtrField<v1::Tensor>& tensors);

}  // namespace kiln

#endif  // KILN_PROTO_CONVERT_TENSOR_CONVERT_H_
