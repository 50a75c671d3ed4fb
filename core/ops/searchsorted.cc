#include "core/ops/searchsorted.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/array_compare.h"
#include "core/ops/grad_util.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(SearchsortedOp);

absl::Status SearchsortedAttrs::Check() const {
  if (side == "left" || side == "right") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("'", side, "' is an invalid value for keyword 'side'"));
}

absl::StatusOr<ApplyPtr> SearchsortedOp::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 2 && inputs.size() != 3) {
    return Invalid(*this, "expects 2 or 3 inputs (x, v[, sorter])");
  }
  RETURN_IF_ERROR(ExpectTensor(*this, inputs, 0, 1, false, "a vector (x)").status());
  ASSIGN_OR_RETURN(const TensorType* v, ExpectTensor(*this, inputs, 1, -1, false, "a tensor (v)"));
  if (inputs.size() == 3) {
    RETURN_IF_ERROR(ExpectTensor(*this, inputs, 2, 1, true, "an integer vector (sorter)").status());
  }
  TypePtr out = TensorType::Make(DType::kInt64, v->shape());
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> SearchsortedOp::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[1]};
}

absl::Status SearchsortedOp::Perform(const Apply&, std::span<const Tensor> inputs,
                                     std::vector<Tensor>& outputs) const {
  const DType common =
      array_compare::ComputeDType(PromoteTypes(inputs[0].dtype(), inputs[1].dtype()));
  const Tensor x = inputs[0].AsType(common);
  const Tensor v = inputs[1].AsType(common);
  const int64_t n = x.size();
  Tensor order;
  if (inputs.size() == 3) {
    order = inputs[2].AsType(DType::kInt64);
    if (order.size() != n) {
      return Invalid(*this,
                     absl::StrCat("input 2 (sorter) has ", order.size(), " entries but x has ", n,
                                  ": sorter.size must equal "
                                  "a.size"));
    }
    const int64_t* p = order.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      if (p[i] < 0 || p[i] >= n) {
        return Invalid(
            *this, absl::StrCat("sorter entry ", p[i], " at ", i, " is out of range for x of ", n,
                                " entries: Sorter index out of range."));
      }
    }
  }
  RETURN_IF_ERROR(CheckOutputShape(*this, v.shape(), DType::kInt64));
  Tensor out = Tensor::Empty(DType::kInt64, v.shape());
  const bool right = attrs().side == "right";
  const int64_t* perm = inputs.size() == 3 ? order.data<int64_t>() : nullptr;
  absl::Status status;
  DispatchDType(common, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Eigen::half>) {
      return;  // (computed as float32)
    } else {
      const T* xs = x.data<T>();
      const T* vs = v.data<T>();
      int64_t* o = out.data<int64_t>();
      auto at = [&](int64_t i) -> const T& { return xs[perm ? perm[i] : i]; };
      InterruptPoller poller;
      for (int64_t e = 0; e < v.size(); ++e) {
        const T& value = vs[e];
        // The first index whose entry is not below value (left), or is above it (right).
        int64_t lo = 0, hi = n;
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo) / 2;
          const bool before =
              right ? !array_compare::Less(value, at(mid)) : array_compare::Less(at(mid), value);
          if (before) {
            lo = mid + 1;
          } else {
            hi = mid;
          }
        }
        o[e] = lo;
        if (status = poller.Tick(64); !status.ok()) return;
      }
    }
  });
  RETURN_IF_ERROR(status);
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

std::vector<std::vector<bool>> SearchsortedOp::ConnectionPattern(const Apply& node) const {
  std::vector<std::vector<bool>> pattern = {{true}, {true}};
  if (node.num_inputs() == 3) pattern.push_back({false});
  return pattern;
}

// Aesara's: zeros (in floatX for integer inputs) for x and v; sorter is disconnected.
std::vector<Var> SearchsortedOp::LOp(const Apply& node, const std::vector<Var>&) const {
  std::vector<Var> grads = {FloatZerosLike(Var(node.inputs()[0])),
                            FloatZerosLike(Var(node.inputs()[1]))};
  if (node.num_inputs() == 3) grads.push_back(disconnected_type());
  return grads;
}

Var searchsorted(const Var& x, const Var& v, const std::string& side,
                 const std::optional<Var>& sorter) {
  const absl::StatusOr<SearchsortedAttrs> attrs = [&]() -> absl::StatusOr<SearchsortedAttrs> {
    SearchsortedAttrs a{side};
    RETURN_IF_ERROR(a.Check());
    return a;
  }();
  if (!attrs.ok())
    return Var(
        absl::InvalidArgumentError(absl::StrCat("SearchsortedOp: ", attrs.status().message())));
  const OpPtr op = std::make_shared<SearchsortedOp>(*attrs);
  if (sorter) return ApplyOp(op, {x, v, *sorter});
  return ApplyOp(op, {x, v});
}

}  // namespace kiln
