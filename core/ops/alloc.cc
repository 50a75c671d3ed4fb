#include "core/ops/alloc.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/graph/status_macros.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/runtime/dtype_dispatch.h"

namespace kiln {
namespace {

// Input i must be a tensor of rank `ndim` (any rank when -1) whose dtype passes `ok`.
absl::StatusOr<const TensorType*> Expect(const Op& op, const std::vector<VariablePtr>& in, size_t i,
                                         int ndim, bool integer, const char* what) {
  const TensorType* t = in[i]->tensor_type();
  if (t == nullptr || (ndim >= 0 && t->ndim() != ndim) || (integer && !IsInteger(t->dtype()))) {
    return Invalid(op, absl::StrCat("input ", i, " has type ", in[i]->type()->ToString(), " but ",
                                    what, " is needed"));
  }
  return t;
}

// The value of a constant integer scalar, or nullopt for a symbolic one.
std::optional<int64_t> ConstantInt(const VariablePtr& v) {
  if (!v->is_constant()) return std::nullopt;
  return ScalarInt(static_cast<const Constant&>(*v).data());
}
double ScalarDouble(const Tensor& t) { return t.ElementAsDouble(0); }

}  // namespace

std::string BuildOp::Name() const {
  switch (kind_) {
    case OpKind::kAlloc:
      return "Alloc";
    case OpKind::kARange:
      return absl::StrCat("ARange{dtype='", DTypeName(dtype_), "'}");
    case OpKind::kEye:
      return absl::StrCat("Eye{dtype='", DTypeName(dtype_), "'}");
    case OpKind::kJoin:
      return "Join";
    default:
      return absl::StrCat("Split{", n_splits_, "}");
  }
}

std::vector<std::pair<int, int>> BuildOp::view_map() const {
  std::vector<std::pair<int, int>> views;
  if (kind_ == OpKind::kSplit) {
    for (int i = 0; i < n_splits_; ++i) views.push_back({i, 0});
  }
  return views;
}

absl::StatusOr<ApplyPtr> BuildOp::MakeNode(std::vector<VariablePtr> inputs) const {
  switch (kind_) {
    case OpKind::kJoin:
      return MakeJoin(std::move(inputs));
    case OpKind::kSplit:
      return MakeSplit(std::move(inputs));
    default:
      break;
  }
  const size_t first_dim = kind_ == OpKind::kAlloc ? 1 : 0;
  if (kind_ == OpKind::kAlloc && inputs.empty()) return Invalid(*this, "expects a value");
  if (kind_ != OpKind::kAlloc && inputs.size() != 3) {
    return Invalid(*this, absl::StrCat("expects 3 inputs, got ", inputs.size()));
  }
  for (size_t i = first_dim; i < inputs.size(); ++i) {
    const bool integer = kind_ != OpKind::kARange;
    absl::StatusOr<const TensorType*> t =
        Expect(*this, inputs, i, 0, integer, integer ? "an integer scalar" : "a scalar");
    if (!t.ok()) return t.status();
  }
  if (kind_ == OpKind::kAlloc) {
    absl::StatusOr<const TensorType*> value = Expect(*this, inputs, 0, -1, false, "a tensor");
    if (!value.ok()) return value.status();
    const int ndim = static_cast<int>(inputs.size()) - 1;
    if ((*value)->ndim() > ndim) {
      return Invalid(*this, absl::StrCat("the value has type ", (*value)->ToString(),
                                         ", of more than the ", ndim, " dims requested"));
    }
    StaticShape shape(ndim);
    for (int d = 0; d < ndim; ++d) {
      shape[d] = ConstantInt(inputs[d + 1]);
      if (shape[d] && *shape[d] < 0) return Invalid(*this, "negative dimension");
    }
    return Apply::Make(self(), std::move(inputs), {TensorType::Make((*value)->dtype(), shape)});
  }
  if (kind_ == OpKind::kEye) {
    // Read before `inputs` moves (function arguments are evaluated in no fixed order).
    TypePtr type = TensorType::Make(dtype_, {ConstantInt(inputs[0]), ConstantInt(inputs[1])});
    return Apply::Make(self(), std::move(inputs), {std::move(type)});
  }
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
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(dtype_, {length})});
}

