#include "core/ops/repeat.h"

#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"

namespace kiln {

KILN_REGISTER_OP(Repeat);

namespace {

// The axis of an `ndim`-dimensional x the op repeats along (0 for the flattened x).
int AxisOf(const RepeatAttrs& a, int ndim) {
  if (!a.axis) return 0;
  return *a.axis < 0 ? *a.axis + ndim : *a.axis;
}

// True when v is the constant scalar 1.
bool IsConstantOne(const VariablePtr& v) {
  if (!v->is_constant() || v->tensor_type()->ndim() != 0) return false;
  return ScalarInt(static_cast<const Constant&>(*v).data()) == 1;
}

}  // namespace

absl::Status RepeatAttrs::Check() const {
  if (axis && (*axis < -64 || *axis > 64)) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'axis' is out of range: ", *axis));
  }
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> Repeat::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 2) return Invalid(*this, "expects 2 inputs (x, repeats)");
  const TensorType* x = inputs[0]->tensor_type();
  const TensorType* r = inputs[1]->tensor_type();
  for (int i : {0, 1}) {
    if (inputs[i]->tensor_type() == nullptr) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                         ", which is not a TensorType"));
    }
  }
  if (!IsInteger(r->dtype()) || r->dtype() == DType::kUInt64 || r->ndim() > 1) {
    return Invalid(*this, absl::StrCat("input 1 (repeats) has type ", r->ToString(),
                                       " but an integer scalar or vector other than uint64 is "
                                       "needed"));
  }
  if (attrs().axis && (AxisOf(attrs(), x->ndim()) < 0 || AxisOf(attrs(), x->ndim()) >= x->ndim())) {
    return Invalid(*this, absl::StrCat("input 0 has type ", x->ToString(), ", which has no axis ",
                                       *attrs().axis));
  }
  // Aesara's type: one unknown dim for the flattened x; else x's dims, the repeated one unknown
  // unless repeats is the constant 1, and only broadcastable dims kept static.
  StaticShape shape(1);
  if (attrs().axis) {
    shape = x->shape();
    if (!IsConstantOne(inputs[1])) shape[AxisOf(attrs(), x->ndim())] = std::nullopt;
    for (StaticDim& d : shape) {
      if (d != 1) d = std::nullopt;
    }
  }
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(x->dtype(), shape)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Repeat::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const Var repeats(node.inputs()[1]);
  // The repeated axis's length: its old length times a scalar count (or a vector of one count,
  // which broadcasts), else the sum of the counts.
  auto repeated = [&](const VariablePtr& length) {
    if (repeats.ndim() == 0) return Var(length) * cast(repeats, DType::kInt64);
    const Var total = cast(sum(repeats), DType::kInt64);
    return switch_(eq(shape_i(repeats, 0), constant(int64_t{1})), Var(length) * total, total);
  };
  Var length = attrs().axis ? repeated(in[0][AxisOf(attrs(), static_cast<int>(in[0].size()))])
                            : repeated(ProductOf(in[0]));
  if (!length.ok()) return length.status();
  if (!attrs().axis) return std::vector<ShapeVars>{{length.ptr()}};
  ShapeVars out = in[0];
  out[AxisOf(attrs(), static_cast<int>(in[0].size()))] = length.ptr();
  return std::vector<ShapeVars>{out};
}

