#include "core/ops/alloc.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/dtype_dispatch.h"

namespace kiln {

KILN_REGISTER_OP(Alloc);
KILN_REGISTER_OP(ARange);
KILN_REGISTER_OP(Eye);

// --- Alloc ------------------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> Alloc::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.empty()) return Invalid(*this, "expects a value");
  for (size_t i = 1; i < inputs.size(); ++i) {
    RETURN_IF_ERROR(ExpectTensor(*this, inputs, i, 0, true, "an integer scalar").status());
  }
  ASSIGN_OR_RETURN(const TensorType* value, ExpectTensor(*this, inputs, 0, -1, false, "a tensor"));
  const int ndim = static_cast<int>(inputs.size()) - 1;
  if (value->ndim() > ndim) {
    return Invalid(*this, absl::StrCat("the value has type ", value->ToString(),
                                       ", of more than the ", ndim, " dims requested"));
  }
  StaticShape shape(ndim);
  for (int d = 0; d < ndim; ++d) {
    shape[d] = ConstantInt(inputs[d + 1]);
    if (shape[d] && *shape[d] < 0) return Invalid(*this, "negative dimension");
  }
  // Constant dims like (2^62, 2^62) make no type: later products of them would overflow.
  RETURN_IF_ERROR(CheckKnownDims(*this, shape));
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(value->dtype(), shape)});
}

absl::Status Alloc::Perform(const Apply& node, std::span<const Tensor> inputs,
                            std::vector<Tensor>& outputs) const {
  const TensorType* out_type = node.output_ptr(0)->tensor_type();
  Shape shape;
  for (size_t i = 1; i < inputs.size(); ++i) shape.push_back(ScalarInt(inputs[i]));
  RETURN_IF_ERROR(CheckShape(Name(), shape, out_type->dtype()));
  std::optional<Tensor> view = inputs[0].BroadcastTo(shape);
  if (!view) {
    return Invalid(*this, absl::StrCat("the value of shape ", ShapeToString(inputs[0].shape()),
                                       " does not broadcast to shape ", ShapeToString(shape)));
  }
  outputs[0] = view->AsType(out_type->dtype());
  return absl::OkStatus();
}

// Its dims.
absl::StatusOr<std::vector<ShapeVars>> Alloc::InferShape(const Apply& node,
                                                         const std::vector<ShapeVars>&) const {
  const std::vector<VariablePtr>& x = node.inputs();
  ShapeVars out;
  for (size_t i = 1; i < x.size(); ++i) out.push_back(cast(Var(x[i]), DType::kInt64).ptr());
  return std::vector<ShapeVars>{out};
}

// --- ARange and Eye ---------------------------------------------------------------------------

namespace {

// Three scalar inputs (integers when `integer`).
absl::Status ExpectThreeScalars(const Op& op, const std::vector<VariablePtr>& inputs,
                                bool integer) {
  if (inputs.size() != 3) {
    return Invalid(op, absl::StrCat("expects 3 inputs, got ", inputs.size()));
  }
  for (size_t i = 0; i < 3; ++i) {
    RETURN_IF_ERROR(
        ExpectTensor(op, inputs, i, 0, integer, integer ? "an integer scalar" : "a scalar")
            .status());
  }
  return absl::OkStatus();
}

double ScalarDouble(const Tensor& t) { return t.ElementAsDouble(0); }

}  // namespace

absl::StatusOr<ApplyPtr> ARange::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectThreeScalars(*this, inputs, false));
  // ARange: the length is static when the bounds are constants.
  StaticDim length;
  if (inputs[0]->is_constant() && inputs[1]->is_constant() && inputs[2]->is_constant()) {
    const double start = static_cast<const Constant&>(*inputs[0]).data().ElementAsDouble(0);
    const double stop = static_cast<const Constant&>(*inputs[1]).data().ElementAsDouble(0);
    const double step = static_cast<const Constant&>(*inputs[2]).data().ElementAsDouble(0);
    if (step == 0) return Invalid(*this, "step cannot be 0");
    const double n = std::ceil((stop - start) / step);
    if (!std::isfinite(n) || n > static_cast<double>(kMaxTensorBytes)) {  // as Perform says
      return Invalid(*this,
                     absl::StrCat("cannot make a range from ", start, " to ", stop, " by ", step));
    }
    length = n > 0 ? static_cast<int64_t>(n) : 0;  // (a negative n may not fit an int64)
  }
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(attrs().dtype, {length})});
}

