#include "core/ops/diagonal.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/dtype_dispatch.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(ExtractDiag);
KILN_REGISTER_OP(AllocDiag);
KILN_REGISTER_OP(FillDiagonalOffset);
KILN_REGISTER_OP(Tri);

namespace {

// Offsets beyond any dim a tensor can have; bounded so that |offset| and sums of it never wrap.
constexpr int64_t kMaxOffset = int64_t{1} << 62;

absl::Status CheckDiagAttrs(int64_t offset, int axis1, int axis2) {
  if (offset < -kMaxOffset || offset > kMaxOffset) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'offset' is out of range: ", offset));
  }
  for (auto [name, axis] : {std::pair{"axis1", axis1}, std::pair{"axis2", axis2}}) {
    if (axis < -64 || axis > 64) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", name, "' is out of range: ", axis));
    }
  }
  return absl::OkStatus();
}

// axis1 and axis2 of a tensor of rank ndim, from the end when negative, distinct.
absl::StatusOr<std::pair<int, int>> DiagAxes(const Op& op, const TensorType& t, int ndim, int axis1,
                                             int axis2) {
  const int a1 = axis1 < 0 ? axis1 + ndim : axis1, a2 = axis2 < 0 ? axis2 + ndim : axis2;
  if (a1 < 0 || a1 >= ndim || a2 < 0 || a2 >= ndim) {
    return Invalid(
        op, absl::StrCat("axis1 ", axis1, " or axis2 ", axis2, " is out of bounds for a result of ",
                         ndim, " dims from ", t.ToString()));
  }
  if (a1 == a2) return Invalid(op, "axis1 and axis2 cannot be the same");
  return std::pair{a1, a2};
}

// The number of entries of the offset diagonal of a dim1 x dim2 plane.
int64_t DiagSize(int64_t dim1, int64_t dim2, int64_t offset) {
  if (offset >= 0) return std::clamp(dim2 - offset, int64_t{0}, dim1);
  return std::clamp(dim1 + offset, int64_t{0}, dim2);
}

}  // namespace

absl::Status ExtractDiagAttrs::Check() const { return CheckDiagAttrs(offset, axis1, axis2); }
absl::Status AllocDiagAttrs::Check() const { return CheckDiagAttrs(offset, axis1, axis2); }

// ---- ExtractDiag ----

absl::StatusOr<ApplyPtr> ExtractDiag::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input (x)");
  const TensorType* x = inputs[0]->tensor_type();
  if (x == nullptr || x->ndim() < 2) {
    return Invalid(*this, absl::StrCat("input 0 has type ", inputs[0]->type()->ToString(),
                                       " but ExtractDiag needs an input with 2 or more "
                                       "dimensions"));
  }
  RETURN_IF_ERROR(DiagAxes(*this, *x, x->ndim(), attrs().axis1, attrs().axis2).status());
  TypePtr out = TensorType::Make(x->dtype(), StaticShape(x->ndim() - 1, std::nullopt));
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> ExtractDiag::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const TensorType& x = *node.inputs()[0]->tensor_type();
  ASSIGN_OR_RETURN(auto axes, DiagAxes(*this, x, x.ndim(), attrs().axis1, attrs().axis2));
  ShapeVars out;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d != axes.first && d != axes.second) out.push_back(in[0][d]);
  }
  const Var dim1(in[0][axes.first]), dim2(in[0][axes.second]);
  const int64_t k = attrs().offset;
  const Var size = k > 0   ? clip(dim2 - constant(k), constant(int64_t{0}), dim1)
                   : k < 0 ? clip(dim1 + constant(k), constant(int64_t{0}), dim2)
                           : minimum(dim1, dim2);
  ASSIGN_OR_RETURN(VariablePtr s, Unwrap(size));
  out.push_back(s);
  return std::vector<ShapeVars>{out};
}

absl::Status ExtractDiag::Perform(const Apply& node, std::span<const Tensor> inputs,
                                  std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  ASSIGN_OR_RETURN(auto axes, DiagAxes(*this, *node.inputs()[0]->tensor_type(), x.ndim(),
                                       attrs().axis1, attrs().axis2));
  const auto [a1, a2] = axes;
  const int64_t k = attrs().offset;
  const int64_t n = DiagSize(x.shape()[a1], x.shape()[a2], k);
  Shape shape;
  Shape strides;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d == a1 || d == a2) continue;
    shape.push_back(x.shape()[d]);
    strides.push_back(x.strides()[d]);
  }
  shape.push_back(n);
  strides.push_back(x.strides()[a1] + x.strides()[a2]);
  const int64_t start = n == 0 ? 0 : k >= 0 ? k * x.strides()[a2] : -k * x.strides()[a1];
  Tensor view = x.View(shape, strides, start);
  outputs[0] = attrs().view ? std::move(view) : view.AsType(view.dtype());
  return absl::OkStatus();
}

