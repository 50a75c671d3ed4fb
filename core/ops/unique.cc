#include "core/ops/unique.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/array_compare.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(Unique);

absl::Status UniqueAttrs::Check() const {
  if (axis && (*axis < -64 || *axis > 64)) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'axis' is out of range: ", *axis));
  }
  return absl::OkStatus();
}

namespace {

// The axis as a dim of x (rank ndim), or INVALID_ARGUMENT in Aesara's words.
absl::StatusOr<int> UniqueAxis(const Unique& op, int axis, int ndim) {
  const int a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim) {
    return Invalid(op, absl::StrCat("Unique axis ", axis, " is outside of input ndim = ", ndim));
  }
  return a;
}

// The unique rows of a contiguous (rows, width) block of T: the first row of each group of equal
// rows in sorted order, and each row's group. Rows compare lexicographically in NumPy's order;
// with `collapse_nan` (single elements) NaNs are one value, else NaN differs from everything.
struct Groups {
  std::vector<int64_t> first;    // per group: the row of its first occurrence
  std::vector<int64_t> counts;   // per group: its size
  std::vector<int64_t> inverse;  // per row: its group
};

template <typename T>
absl::Status GroupRows(const T* p, int64_t rows, int64_t width, bool collapse_nan, Groups& g) {
  auto row_less = [&](int64_t a, int64_t b) {
    for (int64_t j = 0; j < width; ++j) {
      const T& x = p[a * width + j];
      const T& y = p[b * width + j];
      if (array_compare::Less(x, y)) return true;
      if (array_compare::Less(y, x)) return false;
    }
    return false;
  };
  auto row_same = [&](int64_t a, int64_t b) {
    for (int64_t j = 0; j < width; ++j) {
      const T& x = p[a * width + j];
      const T& y = p[b * width + j];
      if (collapse_nan ? !array_compare::Same(x, y) : !(x == y)) return false;
    }
    return true;
  };
  std::vector<int64_t> order(rows);
  std::iota(order.begin(), order.end(), 0);
  // Stable: the first row of each group is its first occurrence (numpy's return_index).
  std::stable_sort(order.begin(), order.end(), row_less);
  RETURN_IF_ERROR(InterruptPoller().Tick(InterruptPoller::kPollInterval));
  g.inverse.assign(rows, 0);
  for (int64_t i = 0; i < rows; ++i) {
    if (i == 0 || !row_same(order[i - 1], order[i])) {
      g.first.push_back(order[i]);
      g.counts.push_back(0);
    }
    ++g.counts.back();
    g.inverse[order[i]] = static_cast<int64_t>(g.first.size()) - 1;
  }
  return absl::OkStatus();
}

Tensor Int64Vector(const std::vector<int64_t>& v) {
  Tensor t = Tensor::Empty(DType::kInt64, {static_cast<int64_t>(v.size())});
  if (!v.empty()) std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

}  // namespace

absl::StatusOr<ApplyPtr> Unique::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input (x)");
  ASSIGN_OR_RETURN(const TensorType* x, ExpectTensor(*this, inputs, 0, -1, false, "a tensor"));
  StaticShape shape = {std::nullopt};
  if (attrs().axis) {
    ASSIGN_OR_RETURN(const int axis, UniqueAxis(*this, *attrs().axis, x->ndim()));
    shape.clear();
    for (int d = 0; d < x->ndim(); ++d) {
      const StaticDim s = x->shape()[d];
      shape.push_back(s == StaticDim(1) && d != axis ? StaticDim(1) : std::nullopt);
    }
  }
  std::vector<TypePtr> outs = {TensorType::Make(x->dtype(), shape)};
  const int extra = attrs().return_index + attrs().return_inverse + attrs().return_counts;
  for (int i = 0; i < extra; ++i) outs.push_back(TensorType::Make(DType::kInt64, {std::nullopt}));
  return Apply::Make(self(), std::move(inputs), std::move(outs));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Unique::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  // Aesara's: the unique values' length is the output's own (known when it runs); the inverse
  // has x's size (or its length along the axis).
  std::vector<ShapeVars> out;
  const VariablePtr values = node.output(0);
  std::optional<int> axis;
  if (attrs().axis) {
    ASSIGN_OR_RETURN(axis, UniqueAxis(*this, *attrs().axis, static_cast<int>(in[0].size())));
    ShapeVars dims = in[0];
    dims[*axis] = DimOf(values, *axis);
    out.push_back(dims);
  } else {
    out.push_back({DimOf(values, 0)});
  }
  if (attrs().return_index) out.push_back({DimOf(values, axis.value_or(0))});
  if (attrs().return_inverse) out.push_back({axis ? in[0][*axis] : ProductOf(in[0])});
  if (attrs().return_counts) out.push_back({DimOf(values, axis.value_or(0))});
  return out;
}