absl::StatusOr<ApplyPtr> BuildOp::MakeJoin(std::vector<VariablePtr> inputs) const {
  if (inputs.size() < 2) return Invalid(*this, "expects an axis and at least one tensor");
  absl::StatusOr<const TensorType*> axis_type =
      Expect(*this, inputs, 0, 0, true, "an integer scalar axis");
  if (!axis_type.ok()) return axis_type.status();
  const std::optional<int64_t> axis = ConstantInt(inputs[0]);
  std::vector<const TensorType*> types;
  for (size_t i = 1; i < inputs.size(); ++i) {
    ASSIGN_OR_RETURN(const TensorType* t, Expect(*this, inputs, i, -1, false, "a tensor"));
    types.push_back(t);
  }
  const int ndim = types[0]->ndim();
  if (ndim == 0) return Invalid(*this, "zero-dimensional arrays cannot be concatenated");
  DType dtype = types[0]->dtype();
  StaticShape shape = types[0]->shape();
  if (axis && (*axis < 0 || *axis >= std::max(1, ndim))) {
    return Invalid(
        *this, absl::StrCat("axis ", *axis, " is out of bounds for tensors of ", ndim, " dims"));
  }
  for (size_t i = 1; i < types.size(); ++i) {
    const TensorType& t = *types[i];
    if (t.ndim() != ndim) {
      return Invalid(
          *this, absl::StrCat("input ", i + 1, " has type ", t.ToString(), " but input 1 has ",
                              types[0]->ToString(), ": all tensors need the same number of dims"));
    }
    dtype = PromoteTypes(dtype, t.dtype());
    for (int d = 0; d < ndim; ++d) {
      if (axis && d == *axis) {
        shape[d] = shape[d] && t.shape()[d] ? StaticDim(*shape[d] + *t.shape()[d]) : std::nullopt;
      } else if (axis && shape[d] && t.shape()[d] && *shape[d] != *t.shape()[d]) {
        return Invalid(
            *this, absl::StrCat("input ", i + 1, " has type ", t.ToString(), " but input 1 has ",
                                types[0]->ToString(), ": dim ", d, " differs"));
      } else if (!shape[d]) {
        shape[d] = t.shape()[d];
      }
    }
  }
  if (!axis) shape.assign(ndim, std::nullopt);
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(dtype, shape)});
}

absl::StatusOr<ApplyPtr> BuildOp::MakeSplit(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 3) return Invalid(*this, "expects x, axis and sizes");
  absl::StatusOr<const TensorType*> x = Expect(*this, inputs, 0, -1, false, "a tensor");
  if (!x.ok()) return x.status();
  RETURN_IF_ERROR(Expect(*this, inputs, 1, 0, true, "an integer scalar axis").status());
  RETURN_IF_ERROR(Expect(*this, inputs, 2, 1, true, "an integer vector").status());
  const std::optional<int64_t> axis = ConstantInt(inputs[1]);
  if (!axis || *axis < 0 || *axis >= (*x)->ndim()) {
    return Invalid(*this, "the axis must be a constant dim of x");
  }
  StaticShape shape = (*x)->shape();
  shape[*axis] = std::nullopt;
  std::vector<TypePtr> types(n_splits_, TensorType::Make((*x)->dtype(), shape));
  return Apply::Make(self(), std::move(inputs), types);
}