// Aesara's gradient, for matrices: gz laid on the offset diagonal of zeros like x (AllocDiag's
// square, cut to x's shape).
std::vector<Var> ExtractDiag::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  if (x.ndim() != 2) {
    return {grad_not_implemented(Name(), 0, x.ptr(),
                                 "Gradient of ExtractDiag only works for matrices.")};
  }
  const Var square = ApplyOp(OpPtr(std::make_shared<AllocDiag>(
                                 AllocDiagAttrs{attrs().offset, attrs().axis1, attrs().axis2})),
                             {g[0]});
  const Var rows = minimum(shape_i(square, 0), shape_i(x, 0));
  const Var cols = minimum(shape_i(square, 1), shape_i(x, 1));
  const Slice r{std::nullopt, rows, std::nullopt}, c{std::nullopt, cols, std::nullopt};
  const Var zeros = zeros_like(x, g[0].dtype());
  return {set_subtensor(subtensor(zeros, {r, c}), subtensor(square, {r, c}))};
}

// ---- AllocDiag ----

namespace {

// The output shape of AllocDiag on d's shape: d's leading dims with two dims of size
// d.shape[-1] + |offset| at a1 < a2.
template <typename D, typename F>
std::vector<D> AllocDiagShape(const std::vector<D>& in, int a1, int a2, F square) {
  std::vector<D> out(in.begin(), in.end() - 1);
  const D m = square(in.back());
  out.insert(out.begin() + a1, m);
  out.insert(out.begin() + a2, m);
  return out;
}

}  // namespace

absl::StatusOr<ApplyPtr> AllocDiag::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input (diag)");
  const TensorType* d = inputs[0]->tensor_type();
  if (d == nullptr || d->ndim() < 1) {
    return Invalid(*this, absl::StrCat("input 0 has type ", inputs[0]->type()->ToString(),
                                       " but AllocDiag needs an input with 1 or more "
                                       "dimensions"));
  }
  RETURN_IF_ERROR(DiagAxes(*this, *d, d->ndim() + 1, attrs().axis1, attrs().axis2).status());
  TypePtr out = TensorType::Make(d->dtype(), StaticShape(d->ndim() + 1, std::nullopt));
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> AllocDiag::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const TensorType& d = *node.inputs()[0]->tensor_type();
  ASSIGN_OR_RETURN(auto axes, DiagAxes(*this, d, d.ndim() + 1, attrs().axis1, attrs().axis2));
  const int64_t k = std::abs(attrs().offset);
  absl::Status status;
  ShapeVars out = AllocDiagShape(in[0], std::min(axes.first, axes.second),
                                 std::max(axes.first, axes.second), [&](const VariablePtr& n) {
                                   absl::StatusOr<VariablePtr> m = Unwrap(Var(n) + constant(k));
                                   if (!m.ok()) status = m.status();
                                   return m.ok() ? *m : n;
                                 });
  RETURN_IF_ERROR(status);
  return std::vector<ShapeVars>{out};
}

