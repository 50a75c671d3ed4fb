// Small helpers the op families share: their error values and integer scalars of tensors.
#ifndef KILN_CORE_OPS_OP_UTIL_H_
#define KILN_CORE_OPS_OP_UTIL_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/graph/basic.h"
#include "core/graph/op.h"
#include "core/graph/type.h"
#include "core/runtime/tensor.h"

namespace kiln {

// INVALID_ARGUMENT with the op's name first: "Reshape{2}: <message>".
inline absl::Status Invalid(const Op& op, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(op.Name(), ": ", message));
}

// The first element of an integer (or any) tensor as int64.
inline int64_t ScalarInt(const Tensor& t) { return t.AsType(DType::kInt64).data<int64_t>()[0]; }

// The value of a constant integer scalar, or nullopt for a symbolic one.
inline std::optional<int64_t> ConstantInt(const VariablePtr& v) {
  if (!v->is_constant()) return std::nullopt;
  return ScalarInt(static_cast<const Constant&>(*v).data());
}

// Input i as a tensor of rank `ndim` (any rank when -1), of an integer dtype when `integer`, or
// INVALID_ARGUMENT saying that `what` is needed.
inline absl::StatusOr<const TensorType*> ExpectTensor(const Op& op,
                                                      const std::vector<VariablePtr>& in, size_t i,
                                                      int ndim, bool integer, const char* what) {
  const TensorType* t = in[i]->tensor_type();
  if (t == nullptr || (ndim >= 0 && t->ndim() != ndim) || (integer && !IsInteger(t->dtype()))) {
    return Invalid(op, absl::StrCat("input ", i, " has type ", in[i]->type()->ToString(), " but ",
                                    what, " is needed"));
  }
  return t;
}

}  // namespace kiln

#endif  // KILN_CORE_OPS_OP_UTIL_H_