absl::Status ARange::Perform(const Apply&, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  const DType dtype = attrs().dtype;
  const double start = ScalarDouble(inputs[0]), stop = ScalarDouble(inputs[1]);
  const double step = ScalarDouble(inputs[2]);
  if (step == 0) return Invalid(*this, "step cannot be 0");
  const double length = std::ceil((stop - start) / step);
  if (!std::isfinite(length) || length > static_cast<double>(kMaxTensorBytes)) {
    return Invalid(*this,
                   absl::StrCat("cannot make a range from ", start, " to ", stop, " by ", step));
  }
  const int64_t n = length > 0 ? static_cast<int64_t>(length) : 0;  // (may not fit if < 0)
  RETURN_IF_ERROR(CheckShape(Name(), {n}, dtype));
  Tensor out = Tensor::Empty(dtype, {n});
  // Integer ranges in integers: exact beyond 2^53.
  const bool exact =
      IsInteger(dtype) && IsInteger(inputs[0].dtype()) && IsInteger(inputs[2].dtype());
  const int64_t first = exact ? ScalarInt(inputs[0]) : 0, delta = exact ? ScalarInt(inputs[2]) : 0;
  // Written in place, without a temporary vector of int64 or double the size of the output.
  DispatchDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    // In unsigned arithmetic: i * delta may overflow although first + i * delta is in range.
    const uint64_t ufirst = static_cast<uint64_t>(first), udelta = static_cast<uint64_t>(delta);
    for (int64_t i = 0; exact && i < n; ++i) {
      o[i] = ConvertElement<T>(static_cast<int64_t>(ufirst + static_cast<uint64_t>(i) * udelta));
    }
    for (int64_t i = 0; !exact && i < n; ++i) {
      o[i] = ConvertElement<T>(start + static_cast<double>(i) * step);
    }
  });
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

namespace {

// True when v is a constant holding exactly `value`.
bool IsConstantScalar(const VariablePtr& v, double value) {
  if (!v->is_constant()) return false;
  const Tensor& t = static_cast<const Constant&>(*v).data();
  return t.size() == 1 && t.ElementAsDouble(0) == value;
}

// True when v is a dim of some tensor (Shape_i, or an entry of Shape): never negative.
bool IsShapeEntry(const VariablePtr& v) {
  const Apply* node = v->owner();
  if (node == nullptr) return false;
  if (node->op().Is<ShapeI>()) return true;
  const Apply* shape = node->op().Is<Subtensor>() ? node->inputs()[0]->owner() : nullptr;
  return shape != nullptr && shape->op().Is<ShapeOp>();
}

}  // namespace

// arange(0, n, 1) of an integer n: n (when a dim) or max(n, 0) (Aesara's cast(n), which is
// negative for a negative n); otherwise max(0, ceil((stop - start) / step)).
absl::StatusOr<std::vector<ShapeVars>> ARange::InferShape(const Apply& node,
                                                          const std::vector<ShapeVars>&) const {
  const std::vector<VariablePtr>& x = node.inputs();
  const DType stop_dtype = x[1]->tensor_type()->dtype();
  if (IsConstantScalar(x[0], 0) && IsConstantScalar(x[2], 1) && IsInteger(stop_dtype) &&
      stop_dtype != DType::kUInt64) {
    const Var n = cast(Var(x[1]), DType::kInt64);
    return std::vector<ShapeVars>{
        {IsShapeEntry(x[1]) ? n.ptr() : maximum(n, constant(int64_t{0})).ptr()}};
  }
  // Subtracted as float64, as Perform does: stop - start in int64 wraps for (-2^63, 2^63 - 1).
  const Var start = cast(Var(x[0]), DType::kFloat64), stop = cast(Var(x[1]), DType::kFloat64);
  Var n = ceil((stop - start) / cast(Var(x[2]), DType::kFloat64));
  return std::vector<ShapeVars>{{cast(maximum(n, constant(0.0)), DType::kInt64).ptr()}};
}