absl::Status Repeat::Perform(const Apply&, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  Tensor x = inputs[0].Contiguous();
  if (!attrs().axis) x = x.View({x.size()}, {1});
  const int axis = AxisOf(attrs(), x.ndim());
  const Tensor counts = inputs[1].AsType(DType::kInt64);
  const int64_t n = x.shape()[axis];
  if (counts.size() != 1 && counts.size() != n) {
    return Invalid(*this, absl::StrCat("repeats has ", counts.size(), " entries but axis ", axis,
                                       " of x has ", n));
  }
  // One count for every element, or one each; read in place (an empty x may have a huge axis).
  const int64_t* c = counts.data<int64_t>();
  const bool one_count = counts.size() == 1;
  auto count_of = [&](int64_t i) { return c[one_count ? 0 : i]; };
  // The new axis's length, in checked arithmetic and refused past the largest tensor: counts
  // like (2^46 + 1, 2^63 - 1, 5) must not wrap to a small total that the copies would overrun.
  int64_t total = 0;
  bool too_many = false;
  for (int64_t i = 0; i < (one_count ? 1 : n); ++i) {
    if (c[i] < 0) return Invalid(*this, "repeats may not contain negative values");
    too_many = too_many ||
               (one_count ? __builtin_mul_overflow(n, c[0], &total)
                          : __builtin_add_overflow(total, c[i], &total)) ||
               total > kMaxTensorBytes;
  }
  if (too_many) {
    return Invalid(*this, absl::StrCat("the repeats add up to more than ", kMaxTensorBytes,
                                       " copies along axis ", axis));
  }
  Shape shape = x.shape();
  shape[axis] = total;
  RETURN_IF_ERROR(CheckOutputShape(*this, shape, x.dtype()));
  Tensor out = Tensor::Empty(x.dtype(), shape);
  // Nothing to copy into an empty output (whose other dims may still be huge: no loop over them).
  if (out.nbytes() > 0) {
    // A non-empty output that passed CheckShape bounds outer * total * row: no product overflows.
    const Shape& dims = x.shape();
    const int64_t outer =
        std::accumulate(dims.begin(), dims.begin() + axis, int64_t{1}, std::multiplies<>());
    const int64_t row = std::accumulate(dims.begin() + axis + 1, dims.end(),
                                        int64_t{DTypeSize(x.dtype())}, std::multiplies<>());
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(out.raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < n; ++i, src += row) {
        for (int64_t r = 0; r < count_of(i); ++r, dst += row) std::memcpy(dst, src, row);
      }
    }
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

std::vector<Var> Repeat::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  const Var repeats(node.inputs()[1]);
  Var xs = attrs().axis ? x : flatten(x);
  Var gz = g[0];
  // With the repeated axis first, output row j copies row idx[j] of x, idx = repeat(arange(n)):
  // x's gradient adds each gz row into the row it came from.
  const int axis = AxisOf(attrs(), x.ndim());
  std::vector<int> order(xs.ndim()), inverse(xs.ndim());
  std::iota(order.begin(), order.end(), 0);
  order.erase(order.begin() + axis);
  order.insert(order.begin(), axis);
  for (int d = 0; d < xs.ndim(); ++d) inverse[order[d]] = d;
  xs = dimshuffle(xs, order);
  gz = dimshuffle(gz, order);
  const Var rows =
      ApplyOp(OpPtr(std::make_shared<Repeat>(RepeatAttrs{0})), {arange(shape_i(xs, 0)), repeats});
  Var gx = dimshuffle(inc_subtensor(take(zeros_like(xs, gz.dtype()), rows), gz), inverse);
  if (!attrs().axis) gx = reshape(gx, shape(x));
  return {gx, disconnected_type()};
}

Var repeat(const Var& x, const Var& repeats, std::optional<int> axis) {
  if (!x.ok()) return x;
  if (!repeats.ok()) return repeats;
  if (!IsInteger(repeats.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "repeat: repeats has type ", repeats.type().ToString(), " but an integer is needed"));
  }
  if (repeats.ndim() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("repeat: repeats has type ", repeats.type().ToString(),
                     " but the dimension of repeats should not exceed 1"));
  }
  if (repeats.ndim() == 1 && repeats.type().shape()[0] != 1) {
    return ApplyOp(OpPtr(std::make_shared<Repeat>(RepeatAttrs{axis})), {x, repeats});
  }
  // A single count: Aesara's alloc of x with a new axis after `axis`, reshaped.
  const Var count = cast(repeats.ndim() == 1 ? subtensor(repeats, {0}) : repeats, DType::kInt64);
  if (x.dtype() == DType::kUInt64) {
    return absl::InvalidArgumentError("repeat: repeat doesn't support dtype uint64");
  }
  Var xs = x;
  int a = 0;
  if (!axis) {
    xs = flatten(x);
  } else {
    if (*axis >= x.ndim() || *axis < -x.ndim()) {
      return absl::InvalidArgumentError(
          absl::StrCat("repeat: x has type ", x.type().ToString(), ", which has no axis ", *axis));
    }
    a = *axis < 0 ? *axis + x.ndim() : *axis;
  }
  std::vector<Var> dims, alloc_dims;
  std::vector<int> pattern;
  for (int d = 0; d < xs.ndim(); ++d) {
    dims.push_back(subtensor(shape(xs), {d}));
    pattern.push_back(d);
  }
  alloc_dims = dims;
  alloc_dims.insert(alloc_dims.begin() + a + 1, count);
  pattern.insert(pattern.begin() + a + 1, kX);
  dims[a] = dims[a] * count;
  return reshape(alloc(dimshuffle(xs, pattern), alloc_dims), make_vector(dims));
}

}  // namespace kiln
