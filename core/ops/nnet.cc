#include "core/ops/nnet.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/math.h"
#include "core/ops/nnet_xent.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/dtype_dispatch.h"

namespace kiln {
namespace {

// Calls f(base, stride, n) for every 1-D line along `axis` of a contiguous tensor, polling the
// call's interrupt as the lines go. An empty tensor has no lines (however many empty ones its
// other dims would make), so the work is bounded by its size.
template <typename F>
absl::Status ForEachLine(const Shape& shape, int axis, F&& f) {
  for (int64_t d : shape) {
    if (d == 0) return absl::OkStatus();
  }
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < static_cast<int>(shape.size()); ++d) inner *= shape[d];
  const int64_t n = shape.empty() ? 1 : shape[axis];
  InterruptPoller poller;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      f(o * n * inner + i, inner, n);
      RETURN_IF_ERROR(poller.Tick(n));
    }
  }
  return absl::OkStatus();
}

// NaN after every number, as NumPy sorts.
template <typename T>
bool Less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

}  // namespace

namespace {

// Softmax and LogSoftmax take a float tensor, sorting a real one; the axis must exist.
absl::Status CheckAxisInput(const Op& op, const std::vector<VariablePtr>& inputs,
                            const std::optional<int>& axis, bool floats_only) {
  if (inputs.size() != 1) return absl::InvalidArgumentError(op.Name() + ": expects 1 input");
  const TensorType* t = inputs[0]->tensor_type();
  if (t == nullptr || IsComplex(t->dtype()) || (floats_only && !IsFloat(t->dtype()))) {
    return absl::InvalidArgumentError(
        absl::StrCat(op.Name(), ": input 0 has type ", inputs[0]->type()->ToString(), " but ",
                     floats_only ? "a float tensor" : "a real tensor", " is needed"));
  }
  if (axis && (*axis < 0 || *axis >= t->ndim())) {
    return absl::InvalidArgumentError(
        absl::StrCat(op.Name(), ": axis ", *axis, " is out of bounds for ", t->ToString()));
  }
  return absl::OkStatus();
}

// The output type of sorting x along `axis` (None: flattened), as `dtype`.
TypePtr SortedType(const TensorType& x, const std::optional<int>& axis, DType dtype) {
  return TensorType::Make(dtype, axis ? x.shape() : StaticShape{std::nullopt});
}

// x in its compute type (float16 as float32), contiguous and a copy the kernels may overwrite.
Tensor WorkingCopy(const Tensor& x) {
  return x.AsType(x.dtype() == DType::kFloat16 ? DType::kFloat32 : x.dtype());
}

// Softmax (or LogSoftmax) of every line along `axis` (None: all elements as one line).
absl::StatusOr<Tensor> SoftmaxOf(const Tensor& input, const std::optional<int>& axis, bool log) {
  Tensor values = WorkingCopy(input.Contiguous());
  const Shape lines = axis ? values.shape() : Shape{values.size()};
  absl::Status status;
  DispatchDType(values.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      T* p = values.data<T>();
      status = ForEachLine(lines, axis.value_or(0), [&](int64_t base, int64_t stride, int64_t n) {
        auto at = [&](int64_t i) -> T& { return p[base + i * stride]; };
        if (n == 0) return;
        T m = at(0);
        for (int64_t i = 1; i < n; ++i) m = std::max(m, at(i));
        if (!std::isfinite(m)) m = 0;  // all -inf (or inf): let the arithmetic decide
        T sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += std::exp(at(i) - m);
        const T log_sum = std::log(sum);
        for (int64_t i = 0; i < n; ++i) {
          at(i) = log ? at(i) - m - log_sum : std::exp(at(i) - m) / sum;
        }
      });
    }
  });
  RETURN_IF_ERROR(status);
  return values.dtype() == input.dtype() ? values : values.AsType(input.dtype());
}