absl::StatusOr<ApplyPtr> Eye::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectThreeScalars(*this, inputs, true));
  // Read before `inputs` moves (function arguments are evaluated in no fixed order).
  const StaticShape shape = {ConstantInt(inputs[0]), ConstantInt(inputs[1])};
  // Constant dims like (2^40, 2^40) make no type (CheckShape refuses them at run time too).
  RETURN_IF_ERROR(CheckKnownDims(*this, shape));
  TypePtr type = TensorType::Make(attrs().dtype, shape);
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::Status Eye::Perform(const Apply&, std::span<const Tensor> inputs,
                          std::vector<Tensor>& outputs) const {
  const DType dtype = attrs().dtype;
  const int64_t n = ScalarInt(inputs[0]), m = ScalarInt(inputs[1]), k = ScalarInt(inputs[2]);
  RETURN_IF_ERROR(CheckShape(Name(), {n, m}, dtype));
  // The output first, so that the buffer limit applies before anything of its size.
  Tensor out = Tensor::Zeros(dtype, {n, m});
  const Tensor one = *Tensor::Of<double>(dtype, {}, {1.0});
  const int size = DTypeSize(dtype);
  // Only the rows i with 0 <= i + k < m: at most min(n, m) of them (eye(10**11, 0) has none
  // and must not loop over 10**11 rows). -n < k < m before m - k: no overflow.
  const bool none = k >= m || k <= -n;
  const int64_t first = none ? 0 : std::max<int64_t>(0, -k);
  const int64_t last = none ? 0 : std::min(n, m - k);
  for (int64_t i = first; i < last; ++i) {
    std::memcpy(static_cast<char*>(out.raw_data()) + (i * m + i + k) * size, one.raw_data(), size);
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

// (n, m).
absl::StatusOr<std::vector<ShapeVars>> Eye::InferShape(const Apply& node,
                                                       const std::vector<ShapeVars>&) const {
  const std::vector<VariablePtr>& x = node.inputs();
  return std::vector<ShapeVars>{
      {cast(Var(x[0]), DType::kInt64).ptr(), cast(Var(x[1]), DType::kInt64).ptr()}};
}

// --- DSL --------------------------------------------------------------------------------------

Var alloc(const Var& value, const std::vector<Var>& dims) {
  std::vector<Var> inputs = {value};
  inputs.insert(inputs.end(), dims.begin(), dims.end());
  return ApplyOp(OpPtr(std::make_shared<Alloc>()), inputs);
}

Var zeros(const std::vector<Var>& dims, DType dtype) {
  return alloc(scalar_constant(0.0, dtype), dims);
}
Var ones(const std::vector<Var>& dims, DType dtype) {
  return alloc(scalar_constant(1.0, dtype), dims);
}
Var full(const std::vector<Var>& dims, const Var& fill_value) { return alloc(fill_value, dims); }

Var zeros_like(const Var& x, std::optional<DType> dtype) {
  if (!x.ok()) return x;
  return second(x, scalar_constant(0.0, dtype.value_or(x.dtype())));
}

Var ones_like(const Var& x, std::optional<DType> dtype) {
  if (!x.ok()) return x;
  return second(x, scalar_constant(1.0, dtype.value_or(x.dtype())));
}

Var arange(const Var& start, const Var& stop, const Var& step, std::optional<DType> dtype) {
  for (const Var* v : {&start, &stop, &step}) {
    if (!v->ok()) return *v;
  }
  DType chosen = DType::kInt64;
  for (const Var* v : {&start, &stop, &step}) {
    if ((*v)->tensor_type() && !IsInteger(v->dtype()) && !IsBool(v->dtype())) {
      chosen = DType::kFloat64;
    }
  }
  return ApplyOp(OpPtr(std::make_shared<ARange>(DTypeAttrs{dtype.value_or(chosen)})),
                 {start, stop, step});
}

Var arange(const Var& stop) { return arange(constant(0), stop, constant(1)); }

Var eye(const Var& n, const Var& m, const Var& k, DType dtype) {
  return ApplyOp(OpPtr(std::make_shared<Eye>(DTypeAttrs{dtype})), {n, m, k});
}

Var eye(int64_t n, DType dtype) { return eye(constant(n), constant(n), constant(0), dtype); }

}  // namespace kiln
