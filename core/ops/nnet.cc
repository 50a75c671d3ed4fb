#include "core/ops/nnet.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/op_registry.h"
#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/runtime/dtype_dispatch.h"

namespace kiln {
namespace {

// Calls f(base, stride, n) for every 1-D line along `axis` of a contiguous tensor.
template <typename F>
void ForEachLine(const Shape& shape, int axis, F&& f) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < static_cast<int>(shape.size()); ++d) inner *= shape[d];
  const int64_t n = shape.empty() ? 1 : shape[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) f(o * n * inner + i, inner, n);
  }
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

std::string AxisOp::Name() const {
  const std::string axis = axis_ ? absl::StrCat(*axis_) : "None";
  switch (kind_) {
    case OpKind::kSoftmax:
      return absl::StrCat("Softmax{axis=", axis, "}");
    case OpKind::kLogSoftmax:
      return absl::StrCat("LogSoftmax{axis=", axis, "}");
    case OpKind::kSort:
      return absl::StrCat("SortOp{quicksort, axis=", axis, "}");
    default:
      return absl::StrCat("ArgSortOp{quicksort, axis=", axis, "}");
  }
}

absl::StatusOr<ApplyPtr> AxisOp::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return absl::InvalidArgumentError(Name() + ": expects 1 input");
  const TensorType* t = inputs[0]->tensor_type();
  const bool softmax = kind_ == OpKind::kSoftmax || kind_ == OpKind::kLogSoftmax;
  if (t == nullptr || IsComplex(t->dtype()) || (softmax && !IsFloat(t->dtype()))) {
    return absl::InvalidArgumentError(
        absl::StrCat(Name(), ": input 0 has type ", inputs[0]->type()->ToString(), " but ",
                     softmax ? "a float tensor" : "a real tensor", " is needed"));
  }
  if (axis_ && (*axis_ < 0 || *axis_ >= t->ndim())) {
    return absl::InvalidArgumentError(
        absl::StrCat(Name(), ": axis ", *axis_, " is out of bounds for ", t->ToString()));
  }
  TypePtr out = inputs[0]->type();
  if (!axis_ && !softmax) out = TensorType::Make(t->dtype(), {std::nullopt});
  if (kind_ == OpKind::kArgSort) {
    out = TensorType::Make(DType::kInt64, static_cast<const TensorType&>(*out).shape());
  }
  return Apply::Make(self(), std::move(inputs), {out});
}

absl::Status AxisOp::Perform(const Apply& node, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  const bool softmax = kind_ == OpKind::kSoftmax || kind_ == OpKind::kLogSoftmax;
  Tensor x = inputs[0].Contiguous();
  if (!axis_ && !softmax) x = x.View({x.size()}, {1});
  const Shape shape = x.shape();
  // With no axis, softmax runs over all elements as one line.
  const Shape lines = axis_ ? shape : Shape{x.size()};
  const int axis = axis_.value_or(0);
  const DType compute = x.dtype() == DType::kFloat16 ? DType::kFloat32 : x.dtype();
  Tensor values = x.AsType(compute);  // a contiguous copy, transformed in place
  Tensor indices;
  if (kind_ == OpKind::kArgSort) indices = Tensor::Empty(DType::kInt64, shape);
  DispatchDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, Eigen::half> && !IsComplexType<T>::value) {
      T* p = values.data<T>();
      ForEachLine(lines, axis, [&](int64_t base, int64_t stride, int64_t n) {
        auto at = [&](int64_t i) -> T& { return p[base + i * stride]; };
        if (kind_ == OpKind::kSoftmax || kind_ == OpKind::kLogSoftmax) {
          if constexpr (std::is_floating_point_v<T>) {
            if (n == 0) return;
            T m = at(0);
            for (int64_t i = 1; i < n; ++i) m = std::max(m, at(i));
            if (!std::isfinite(m)) m = 0;  // all -inf (or inf): let the arithmetic decide
            T sum = 0;
            for (int64_t i = 0; i < n; ++i) sum += std::exp(at(i) - m);
            const T log_sum = std::log(sum);
            for (int64_t i = 0; i < n; ++i) {
              at(i) = kind_ == OpKind::kSoftmax ? std::exp(at(i) - m) / sum : at(i) - m - log_sum;
            }
          }
          return;
        }
        std::vector<int64_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t b) { return Less(at(a), at(b)); });
        if (kind_ == OpKind::kArgSort) {
          int64_t* q = indices.data<int64_t>();
          for (int64_t i = 0; i < n; ++i) q[base + i * stride] = order[i];
        } else {
          std::vector<T> sorted(n);
          for (int64_t i = 0; i < n; ++i) sorted[i] = at(order[i]);
          for (int64_t i = 0; i < n; ++i) at(i) = sorted[i];
        }
      });
    }
  });
  if (kind_ == OpKind::kArgSort) {
    outputs[0] = std::move(indices);
  } else {
    outputs[0] = values.dtype() == x.dtype() ? std::move(values) : values.AsType(x.dtype());
  }
  return absl::OkStatus();
}

namespace {

Var ApplyAxisOp(OpKind kind, const Var& x, std::optional<int> axis) {
  if (!x.ok()) return x;
  if (axis && *axis < 0 && x->tensor_type()) axis = *axis + x.ndim();
  return ApplyOp(OpPtr(std::make_shared<AxisOp>(kind, axis)), {x});
}

}  // namespace

Var softmax(const Var& x, std::optional<int> axis) {
  return ApplyAxisOp(OpKind::kSoftmax, x, axis);
}
Var log_softmax(const Var& x, std::optional<int> axis) {
  return ApplyAxisOp(OpKind::kLogSoftmax, x, axis);
}
Var sort(const Var& x, std::optional<int> axis) { return ApplyAxisOp(OpKind::kSort, x, axis); }
Var argsort(const Var& x, std::optional<int> axis) {
  return ApplyAxisOp(OpKind::kArgSort, x, axis);
}

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
  // -log(p[i, t[i]]): the one-hot mask of the labels selects each row's term.
  Var classes = arange(shape_i(coding_dist, 1));
  Var one_hot = eq(dimshuffle(true_dist, {0, kX}), dimshuffle(classes, {kX, 0}));
  return -sum(switch_(one_hot, log(coding_dist), zeros_like(coding_dist)), 1);
}

// Softmax and sorting along an axis keep the shape; without an axis sorting flattens.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> AxisOp::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  if (axis_ || kind_ == OpKind::kSoftmax || kind_ == OpKind::kLogSoftmax) {
    return std::vector<ShapeVars>{in[0]};
  }
  return std::vector<ShapeVars>{{ProductOf(in[0])}};
}

// --- Wire attributes ----------------------------------------------------------------------------

KILN_REGISTER_OP_KIND(AxisOp, kSoftmax);
KILN_REGISTER_OP_KIND(AxisOp, kLogSoftmax);
KILN_REGISTER_OP_KIND(AxisOp, kSort);
KILN_REGISTER_OP_KIND(AxisOp, kArgSort);

OpAttrs AxisOp::Attrs() const {
  OpAttrs a;
  if (axis_) a.Set("axis", int64_t{*axis_});
  return a;
}

absl::StatusOr<OpPtr> AxisOp::FromAttrs(OpKind kind, const OpAttrs& a) {
  absl::StatusOr<std::optional<int>> axis = DecodeAttr<std::optional<int>>(a, "axis");
  if (!axis.ok()) return axis.status();
  return OpPtr(std::make_shared<AxisOp>(kind, *axis));
}

}  // namespace kiln
