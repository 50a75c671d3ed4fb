#include "core/ops/shape.h"

#include <algorithm>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"

namespace kiln {
namespace {

// The input's TensorType, or an error naming the op and the input.
absl::StatusOr<const TensorType*> TensorInput(const Op& op, const std::vector<VariablePtr>& in,
                                              size_t i) {
  const TensorType* t = in[i]->tensor_type();
  if (t == nullptr) {
    return Invalid(op, absl::StrCat("input ", i, " has type ", in[i]->type()->ToString(),
                                    ", which is not a TensorType"));
  }
  return t;
}

// Input i must be an integer tensor of rank `ndim`.
absl::Status CheckInteger(const Op& op, const std::vector<VariablePtr>& in, size_t i, int ndim) {
  ASSIGN_OR_RETURN(const TensorType* t, TensorInput(op, in, i));
  if (!IsInteger(t->dtype()) || t->ndim() != ndim) {
    return Invalid(op, absl::StrCat("input ", i, " has type ", t->ToString(), " but an ",
                                    ndim == 0 ? "integer scalar" : "integer vector", " is needed"));
  }
  return absl::OkStatus();
}

std::vector<int64_t> AsInt64s(const Tensor& t) {
  if (t.dtype() == DType::kInt64 && t.is_contiguous()) {
    return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.size());
  }
  const Tensor c = t.AsType(DType::kInt64);
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.size());
}

Tensor Int64Tensor(const std::vector<int64_t>& values, Shape shape) {
  return *Tensor::FromValues<int64_t>(DType::kInt64, std::move(shape), values);
}

std::string DimsText(const std::vector<int64_t>& dims) {
  return absl::StrCat("(", absl::StrJoin(dims, ", "), dims.size() == 1 ? ",)" : ")");
}

// A reshape target whose product could overflow is an error; a -1 counts as 1 here.
absl::Status CheckDims(const Op& op, const std::vector<int64_t>& dims, DType dtype) {
  int64_t bytes = DTypeSize(dtype);
  bool small = true;  // every dim positive (or -1) and the product within the limit
  for (int64_t d : dims) {
    small = small && (d > 0 || d == -1) &&
            !__builtin_mul_overflow(bytes, d == -1 ? 1 : d, &bytes) && bytes <= kMaxTensorBytes;
  }
  if (small) return absl::OkStatus();  // (the op's name is built only for the message)
  Shape shape;
  for (int64_t d : dims) shape.push_back(d == -1 ? 1 : std::max<int64_t>(d, 0));
  return CheckShape(op.Name(), shape, dtype);
}

}  // namespace

KILN_REGISTER_OP(ShapeOp);
KILN_REGISTER_OP(ShapeI);
KILN_REGISTER_OP(Reshape);
KILN_REGISTER_OP(SpecifyShape);
KILN_REGISTER_OP(MakeVector);

// --- Shape, Shape_i ---------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> ShapeOp::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input");
  ASSIGN_OR_RETURN(const TensorType* t, TensorInput(*this, inputs, 0));
  return Apply::Make(self(), std::move(inputs),
                     {TensorType::Make(DType::kInt64, {StaticDim(t->ndim())})});
}

absl::Status ShapeOp::Perform(const Apply&, std::span<const Tensor> inputs,
                              std::vector<Tensor>& outputs) const {
  outputs[0] = Int64Tensor(inputs[0].shape(), {inputs[0].ndim()});
  return absl::OkStatus();
}

std::string ShapeI::Name() const { return absl::StrCat("Shape_i{", i(), "}"); }

absl::StatusOr<ApplyPtr> ShapeI::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input");
  ASSIGN_OR_RETURN(const TensorType* t, TensorInput(*this, inputs, 0));
  if (i() < 0 || i() >= t->ndim()) {
    return Invalid(*this,
                   absl::StrCat("input 0 has type ", t->ToString(), ", which has no dim ", i()));
  }
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(DType::kInt64, {})});
}

absl::Status ShapeI::Perform(const Apply&, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  outputs[0] = Int64Tensor({inputs[0].shape()[i()]}, {});
  return absl::OkStatus();
}

// --- Reshape ----------------------------------------------------------------------------------

