#include "core/ops/nonzero.h"

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"

namespace kiln {

KILN_REGISTER_OP(Nonzero);

absl::StatusOr<ApplyPtr> Nonzero::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input (a)");
  const TensorType* a = inputs[0]->tensor_type();
  if (a == nullptr) {
    return Invalid(*this, absl::StrCat("input 0 has type ", inputs[0]->type()->ToString(),
                                       ", which is not a TensorType"));
  }
  if (a->ndim() == 0) {
    return Invalid(*this, absl::StrCat("input 0 has type ", a->ToString(),
                                       " but nonzero needs at least one dim"));
  }
  TypePtr out = TensorType::Make(DType::kInt64, {a->ndim(), std::nullopt});
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

// (a.ndim, the number of nonzero elements).
absl::StatusOr<std::vector<std::vector<VariablePtr>>> Nonzero::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const Var count = cast(sum(neq(Var(node.inputs()[0]), constant(int64_t{0}))), DType::kInt64);
  if (!count.ok()) return count.status();
  return std::vector<std::vector<VariablePtr>>{
      {constant(static_cast<int64_t>(in[0].size())).ptr(), count.ptr()}};
}

absl::Status Nonzero::Perform(const Apply&, std::span<const Tensor> inputs,
                              std::vector<Tensor>& outputs) const {
  const Tensor mask = inputs[0].AsType(DType::kBool).Contiguous();
  const bool* m = mask.data<bool>();
  int64_t count = 0;
  for (int64_t i = 0; i < mask.size(); ++i) count += m[i];
  const int ndim = mask.ndim();
  RETURN_IF_ERROR(CheckShape(Name(), {ndim, count}, DType::kInt64));
  Tensor out = Tensor::Empty(DType::kInt64, {ndim, count});
  int64_t* rows = out.data<int64_t>();
  std::vector<int64_t> coord(ndim, 0);
  for (int64_t i = 0, k = 0; i < mask.size(); ++i) {
    if (m[i]) {
      for (int d = 0; d < ndim; ++d) rows[d * count + k] = coord[d];
      ++k;
    }
    // The next element's coordinates, in C order.
    for (int d = ndim - 1; d >= 0 && ++coord[d] == mask.shape()[d]; --d) coord[d] = 0;
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

std::vector<Var> Nonzero::LOp(const Apply&, const std::vector<Var>&) const {
  return {disconnected_type()};
}

std::vector<Var> nonzero(const Var& a) {
  const Var rows = ApplyOp(OpPtr(std::make_shared<Nonzero>()), {a});
  if (!rows.ok()) return {rows};
  std::vector<Var> out;
  for (int d = 0; d < a.ndim(); ++d) out.push_back(subtensor(rows, {Index(d)}));
  return out;
}

}  // namespace kiln
