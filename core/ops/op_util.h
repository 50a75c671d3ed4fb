// Small helpers the op families share: their error values, integer scalars of tensors and
// arithmetic on sizes from user values that cannot wrap.
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
#include "core/tensor/tensor.h"

namespace kiln {

// INVALID_ARGUMENT with the op's name first: "Reshape{2}: <message>".
inline absl::Status Invalid(const Op& op, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(op.Name(), ": ", message));
}

// a + b, or nullopt when the sum does not fit an int64.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a * b, or nullopt when the product does not fit an int64.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// CheckShape(op.Name(), shape, dtype) for an output about to be allocated; the op's name is
// built only for an error (kernels call it on every run).
inline absl::Status CheckOutputShape(const Op& op, const Shape& shape, DType dtype) {
  int64_t bytes = DTypeSize(dtype);
  for (int64_t d : shape) {
    // A zero dim or a product past the limit: CheckShape decides and words the error.
    if (d < 1 || __builtin_mul_overflow(bytes, d, &bytes) || bytes > kMaxTensorBytes) {
      return CheckShape(op.Name(), shape, dtype);
    }
  }
  return absl::OkStatus();
}

// The known dims of a type an op makes from constants are bounded as CheckStaticShape says
// (at most kMaxTensorBytes elements), so that no later product of them overflows.
inline absl::Status CheckKnownDims(const Op& op, const StaticShape& shape) {
  Shape known;
  for (const StaticDim& d : shape) known.push_back(d.value_or(1));
  return CheckStaticShape(op.Name(), known);
}

// The first element of an integer (or any) tensor as int64.
inline int64_t ScalarInt(const Tensor& t) {
  return t.dtype() == DType::kInt64 ? t.data<int64_t>()[0]
                                    : t.AsType(DType::kInt64).data<int64_t>()[0];
}

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