std::string Reshape::Name() const { return absl::StrCat("Reshape{", ndim(), "}"); }

namespace {

// `dims` with its -1 (one at most) resolved for `size` elements, or INVALID_ARGUMENT for another
// negative dim or for dims that do not hold exactly `size` elements (`what`: the reshaped value,
// for the message). With the size unknown the -1 stays.
absl::StatusOr<std::vector<int64_t>> ResolveReshapeDims(const Reshape& op,
                                                        std::vector<int64_t> dims,
                                                        std::optional<int64_t> size,
                                                        absl::FunctionRef<std::string()> what) {
  int unknown = -1;
  int64_t known = 1;
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    if (dims[d] == -1 && unknown < 0) {
      unknown = d;
    } else if (dims[d] < 0) {
      return Invalid(op, absl::StrCat("the shape ", DimsText(dims),
                                      " has a negative dim other than one -1"));
    } else {
      known *= dims[d];
    }
  }
  if (!size) return dims;
  if (unknown >= 0 ? (known == 0 || *size % known != 0) : *size != known) {
    return Invalid(op, absl::StrCat("cannot reshape ", what(), " into shape ", DimsText(dims)));
  }
  if (unknown >= 0) dims[unknown] = *size / known;
  return dims;
}

}  // namespace

absl::StatusOr<ApplyPtr> Reshape::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 2) return Invalid(*this, "expects 2 inputs (x, shape)");
  absl::StatusOr<const TensorType*> x = TensorInput(*this, inputs, 0);
  if (!x.ok()) return x.status();
  RETURN_IF_ERROR(CheckInteger(*this, inputs, 1, 1));
  const TensorType* shp = inputs[1]->tensor_type();
  if (shp->shape()[0] && *shp->shape()[0] != ndim()) {
    return Invalid(*this, absl::StrCat("input 1 has type ", shp->ToString(), " but ", ndim(),
                                       " entries are needed"));
  }
  StaticShape out(ndim());
  if (inputs[1]->is_constant()) {
    const std::vector<int64_t> dims = AsInt64s(static_cast<const Constant&>(*inputs[1]).data());
    if (static_cast<int>(dims.size()) != ndim()) {
      return Invalid(*this, absl::StrCat("the shape ", DimsText(dims), " has ", dims.size(),
                                         " entries but ", ndim(), " are needed"));
    }
    RETURN_IF_ERROR(CheckDims(*this, dims, (*x)->dtype()));
    // With x's size known, the -1 is too.
    std::optional<int64_t> size = 1;
    for (const StaticDim& d : (*x)->shape()) {
      // Checked: a product of static dims that overflows leaves the size unknown.
      if (size) size = d ? CheckedMul(*size, *d) : std::nullopt;
    }
    ASSIGN_OR_RETURN(const std::vector<int64_t> resolved,
                     ResolveReshapeDims(*this, dims, size, [&] { return (*x)->ToString(); }));
    for (int d = 0; d < ndim(); ++d) {
      if (resolved[d] >= 0) out[d] = resolved[d];
    }
  }
  return Apply::Make(self(), std::move(inputs), {TensorType::Make((*x)->dtype(), std::move(out))});
}

absl::Status Reshape::Perform(const Apply&, std::span<const Tensor> inputs,
                              std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  std::vector<int64_t> dims = AsInt64s(inputs[1]);
  if (static_cast<int>(dims.size()) != ndim()) {
    return Invalid(*this, absl::StrCat("the shape ", DimsText(dims), " has ", dims.size(),
                                       " entries, not ", ndim()));
  }
  RETURN_IF_ERROR(CheckDims(*this, dims, x.dtype()));
  ASSIGN_OR_RETURN(dims, ResolveReshapeDims(*this, std::move(dims), x.size(), [&] {
                     return absl::StrCat("array of size ", x.size());
                   }));
  std::vector<int64_t> strides = ContiguousStrides(dims);
  outputs[0] = x.is_contiguous() ? x.View(std::move(dims), std::move(strides))
                                 : x.Contiguous().View(std::move(dims), std::move(strides));
  return absl::OkStatus();
}

