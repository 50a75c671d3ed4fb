// ONNX tensors and element types <-> Kiln's (TensorProto's storage fields, little-endian).
#ifndef KILN_PROTO_ONNX_ONNX_TENSOR_H_
#define KILN_PROTO_ONNX_ONNX_TENSOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/tensor/tensor.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx {

// The Kiln dtype of ONNX's TensorProto.DataType `elem_type`; UNIMPLEMENTED for STRING and
// BFLOAT16 (Kiln has neither), INVALID_ARGUMENT for a value ONNX does not define.
absl::StatusOr<DType> DTypeFromOnnx(int32_t elem_type);
// ONNX's TensorProto.DataType of a Kiln dtype.
int32_t DTypeToOnnx(DType dtype);

// The tensor a TensorProto holds (raw_data or the typed field its type uses); `what` names it in
// errors. At most `max_bytes` bytes; external data is refused.
absl::StatusOr<Tensor> TensorFromOnnx(const ::onnx::TensorProto& proto, absl::string_view what,
                                      int64_t max_bytes);
// A TensorProto holding `t` (as raw_data), named `name`.
::onnx::TensorProto TensorToOnnx(const Tensor& t, const std::string& name);

}  // namespace kiln::onnx

#endif  // KILN_PROTO_ONNX_ONNX_TENSOR_H_