// The sorted values (or, with `indices`, the sorting indices) of every line along `axis`
// (None: the flattened tensor).
absl::StatusOr<Tensor> SortOf(const Tensor& input, const std::optional<int>& axis, bool indices) {
  Tensor x = input.Contiguous();
  if (!axis) x = x.View({x.size()}, {1});
  // The indices are int64 whatever x's dtype: up to 8 times its bytes.
  if (indices) RETURN_IF_ERROR(CheckShape("ArgSortOp", x.shape(), DType::kInt64));
  Tensor values = WorkingCopy(x);
  Tensor order_out = indices ? Tensor::Empty(DType::kInt64, x.shape()) : Tensor();
  absl::Status status;
  DispatchDType(values.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, Eigen::half> && !IsComplexType<T>::value) {
      T* p = values.data<T>();
      status =
          ForEachLine(x.shape(), axis.value_or(0), [&](int64_t base, int64_t stride, int64_t n) {
            auto at = [&](int64_t i) -> T& { return p[base + i * stride]; };
            std::vector<int64_t> order(n);
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(),
                             [&](int64_t a, int64_t b) { return Less(at(a), at(b)); });
            if (indices) {
              int64_t* q = order_out.data<int64_t>();
              for (int64_t i = 0; i < n; ++i) q[base + i * stride] = order[i];
              return;
            }
            std::vector<T> sorted(n);
            for (int64_t i = 0; i < n; ++i) sorted[i] = at(order[i]);
            for (int64_t i = 0; i < n; ++i) at(i) = sorted[i];
          });
    }
  });
  RETURN_IF_ERROR(status);
  if (indices) return order_out;
  return values.dtype() == x.dtype() ? values : values.AsType(x.dtype());
}

}  // namespace

KILN_REGISTER_OP(Softmax);
KILN_REGISTER_OP(LogSoftmax);
KILN_REGISTER_OP(SortOp);
KILN_REGISTER_OP(ArgSortOp);

std::string SortOp::Name() const {
  return absl::StrCat("SortOp{quicksort, axis=", axis() ? absl::StrCat(*axis()) : "None", "}");
}
std::string ArgSortOp::Name() const {
  return absl::StrCat("ArgSortOp{quicksort, axis=", axis() ? absl::StrCat(*axis()) : "None", "}");
}

absl::StatusOr<ApplyPtr> Softmax::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(CheckAxisInput(*this, inputs, axis(), true));
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {type});
}
absl::StatusOr<ApplyPtr> LogSoftmax::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(CheckAxisInput(*this, inputs, axis(), true));
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {type});
}
absl::StatusOr<ApplyPtr> SortOp::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(CheckAxisInput(*this, inputs, axis(), false));
  const TensorType& x = *inputs[0]->tensor_type();
  return Apply::Make(self(), std::move(inputs), {SortedType(x, axis(), x.dtype())});
}
absl::StatusOr<ApplyPtr> ArgSortOp::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(CheckAxisInput(*this, inputs, axis(), false));
  const TensorType& x = *inputs[0]->tensor_type();
  return Apply::Make(self(), std::move(inputs), {SortedType(x, axis(), DType::kInt64)});
}

absl::Status Softmax::Perform(const Apply&, std::span<const Tensor> inputs,
                              std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(outputs[0], SoftmaxOf(inputs[0], axis(), /*log=*/false));
  return absl::OkStatus();
}
absl::Status LogSoftmax::Perform(const Apply&, std::span<const Tensor> inputs,
                                 std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(outputs[0], SoftmaxOf(inputs[0], axis(), /*log=*/true));
  return absl::OkStatus();
}
absl::Status SortOp::Perform(const Apply&, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(outputs[0], SortOf(inputs[0], axis(), /*indices=*/false));
  return absl::OkStatus();
}
absl::Status ArgSortOp::Perform(const Apply&, std::span<const Tensor> inputs,
                                std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(outputs[0], SortOf(inputs[0], axis(), /*indices=*/true));
  return absl::OkStatus();
}