absl::Status AllocDiag::Perform(const Apply& node, std::span<const Tensor> inputs,
                                std::vector<Tensor>& outputs) const {
  const Tensor d = inputs[0].Contiguous();
  ASSIGN_OR_RETURN(auto axes, DiagAxes(*this, *node.inputs()[0]->tensor_type(), d.ndim() + 1,
                                       attrs().axis1, attrs().axis2));
  const int a1 = std::min(axes.first, axes.second), a2 = std::max(axes.first, axes.second);
  const int64_t k = attrs().offset, n = d.shape().back();
  const std::optional<int64_t> m = CheckedAdd(n, std::abs(k));
  if (!m)
    return Invalid(*this, absl::StrCat("the diagonal of ", n, " entries at offset ", k,
                                       " needs a square too large"));
  const Shape shape = AllocDiagShape(std::vector<int64_t>(d.shape()), a1, a2, [&](int64_t) { return *m; });
  RETURN_IF_ERROR(CheckOutputShape(*this, shape, d.dtype()));
  Tensor out = Tensor::Zeros(d.dtype(), shape);
  const Shape st = ContiguousStrides(shape);
  // The output dims of d's leading dims, in order.
  std::vector<int> batch_dims;
  for (int i = 0; i < out.ndim(); ++i) {
    if (i != a1 && i != a2) batch_dims.push_back(i);
  }
  const int64_t row0 = std::max<int64_t>(0, -k), col0 = std::max<int64_t>(0, k);
  const int64_t size = DTypeSize(d.dtype());
  const char* src = static_cast<const char*>(d.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  std::vector<int64_t> coord(d.ndim(), 0);
  for (int64_t e = 0; e < d.size(); ++e) {
    int64_t at = (coord.back() + row0) * st[a1] + (coord.back() + col0) * st[a2];
    for (size_t b = 0; b < batch_dims.size(); ++b) at += coord[b] * st[batch_dims[b]];
    std::memcpy(dst + at * size, src + e * size, size);
    for (int i = d.ndim() - 1; i >= 0 && ++coord[i] == d.shape()[i]; --i) coord[i] = 0;
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

// gz's diagonal where the op laid d: along (min, max) of its axes, the first the rows (Aesara
// passes the axes as given, which reverses the offset when axis1 > axis2).
std::vector<Var> AllocDiag::LOp(const Apply&, const std::vector<Var>& g) const {
  const int a1 = std::min(attrs().axis1, attrs().axis2);
  const int a2 = std::max(attrs().axis1, attrs().axis2);
  return {
      ApplyOp(OpPtr(std::make_shared<ExtractDiag>(ExtractDiagAttrs{attrs().offset, a1, a2, false})),
              {g[0]})};
}

// ---- FillDiagonalOffset ----

absl::StatusOr<ApplyPtr> FillDiagonalOffset::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 3) return Invalid(*this, "expects 3 inputs (a, val, offset)");
  for (int i : {0, 1, 2}) {
    if (inputs[i]->tensor_type() == nullptr) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                         ", which is not a TensorType"));
    }
  }
  const TensorType* a = inputs[0]->tensor_type();
  const TensorType* val = inputs[1]->tensor_type();
  const TensorType* offset = inputs[2]->tensor_type();
  // Aesara's checks, in its order and words.
  if (a->ndim() != 2) {
    return Invalid(*this, absl::StrCat("input 0 (a) has type ", a->ToString(),
                                       ": first parameter must have exactly two dimensions"));
  }
  if (val->ndim() != 0) {
    return Invalid(*this, absl::StrCat("input 1 (val) has type ", val->ToString(),
                                       ": second parameter must be a scalar"));
  }
  if (offset->ndim() != 0) {
    return Invalid(*this, absl::StrCat("input 2 (offset) has type ", offset->ToString(),
                                       ": third parameter must be a scalar"));
  }
  if (PromoteTypes(a->dtype(), val->dtype()) != a->dtype()) {
    return Invalid(*this, absl::StrCat("input 1 (val) has type ", val->ToString(),
                                       " but input 0 (a) has ", a->ToString(),
                                       ": type of second parameter must be the same as the "
                                       "first's"));
  }
  if (!IsInteger(offset->dtype())) {
    return Invalid(*this, absl::StrCat("input 2 (offset) has type ", offset->ToString(),
                                       ": type of third parameter must be as integer use "
                                       "aesara.tensor.cast( input, 'int32/int64')"));
  }
  if (val->dtype() != a->dtype()) {
    ASSIGN_OR_RETURN(inputs[1], Unwrap(cast(Var(inputs[1]), a->dtype())));
  }
  TypePtr out = TensorType::Make(a->dtype(), a->shape());
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> FillDiagonalOffset::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status FillDiagonalOffset::Perform(const Apply&, std::span<const Tensor> inputs,
                                         std::vector<Tensor>& outputs) const {
  const Tensor& a = inputs[0];
  RETURN_IF_ERROR(CheckOutputShape(*this, a.shape(), a.dtype()));
  Tensor out = a.AsType(a.dtype());  // a C-contiguous copy
  const Tensor val = inputs[1].AsType(a.dtype());
  const int64_t height = a.shape()[0], width = a.shape()[1], k = ScalarInt(inputs[2]);
  // Aesara's unwrapped diagonal: min(height, width) entries at most, none past the last column
  // (offset >= 0) or row (offset < 0).
  const int64_t count = k >= 0 ? std::min(std::min(width, height), width - k)
                               : std::min(std::min(width, height), height + k);
  if (count > 0) {
    const int64_t start = k >= 0 ? k : -k * width, step = width + 1;
    const int64_t size = DTypeSize(a.dtype());
    char* dst = static_cast<char*>(out.raw_data());
    for (int64_t i = 0; i < count; ++i) {
      std::memcpy(dst + (start + i * step) * size, val.raw_data(), size);
    }
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

// Aesara's grad: gz with the offset diagonal zeroed for a; the sum of gz's entries on it (every
// width + 1-th of the flattened gz from the diagonal's start) for val; offset's is undefined.
std::vector<Var> FillDiagonalOffset::LOp(const Apply& node, const std::vector<Var>& g) const {
  const VariablePtr& a = node.inputs()[0];
  const VariablePtr& offset = node.inputs()[2];
  if (IsComplex(a->tensor_type()->dtype())) {
    const char* why = "The gradient of complex values is not defined.";
    return {grad_not_implemented(Name(), 0, a, why),
            grad_not_implemented(Name(), 1, node.inputs()[1], why),
            grad_undefined(Name(), 2, offset, why)};
  }
  const Var& gz = g[0];
  const Var k = cast(Var(offset), DType::kInt64);
  const Var ga = ApplyOp(self(), {gz, scalar_constant(0.0, gz.dtype()), k});
  const Var height = shape_i(gz, 0), width = shape_i(gz, 1);
  const Var positive = cast(k >= constant(int64_t{0}), DType::kInt64);
  const Var negative = constant(int64_t{1}) - positive;
  const Var start = k * positive - k * width * negative;
  const Var count =
      maximum(minimum(minimum(width, height), width * positive + height * negative - abs(k)),
              constant(int64_t{0}));
  const Var step = width + constant(int64_t{1});
  const Var gval = sum(subtensor(flatten(gz), {Slice{start, start + step * count, step}}));
  return {ga, gval,
          grad_undefined(Name(), 2, offset,
                         "offset is not defined for non-integer offset so "
                         "fill_diagonal_offset(a,val,offset+eps) is undefined")};
}

// ---- Tri ----

absl::StatusOr<ApplyPtr> Tri::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 3) return Invalid(*this, "expects 3 inputs (N, M, k)");
  for (size_t i = 0; i < 3; ++i) {
    RETURN_IF_ERROR(ExpectTensor(*this, inputs, i, 0, true, "an integer scalar").status());
  }
  TypePtr out = TensorType::Make(attrs().dtype, {std::nullopt, std::nullopt});
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Tri::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>&) const {
  ShapeVars out;
  for (int i : {0, 1}) {
    ASSIGN_OR_RETURN(VariablePtr d, Unwrap(cast(Var(node.inputs()[i]), DType::kInt64)));
    out.push_back(d);
  }
  return std::vector<ShapeVars>{out};
}