// --- SpecifyShape -----------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> SpecifyShape::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.empty()) return Invalid(*this, "expects x and one dim per dim of x");
  ASSIGN_OR_RETURN(const TensorType* x, TensorInput(*this, inputs, 0));
  if (static_cast<int>(inputs.size()) != x->ndim() + 1) {
    return Invalid(*this, absl::StrCat("input 0 has type ", x->ToString(), " but ",
                                       inputs.size() - 1, " dims were given"));
  }
  StaticShape out = x->shape();
  for (size_t i = 1; i < inputs.size(); ++i) {
    RETURN_IF_ERROR(CheckInteger(*this, inputs, i, 0));
    if (!inputs[i]->is_constant()) continue;
    const int64_t dim = AsInt64s(static_cast<const Constant&>(*inputs[i]).data())[0];
    if (dim < 0) continue;
    if (out[i - 1] && *out[i - 1] != dim) {
      return Invalid(*this, absl::StrCat("input 0 has type ", x->ToString(), ", whose dim ", i - 1,
                                         " cannot be ", dim));
    }
    out[i - 1] = dim;
  }
  // Specified dims like (2^40, 2^40) make no type: later products of them would overflow.
  RETURN_IF_ERROR(CheckKnownDims(*this, out));
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(x->dtype(), std::move(out))});
}

absl::Status SpecifyShape::Perform(const Apply&, std::span<const Tensor> inputs,
                                   std::vector<Tensor>& outputs) const {
  for (size_t i = 1; i < inputs.size(); ++i) {
    const int64_t dim = ScalarInt(inputs[i]);
    if (dim >= 0 && inputs[0].shape()[i - 1] != dim) {
      return Invalid(*this, absl::StrCat("dim ", i - 1, " of input has shape ",
                                         inputs[0].shape()[i - 1], ", expected ", dim, "."));
    }
  }
  outputs[0] = inputs[0];
  return absl::OkStatus();
}

// --- MakeVector -------------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> MakeVector::MakeNode(std::vector<VariablePtr> inputs) const {
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSIGN_OR_RETURN(const TensorType* t, TensorInput(*this, inputs, i));
    if (t->ndim() != 0 || !CanCastSafely(t->dtype(), dtype())) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", t->ToString(),
                                         " but scalars that cast safely to ", DTypeName(dtype()),
                                         " are needed"));
    }
  }
  const int64_t n = static_cast<int64_t>(inputs.size());
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(dtype(), {StaticDim(n)})});
}