namespace {

// Op{axis} applied to x, a negative axis counted from the end.
template <typename AxisOpClass>
Var ApplyAlongAxis(const Var& x, std::optional<int> axis) {
  if (!x.ok()) return x;
  if (axis && *axis < 0 && x->tensor_type()) axis = *axis + x.ndim();
  return ApplyOp(OpPtr(std::make_shared<AxisOpClass>(AxisAttrs{axis})), {x});
}

}  // namespace

Var softmax(const Var& x, std::optional<int> axis) { return ApplyAlongAxis<Softmax>(x, axis); }
Var log_softmax(const Var& x, std::optional<int> axis) {
  return ApplyAlongAxis<LogSoftmax>(x, axis);
}
Var sort(const Var& x, std::optional<int> axis) { return ApplyAlongAxis<SortOp>(x, axis); }
Var argsort(const Var& x, std::optional<int> axis) { return ApplyAlongAxis<ArgSortOp>(x, axis); }

Var logsumexp(const Var& x, Axes axes, bool keepdims) {
  Var m = max(x, axes, /*keepdims=*/true);
  // A -inf maximum (all -inf, or empty) would give NaN in x - m; use 0 there.
  Var safe = switch_(isinf(m), zeros_like(m), m);
  Var r = log(sum(exp(x - safe), axes, /*keepdims=*/true)) + safe;
  if (keepdims) return r;
  if (!r.ok()) return r;
  std::vector<int> order;
  const std::vector<int> reduced = [&] {
    std::vector<int> all(x.ndim());
    std::iota(all.begin(), all.end(), 0);
    if (!axes.axes) return all;
    std::vector<int> list = *axes.axes;
    for (int& a : list) a = a < 0 ? a + x.ndim() : a;
    return list;
  }();
  for (int d = 0; d < x.ndim(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) order.push_back(d);
  }
  return dimshuffle(r, order);
}

Var relu(const Var& x, double alpha) {
  if (alpha == 0.0) return 0.5 * (x + abs(x));
  const double f1 = 0.5 * (1 + alpha), f2 = 0.5 * (1 - alpha);
  return f1 * x + f2 * abs(x);
}

Var binary_crossentropy(const Var& output, const Var& target) {
  return -(target * log(output) + (1.0 - target) * log(1.0 - output));
}

Var categorical_crossentropy(const Var& coding_dist, const Var& true_dist) {
  if (!coding_dist.ok()) return coding_dist;
  if (!true_dist.ok()) return true_dist;
  if (true_dist->tensor_type() && true_dist.ndim() == coding_dist.ndim()) {
    return -sum(true_dist * log(coding_dist), coding_dist.ndim() - 1);
  }
  if (!true_dist->tensor_type() || !IsInteger(true_dist.dtype()) || true_dist.ndim() != 1 ||
      coding_dist.ndim() != 2) {
    return Var(absl::InvalidArgumentError(absl::StrCat(
        "categorical_crossentropy: true_dist has type ", true_dist->type()->ToString(),
        "; it must be a distribution like coding_dist or an integer vector of labels for a "
        "matrix coding_dist")));
  }
  // -log(p[i, t[i]]): Aesara's CrossentropyCategorical1Hot.
  return crossentropy_categorical_1hot(coding_dist, true_dist);
}

// Softmax keeps the shape; sorting keeps it along an axis and flattens without one.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> Softmax::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}
absl::StatusOr<std::vector<std::vector<VariablePtr>>> LogSoftmax::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}
absl::StatusOr<std::vector<std::vector<VariablePtr>>> SortOp::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{axis() ? in[0] : ShapeVars{ProductOf(in[0])}};
}
absl::StatusOr<std::vector<std::vector<VariablePtr>>> ArgSortOp::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{axis() ? in[0] : ShapeVars{ProductOf(in[0])}};
}

}  // namespace kiln
