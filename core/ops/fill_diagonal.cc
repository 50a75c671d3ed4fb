#include "core/ops/fill_diagonal.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(FillDiagonal);

absl::StatusOr<ApplyPtr> FillDiagonal::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 2) return Invalid(*this, "expects 2 inputs (a, val)");
  for (int i : {0, 1}) {
    if (inputs[i]->tensor_type() == nullptr) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                         ", which is not a TensorType"));
    }
  }
  const TensorType* a = inputs[0]->tensor_type();
  const TensorType* val = inputs[1]->tensor_type();
  // Aesara's checks, in its order and words.
  if (a->ndim() < 2) {
    return Invalid(*this, absl::StrCat("input 0 (a) has type ", a->ToString(),
                                       ": first parameter must have at least two dimensions"));
  }
  if (val->ndim() != 0) {
    return Invalid(*this, absl::StrCat("input 1 (val) has type ", val->ToString(),
                                       ": second parameter must be a scalar"));
  }
  // val is cast to upcast(a.dtype, val.dtype), which must be a's dtype.
  if (PromoteTypes(a->dtype(), val->dtype()) != a->dtype()) {
    return Invalid(*this, absl::StrCat("input 1 (val) has type ", val->ToString(),
                                       " but input 0 (a) has ", a->ToString(),
                                       ": type of second parameter must be the same as the "
                                       "first's"));
  }
  if (val->dtype() != a->dtype()) {
    const Var cast_val = cast(Var(inputs[1]), a->dtype());
    if (!cast_val.ok()) return cast_val.status();
    inputs[1] = cast_val.ptr();
  }
  TypePtr out = TensorType::Make(a->dtype(), a->shape());
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> FillDiagonal::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status FillDiagonal::Perform(const Apply&, std::span<const Tensor> inputs,
                                   std::vector<Tensor>& outputs) const {
  const Tensor& a = inputs[0];
  const Shape& dims = a.shape();
  // numpy.fill_diagonal's condition; Aesara lets a matrix be rectangular.
  if (a.ndim() > 2 &&
      std::adjacent_find(dims.begin(), dims.end(), std::not_equal_to<>()) != dims.end()) {
    return Invalid(*this, absl::StrCat("input 0 (a) has shape ", ShapeToString(dims),
                                       ": all dimensions of input must be of equal length"));
  }
  if (inputs[1].size() != 1) {
    return Invalid(*this, absl::StrCat("input 1 (val) has shape ", ShapeToString(inputs[1].shape()),
                                       " but must be a scalar"));
  }
  RETURN_IF_ERROR(CheckOutputShape(*this, dims, a.dtype()));
  Tensor out = a.AsType(a.dtype());  // a C-contiguous copy
  const Tensor val = inputs[1].AsType(a.dtype());
  // a[i, ..., i] is i times the sum of the C-order strides from the start, for i below the
  // smallest dim (a tall matrix's rows past its width keep their values).
  const std::vector<int64_t> strides = ContiguousStrides(dims);
  int64_t step = 0;
  for (int64_t s : strides) step += s;
  const int64_t count = *std::min_element(dims.begin(), dims.end());
  const int64_t size = DTypeSize(a.dtype());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * step * size, val.raw_data(), size);
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

// Aesara's grad: gz with its diagonal zeroed for a, the sum of gz's diagonal for val; for
// matrices only, and not for complex values (Aesara returns None there).
std::vector<Var> FillDiagonal::LOp(const Apply& node, const std::vector<Var>& g) const {
  const VariablePtr& a = node.inputs()[0];
  const VariablePtr& val = node.inputs()[1];
  const TensorType* type = a->tensor_type();
  if (IsComplex(type->dtype()) || type->ndim() > 2) {
    const char* why = IsComplex(type->dtype())
                          ? "The gradient of complex values is not defined."
                          : "The gradient is currently implemented for matrices only.";
    return {grad_not_implemented(Name(), 0, a, why), grad_not_implemented(Name(), 1, val, why)};
  }
  const Var& gz = g[0];
  const Var zero = scalar_constant(0.0, gz.dtype());
  const Var ga = ApplyOp(self(), {gz, zero});
  // Aesara's diag(gz).sum(); Kiln has no ExtractDiag, so the diagonal is picked by an eye mask.
  const Var diagonal = eye(shape_i(gz, 0), shape_i(gz, 1), constant(int64_t{0}), DType::kBool);
  const Var gval = sum(switch_(diagonal, gz, zero));
  return {ga, gval};
}

Var fill_diagonal(const Var& a, const Var& val) {
  return ApplyOp(OpPtr(std::make_shared<FillDiagonal>()), {a, val});
}

}  // namespace kiln