absl::Status MakeVector::Perform(const Apply&, std::span<const Tensor> inputs,
                                 std::vector<Tensor>& outputs) const {
  Tensor out = Tensor::Empty(dtype(), {static_cast<int64_t>(inputs.size())});
  const int size = DTypeSize(dtype());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor v = inputs[i].AsType(dtype());
    std::memcpy(static_cast<char*>(out.raw_data()) + i * size, v.raw_data(), size);
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

// --- DSL --------------------------------------------------------------------------------------

Var shape(const Var& x) { return ApplyOp(OpPtr(std::make_shared<ShapeOp>()), {x}); }

Var shape_i(const Var& x, int i) {
  if (!x.ok()) return x;
  const int ndim = x->tensor_type() != nullptr ? x.ndim() : 0;
  return ApplyOp(OpPtr(std::make_shared<ShapeI>(i < 0 ? i + ndim : i)), {x});
}

Var reshape(const Var& x, const std::vector<int64_t>& dims) {
  absl::StatusOr<Tensor> shp =
      Tensor::FromValues<int64_t>(DType::kInt64, {static_cast<int64_t>(dims.size())}, dims);
  return reshape(x, constant(*std::move(shp)));
}

Var reshape(const Var& x, const Var& dims) {
  if (!dims.ok()) return dims;
  const TensorType* t = dims->tensor_type();
  if (t == nullptr || t->ndim() != 1 || !t->shape()[0]) {
    return Var(absl::InvalidArgumentError(absl::StrCat(
        "reshape: the shape ", dims->ToString(), " must be an integer vector of known length")));
  }
  return ApplyOp(OpPtr(std::make_shared<Reshape>(static_cast<int>(*t->shape()[0]))), {x, dims});
}

Var specify_shape(const Var& x, const StaticShape& dims) {
  std::vector<Var> inputs = {x};
  for (const StaticDim& d : dims) inputs.push_back(constant(d.value_or(-1)));
  return ApplyOp(OpPtr(std::make_shared<SpecifyShape>()), std::move(inputs));
}

Var make_vector(const std::vector<Var>& scalars, DType dtype) {
  return ApplyOp(OpPtr(std::make_shared<MakeVector>(dtype)), scalars);
}

Var flatten(const Var& x, int ndim) {
  if (!x.ok()) return x;
  if (ndim < 1 || ndim > std::max(1, x.ndim())) {
    return Var(absl::InvalidArgumentError(
        absl::StrCat("flatten: ndim ", ndim, " is not in [1, ", std::max(1, x.ndim()), "]")));
  }
  std::vector<Var> dims;
  for (int d = 0; d < ndim - 1; ++d) dims.push_back(shape_i(x, d));
  dims.push_back(constant(int64_t{-1}));
  return reshape(x, make_vector(dims));
}

Var expand_dims(const Var& x, int axis) {
  if (!x.ok()) return x;
  const int ndim = x.ndim();
  const int a = axis < 0 ? axis + ndim + 1 : axis;
  if (a < 0 || a > ndim) {
    return Var(absl::InvalidArgumentError(
        absl::StrCat("expand_dims: axis ", axis, " is out of bounds for ", x->type()->ToString())));
  }
  std::vector<int> order;
  for (int d = 0; d < ndim; ++d) order.push_back(d);
  order.insert(order.begin() + a, kX);
  return dimshuffle(x, order);
}

Var squeeze(const Var& x) {
  if (!x.ok()) return x;
  std::vector<int> axes;
  const std::vector<bool> b = x.type().broadcastable();
  for (int d = 0; d < x.ndim(); ++d) {
    if (b[d]) axes.push_back(d);
  }
  return squeeze(x, axes);
}

Var squeeze(const Var& x, const std::vector<int>& axes) {
  if (!x.ok()) return x;
  const int ndim = x.ndim();
  const std::vector<bool> b = x.type().broadcastable();
  std::vector<bool> drop(ndim, false);
  for (int axis : axes) {
    const int a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim || !b[a]) {
      return Var(absl::InvalidArgumentError(absl::StrCat("squeeze: cannot squeeze axis ", axis,
                                                         " of ", x->type()->ToString(),
                                                         ", which is not of static size 1")));
    }
    drop[a] = true;
  }
  std::vector<int> order;
  for (int d = 0; d < ndim; ++d) {
    if (!drop[d]) order.push_back(d);
  }
  return dimshuffle(x, order);
}

// Shape: (ndim,); Shape_i: a scalar.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> ShapeOp::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{{ConstDim(static_cast<int64_t>(in[0].size()))}};
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> ShapeI::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{{}};
}

// The shape argument's entries, a -1 among them resolved from the input's size.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> Reshape::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  Var size = Var(ProductOf(in[0]));
  Var known = Var(ConstDim(1));
  std::vector<Var> entries;
  for (int d = 0; d < ndim(); ++d) {
    entries.push_back(subtensor(Var(node.inputs()[1]), {d}));
    known = known * entries.back();
  }
  ShapeVars out;
  for (int d = 0; d < ndim(); ++d) {
    // known is negative exactly when one entry is -1: that entry is size / (-known).
    Var resolved = switch_(eq(entries[d], constant(-1)),
                           int_div(size, maximum(-known, constant(1))), entries[d]);
    out.push_back(cast(resolved, DType::kInt64).ptr());
  }
  return std::vector<ShapeVars>{out};
}

// The specified dims where given (>= 0 constants), the input's elsewhere.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> SpecifyShape::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  ShapeVars out = in[0];
  for (size_t d = 0; d < out.size(); ++d) {
    const VariablePtr& given = node.inputs()[d + 1];
    if (given->is_constant() &&
        static_cast<const Constant&>(*given).data().ElementAsDouble(0) >= 0) {
      out[d] = cast(Var(given), DType::kInt64).ptr();
    }
  }
  return std::vector<ShapeVars>{out};
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> MakeVector::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{{ConstDim(static_cast<int64_t>(node.num_inputs()))}};
}

}  // namespace kiln
