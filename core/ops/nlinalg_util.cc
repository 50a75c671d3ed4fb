#include "core/ops/nlinalg_util.h"

#include "absl/strings/str_cat.h"
#include "core/ops/memory_check.h"
#include "core/ops/op_util.h"

namespace kiln::nlinalg {

DType ComputeDType(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kFloat32:
      return DType::kFloat32;
    case DType::kComplex64:
    case DType::kComplex128:
      return dtype;
    default:
      return DType::kFloat64;
  }
}

DType RealDType(DType compute) {
  if (compute == DType::kComplex64 || compute == DType::kFloat32) return DType::kFloat32;
  return DType::kFloat64;
}

absl::StatusOr<const TensorType*> ExpectRank(const Op& op, const std::vector<VariablePtr>& in,
                                             size_t i, int ndim) {
  const TensorType* t = in[i]->tensor_type();
  if (t == nullptr || t->ndim() != ndim) {
    const char* what = ndim == 2 ? "a matrix" : ndim == 1 ? "a vector" : "a scalar";
    return Invalid(op, absl::StrCat("input ", i, " has type ", in[i]->type()->ToString(), " but ",
                                    what, " is needed"));
  }
  return t;
}

absl::Status CheckStaticSquare(const Op& op, const TensorType& x) {
  const StaticShape& s = x.shape();
  if (s[0].has_value() && s[1].has_value() && *s[0] != *s[1]) {
    return Invalid(op,
                   absl::StrCat("input 0 has type ", x.ToString(), ": the matrix is not square"));
  }
  return absl::OkStatus();
}

absl::Status CheckSquare(const Op& op, const Tensor& x) {
  if (x.shape()[0] != x.shape()[1]) {
    return Invalid(op, absl::StrCat("input 0 has shape ", ShapeToString(x.shape()),
                                    ": Last 2 dimensions of the array must be square"));
  }
  return CheckFits(op, x);
}

absl::Status CheckFits(const Op& op, const Tensor& x) {
  const std::optional<int64_t> bytes = CheckedMul(x.size(), DTypeSize(ComputeDType(x.dtype())));
  return CheckBytesFit(bytes.value_or(-1), [&] {
    return absl::StrCat(op.Name(), ": input 0 of shape ", ShapeToString(x.shape()), " in ",
                        DTypeName(ComputeDType(x.dtype())));
  });
}

Tensor InDType(const Tensor& x, DType dtype) { return x.dtype() == dtype ? x : x.AsType(dtype); }

absl::Status OpError(const Op& op, const absl::Status& status) {
  if (status.ok() || status.code() != absl::StatusCode::kInvalidArgument) return status;
  return Invalid(op, std::string(status.message()));
}

std::vector<Var> OutputsOf(const ApplyPtr& node) {
  std::vector<Var> out;
  for (const VariablePtr& v : node->outputs()) out.push_back(Var(v));
  return out;
}

}  // namespace kiln::nlinalg