absl::Status Tri::Perform(const Apply&, std::span<const Tensor> inputs,
                          std::vector<Tensor>& outputs) const {
  const int64_t n = ScalarInt(inputs[0]), m = ScalarInt(inputs[1]), k = ScalarInt(inputs[2]);
  if (n < 0 || m < 0) {
    return Invalid(*this, absl::StrCat("N=", n, ", M=", m,
                                       ": negative dimensions are not "
                                       "allowed"));
  }
  RETURN_IF_ERROR(CheckOutputShape(*this, {n, m}, attrs().dtype));
  Tensor out = Tensor::Empty(attrs().dtype, {n, m});
  DispatchDType(attrs().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    const T one = ConvertElement<T>(1), zero = ConvertElement<T>(0);
    // T[i, j] = 1 where j <= i + k, written as j - i <= k so that nothing wraps.
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) p[i * m + j] = j - i <= k ? one : zero;
    }
  });
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

std::vector<Var> Tri::LOp(const Apply& node, const std::vector<Var>&) const {
  std::vector<Var> grads;
  for (int i = 0; i < 3; ++i) grads.push_back(grad_undefined(Name(), i, node.inputs()[i]));
  return grads;
}

// ---- builders ----

Var diagonal(const Var& x, int64_t offset, int axis1, int axis2) {
  return ApplyOp(
      OpPtr(std::make_shared<ExtractDiag>(ExtractDiagAttrs{offset, axis1, axis2, false})), {x});
}

Var diag(const Var& v, int64_t k) {
  if (!v.ok()) return v;
  if (v.ndim() == 1) {
    return ApplyOp(OpPtr(std::make_shared<AllocDiag>(AllocDiagAttrs{k, 0, 1})), {v});
  }
  if (v.ndim() >= 2) return diagonal(v, k);
  return Var(absl::InvalidArgumentError(absl::StrCat(
      "diag: number of dimensions of `v` must be greater than one, not ", v->type()->ToString())));
}

Var fill_diagonal_offset(const Var& a, const Var& val, const Var& offset) {
  return ApplyOp(OpPtr(std::make_shared<FillDiagonalOffset>()), {a, val, offset});
}

Var tri(const Var& n, const Var& m, const Var& k, DType dtype) {
  return ApplyOp(OpPtr(std::make_shared<Tri>(TriAttrs{dtype})), {n, m, k});
}

}  // namespace kiln
