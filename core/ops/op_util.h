// Small helpers the op families share: their error values and integer scalars of tensors.
#ifndef KILN_CORE_OPS_OP_UTIL_H_
#define KILN_CORE_OPS_OP_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/graph/op.h"
#include "core/runtime/tensor.h"

namespace kiln {

// INVALID_ARGUMENT with the op's name first: "Reshape{2}: <message>".
inline absl::Status Invalid(const Op& op, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(op.Name(), ": ", message));
}

// The first element of an integer (or any) tensor as int64.
inline int64_t ScalarInt(const Tensor& t) { return t.AsType(DType::kInt64).data<int64_t>()[0]; }

}  // namespace kiln

#endif  // KILN_CORE_OPS_OP_UTIL_H_
