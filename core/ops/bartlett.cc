#include "core/ops/bartlett.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(Bartlett);

absl::StatusOr<ApplyPtr> Bartlett::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) {
    return Invalid(*this, absl::StrCat("expects 1 input (M), got ", inputs.size()));
  }
  const TensorType* m = inputs[0]->tensor_type();
  if (m == nullptr || m->ndim() != 0 || !IsInteger(m->dtype())) {
    return Invalid(*this, absl::StrCat("input 0 (M) has type ", inputs[0]->type()->ToString(),
                                       " but an integer scalar is needed"));
  }
  return Apply::Make(self(), std::move(inputs),
                     {TensorType::Make(DType::kFloat64, StaticShape{std::nullopt})});
}

// max(M, 0) points (Aesara's switch(M < 0, 0, M)), as int64.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> Bartlett::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>&) const {
  const Var m = cast(Var(node.inputs()[0]), DType::kInt64);
  return std::vector<std::vector<VariablePtr>>{{maximum(m, constant(int64_t{0})).ptr()}};
}

absl::Status Bartlett::Perform(const Apply&, std::span<const Tensor> inputs,
                               std::vector<Tensor>& outputs) const {
  const Tensor m = inputs[0].Contiguous();
  if (m.dtype() == DType::kUInt64 &&
      m.data<uint64_t>()[0] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Invalid(*this, absl::StrCat("M = ", m.data<uint64_t>()[0], " points is too many"));
  }
  const int64_t n = std::max<int64_t>(ScalarInt(m), 0);
  RETURN_IF_ERROR(CheckOutputShape(*this, {n}, DType::kFloat64));
  Tensor out = Tensor::Empty(DType::kFloat64, {n});
  double* w = out.data<double>();
  if (n == 1) w[0] = 1.0;
  if (n > 1) {
    // NumPy's expression, for the same roundings: k = 1 - M, 3 - M, ..., M - 1 and
    // 1 + k / (M - 1) for k <= 0, 1 - k / (M - 1) after.
    const double last = static_cast<double>(n - 1);
    for (int64_t i = 0; i < n; ++i) {
      const double k = static_cast<double>(1 - n + 2 * i);
      w[i] = k <= 0 ? 1 + k / last : 1 - k / last;
    }
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

// M only sets the length: Aesara's grad is None (undefined).
std::vector<Var> Bartlett::LOp(const Apply& node, const std::vector<Var>&) const {
  return {grad_undefined(Name(), 0, node.inputs()[0])};
}

Var bartlett(const Var& m) { return ApplyOp(std::make_shared<Bartlett>(), {m}); }

}  // namespace kiln