absl::Status BuildOp::Perform(const Apply& node, std::span<const Tensor> inputs,
                              std::vector<Tensor>& outputs) const {
  const TensorType* out_type = node.output_ptr(0)->tensor_type();
  switch (kind_) {
    case OpKind::kAlloc: {
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
    case OpKind::kARange: {
      const double start = ScalarDouble(inputs[0]), stop = ScalarDouble(inputs[1]);
      const double step = ScalarDouble(inputs[2]);
      if (step == 0) return Invalid(*this, "step cannot be 0");
      const double length = std::ceil((stop - start) / step);
      if (!std::isfinite(length) || length > static_cast<double>(kMaxTensorBytes)) {
        return Invalid(
            *this, absl::StrCat("cannot make a range from ", start, " to ", stop, " by ", step));
      }
      const int64_t n = length > 0 ? static_cast<int64_t>(length) : 0;  // (may not fit if < 0)
      RETURN_IF_ERROR(CheckShape(Name(), {n}, dtype_));
      Tensor out = Tensor::Empty(dtype_, {n});
      if (IsInteger(dtype_) && IsInteger(inputs[0].dtype()) && IsInteger(inputs[2].dtype())) {
        // Integer ranges in integers: exact beyond 2^53.
        const int64_t first = ScalarInt(inputs[0]), delta = ScalarInt(inputs[2]);
        std::vector<int64_t> values(n);
        // In unsigned arithmetic: i * delta may overflow although first + i * delta is in range.
        for (int64_t i = 0; i < n; ++i) {
          values[i] = static_cast<int64_t>(static_cast<uint64_t>(first) +
                                           static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
        }
        out = *Tensor::FromValues<int64_t>(dtype_, {n}, values);
      } else {
        std::vector<double> values(n);
        for (int64_t i = 0; i < n; ++i) values[i] = start + static_cast<double>(i) * step;
        out = *Tensor::FromValues<double>(dtype_, {n}, values);
      }
      outputs[0] = std::move(out);
      return absl::OkStatus();
    }
    case OpKind::kEye: {
      const int64_t n = ScalarInt(inputs[0]), m = ScalarInt(inputs[1]), k = ScalarInt(inputs[2]);
      RETURN_IF_ERROR(CheckShape(Name(), {n, m}, dtype_));
      // The output first, so that the buffer limit applies before anything of its size.
      Tensor out = Tensor::Zeros(dtype_, {n, m});
      const Tensor one = *Tensor::Of<double>(dtype_, {}, {1.0});
      const int size = DTypeSize(dtype_);
      // Only the rows i with 0 <= i + k < m: at most min(n, m) of them (eye(10**11, 0) has none
      // and must not loop over 10**11 rows). -n < k < m before m - k: no overflow.
      const bool none = k >= m || k <= -n;
      const int64_t first = none ? 0 : std::max<int64_t>(0, -k);
      const int64_t last = none ? 0 : std::min(n, m - k);
      for (int64_t i = first; i < last; ++i) {
        std::memcpy(static_cast<char*>(out.raw_data()) + (i * m + i + k) * size, one.raw_data(),
                    size);
      }
      outputs[0] = std::move(out);
      return absl::OkStatus();
    }
    case OpKind::kJoin: {
      const int ndim = out_type->ndim();
      const int64_t given = ScalarInt(inputs[0]);
      const int64_t axis = given < 0 ? given + ndim : given;
      if (axis < 0 || axis >= ndim) {
        return Invalid(*this, absl::StrCat("axis ", given, " is out of bounds for tensors of ",
                                           ndim, " dims"));
      }
      Shape shape = inputs[1].shape();
      shape[axis] = 0;
      for (size_t i = 1; i < inputs.size(); ++i) {
        for (int d = 0; d < ndim; ++d) {
          if (d != axis && inputs[i].shape()[d] != inputs[1].shape()[d]) {
            return Invalid(
                *this, absl::StrCat("input ", i, " has shape ", ShapeToString(inputs[i].shape()),
                                    " but input 1 has ", ShapeToString(inputs[1].shape()), ": dim ",
                                    d, " differs"));
          }
        }
        shape[axis] += inputs[i].shape()[axis];
      }
      Tensor out = Tensor::Empty(out_type->dtype(), shape);
      const int size = DTypeSize(out.dtype());
      // Copy each piece into its slab of every outer row.
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < axis; ++d) outer *= shape[d];
      for (int d = axis + 1; d < ndim; ++d) inner *= shape[d];
      int64_t offset = 0;
      char* dst = static_cast<char*>(out.raw_data());
      for (size_t i = 1; i < inputs.size(); ++i) {
        const Tensor piece = inputs[i].AsType(out.dtype());
        const int64_t chunk = piece.shape()[axis] * inner * size;
        const char* src = static_cast<const char*>(piece.raw_data());
        for (int64_t o = 0; o < outer; ++o) {
          std::memcpy(dst + (o * shape[axis] * inner) * size + offset, src + o * chunk, chunk);
        }
        offset += chunk;
      }
      outputs[0] = std::move(out);
      return absl::OkStatus();
    }
    default: {  // Split
      const Tensor& x = inputs[0];
      const int64_t axis = ScalarInt(inputs[1]);
      const Tensor sizes = inputs[2].AsType(DType::kInt64);
      if (sizes.size() != n_splits_) {
        return Invalid(*this,
                       absl::StrCat("got ", sizes.size(), " sizes for ", n_splits_, " pieces"));
      }
      int64_t total = 0;
      for (int64_t i = 0; i < sizes.size(); ++i) {
        const int64_t size = sizes.data<int64_t>()[i];
        if (size < 0 || size > x.shape()[axis] - total) {
          return Invalid(*this, absl::StrCat("size ", size, " of piece ", i, " does not fit axis ",
                                             axis, " of size ", x.shape()[axis]));
        }
        total += size;
      }
      if (total != x.shape()[axis]) {
        return Invalid(*this, absl::StrCat("the sizes add up to ", total, " but axis ", axis,
                                           " has size ", x.shape()[axis]));
      }
      int64_t start = 0;
      for (int i = 0; i < n_splits_; ++i) {
        Shape shape = x.shape();
        shape[axis] = sizes.data<int64_t>()[i];
        outputs[i] = x.View(shape, x.strides(), start * x.strides()[axis]);
        start += shape[axis];
      }
      return absl::OkStatus();
    }
  }
}

// --- DSL --------------------------------------------------------------------------------------

Var alloc(const Var& value, const std::vector<Var>& dims) {
  std::vector<Var> inputs = {value};
  inputs.insert(inputs.end(), dims.begin(), dims.end());
  return ApplyOp(OpPtr(std::make_shared<BuildOp>(OpKind::kAlloc)), inputs);
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
  return ApplyOp(OpPtr(std::make_shared<BuildOp>(OpKind::kARange, dtype.value_or(chosen))),
                 {start, stop, step});
}

Var arange(const Var& stop) { return arange(constant(0), stop, constant(1)); }

Var eye(const Var& n, const Var& m, const Var& k, DType dtype) {
  return ApplyOp(OpPtr(std::make_shared<BuildOp>(OpKind::kEye, dtype)), {n, m, k});
}

Var eye(int64_t n, DType dtype) { return eye(constant(n), constant(n), constant(0), dtype); }

Var concatenate(const std::vector<Var>& tensors, int axis) {
  if (tensors.empty()) return Var(absl::InvalidArgumentError("concatenate: no tensors"));
  if (!tensors[0].ok()) return tensors[0];
  if (axis < 0 && tensors[0]->tensor_type()) axis += tensors[0].ndim();
  std::vector<Var> inputs = {constant(axis)};
  inputs.insert(inputs.end(), tensors.begin(), tensors.end());
  return ApplyOp(OpPtr(std::make_shared<BuildOp>(OpKind::kJoin)), inputs);
}

Var stack(const std::vector<Var>& tensors, int axis) {
  std::vector<Var> expanded;
  for (const Var& t : tensors) expanded.push_back(expand_dims(t, axis));
  if (!expanded.empty() && expanded[0].ok() && axis < 0) axis += expanded[0].ndim();
  return concatenate(expanded, axis);
}

std::vector<Var> split(const Var& x, const std::vector<int64_t>& sizes, int axis) {
  const int n = static_cast<int>(sizes.size());
  if (!x.ok()) return std::vector<Var>(n, x);
  if (axis < 0 && x->tensor_type()) axis += x.ndim();
  auto op = std::make_shared<BuildOp>(OpKind::kSplit, DType::kFloat64, n);
  absl::StatusOr<Tensor> s =
      Tensor::FromValues<int64_t>(DType::kInt64, {static_cast<int64_t>(n)}, sizes);
  absl::StatusOr<ApplyPtr> node = op->MakeNode({x.ptr(), constant(axis).ptr(), constant(*s).ptr()});
  if (!node.ok()) return std::vector<Var>(std::max(1, n), Var(node.status()));
  std::vector<Var> out;
  for (int i = 0; i < n; ++i) out.push_back(Var((*node)->output(i)));
  return out;
}

// Alloc: its dims; ARange: max(0, ceil((stop - start) / step)); Eye: (n, m); Join: the sum
// along the axis; Split: the sizes.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> BuildOp::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const std::vector<VariablePtr>& x = node.inputs();
  switch (kind_) {
    case OpKind::kAlloc: {
      ShapeVars out;
      for (size_t i = 1; i < x.size(); ++i) out.push_back(cast(Var(x[i]), DType::kInt64).ptr());
      return std::vector<ShapeVars>{out};
    }
    case OpKind::kARange: {
      Var n = ceil(cast(Var(x[1]) - Var(x[0]), DType::kFloat64) / cast(Var(x[2]), DType::kFloat64));
      return std::vector<ShapeVars>{{cast(maximum(n, constant(0.0)), DType::kInt64).ptr()}};
    }
    case OpKind::kEye:
      return std::vector<ShapeVars>{
          {cast(Var(x[0]), DType::kInt64).ptr(), cast(Var(x[1]), DType::kInt64).ptr()}};
    case OpKind::kJoin: {
      const int64_t axis =
          static_cast<int64_t>(static_cast<const Constant&>(*x[0]).data().ElementAsDouble(0));
      ShapeVars out = in[1];
      Var total = Var(in[1][axis]);
      for (size_t i = 2; i < in.size(); ++i) total = total + Var(in[i][axis]);
      out[axis] = total.ptr();
      for (size_t d = 0; d < out.size(); ++d) {
        if (static_cast<int64_t>(d) == axis) continue;
        std::vector<VariablePtr> dims;
        for (size_t i = 1; i < in.size(); ++i) dims.push_back(in[i][d]);
        out[d] = BroadcastDim(dims);
      }
      return std::vector<ShapeVars>{out};
    }
    default: {
      const int64_t axis =
          static_cast<int64_t>(static_cast<const Constant&>(*x[1]).data().ElementAsDouble(0));
      std::vector<ShapeVars> outs;
      for (int i = 0; i < n_splits_; ++i) {
        ShapeVars s = in[0];
        s[axis] = cast(subtensor(Var(x[2]), {i}), DType::kInt64).ptr();
        outs.push_back(s);
      }
      return outs;
    }
  }
}