absl::Status Unique::Perform(const Apply& node, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  std::optional<int> axis;
  if (attrs().axis) {
    ASSIGN_OR_RETURN(axis, UniqueAxis(*this, *attrs().axis, x.ndim()));
  }
  // The rows compared: x's elements, or x's slices along the axis moved to the front.
  Tensor rows_t;
  int64_t rows = x.size(), width = 1;
  Shape moved;
  if (axis) {
    std::vector<int64_t> strides = {x.strides()[*axis]};
    moved = {x.shape()[*axis]};
    for (int d = 0; d < x.ndim(); ++d) {
      if (d == *axis) continue;
      moved.push_back(x.shape()[d]);
      strides.push_back(x.strides()[d]);
    }
    rows = moved[0];
    width = rows == 0 ? 0 : x.size() / rows;
    rows_t = x.View(moved, strides).AsType(array_compare::ComputeDType(x.dtype()));
  } else {
    rows_t = x.AsType(array_compare::ComputeDType(x.dtype()));
  }
  Groups g;
  absl::Status status;
  DispatchDType(rows_t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, Eigen::half>) {
      status = GroupRows(rows_t.data<T>(), rows, width, !axis, g);
    }
  });
  RETURN_IF_ERROR(status);
  // The unique rows, gathered in sorted order, then given back x's dim order.
  const int64_t count = static_cast<int64_t>(g.first.size());
  Shape unique_shape = axis ? moved : Shape{count};
  if (axis) unique_shape[0] = count;
  RETURN_IF_ERROR(CheckOutputShape(*this, unique_shape, rows_t.dtype()));
  Tensor values = Tensor::Empty(rows_t.dtype(), unique_shape);
  const int64_t row_bytes = width * DTypeSize(rows_t.dtype());
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(static_cast<char*>(values.raw_data()) + i * row_bytes,
                static_cast<const char*>(rows_t.raw_data()) + g.first[i] * row_bytes, row_bytes);
  }
  if (axis) {
    // Dim 0 of `values` goes back to the axis.
    std::vector<int64_t> st = ContiguousStrides(unique_shape);
    Shape shape;
    std::vector<int64_t> strides;
    for (int d = 0, k = 1; d < x.ndim(); ++d) {
      if (d == *axis) {
        shape.push_back(unique_shape[0]), strides.push_back(st[0]);
      } else {
        shape.push_back(unique_shape[k]), strides.push_back(st[k]), ++k;
      }
    }
    values = values.View(shape, strides);
  }
  outputs[0] = values.AsType(x.dtype());
  size_t next = 1;
  if (attrs().return_index) outputs[next++] = Int64Vector(g.first);
  if (attrs().return_inverse) outputs[next++] = Int64Vector(g.inverse);
  if (attrs().return_counts) outputs[next++] = Int64Vector(g.counts);
  return absl::OkStatus();
}

std::vector<Var> Unique::LOp(const Apply&, const std::vector<Var>&) const {
  return {disconnected_type()};
}

std::vector<Var> unique(const Var& x, bool return_index, bool return_inverse, bool return_counts,
                        std::optional<int> axis) {
  const int n = 1 + return_index + return_inverse + return_counts;
  if (!x.ok()) return std::vector<Var>(n, x);
  const UniqueAttrs attrs{return_index, return_inverse, return_counts, axis};
  if (absl::Status s = attrs.Check(); !s.ok()) {
    return std::vector<Var>(n,
                            Var(absl::InvalidArgumentError(absl::StrCat("Unique: ", s.message()))));
  }
  const OpPtr op = std::make_shared<Unique>(attrs);
  absl::StatusOr<ApplyPtr> node = op->MakeNode({x.ptr()});
  if (!node.ok()) return std::vector<Var>(n, Var(node.status()));
  std::vector<Var> out;
  for (int i = 0; i < n; ++i) out.push_back(Var((*node)->output(i)));
  return out;
}

}  // namespace kiln