// --- Wire attributes ----------------------------------------------------------------------------

KILN_REGISTER_OP_KIND(BuildOp, kAlloc);
KILN_REGISTER_OP_KIND(BuildOp, kARange);
KILN_REGISTER_OP_KIND(BuildOp, kEye);
KILN_REGISTER_OP_KIND(BuildOp, kJoin);
KILN_REGISTER_OP_KIND(BuildOp, kSplit);

OpAttrs BuildOp::Attrs() const {
  return {{"dtype", DTypeName(dtype_)}, {"n_splits", int64_t{n_splits_}}};
}

absl::StatusOr<OpPtr> BuildOp::FromAttrs(OpKind kind, const OpAttrs& a) {
  ASSIGN_OR_RETURN(std::optional<DType> dtype, DecodeAttr<std::optional<DType>>(a, "dtype"));
  absl::StatusOr<std::optional<int>> n = DecodeAttr<std::optional<int>>(a, "n_splits");
  if (!n.ok()) return n.status();
  if (n->value_or(0) < 0 || n->value_or(0) > 1000000) {
    return absl::InvalidArgumentError("n_splits out of range");
  }
  return OpPtr(std::make_shared<BuildOp>(kind, dtype.value_or(DType::kFloat64), n->value_or(0)));
}

}  // namespace kiln
