#include "core/ops/diagonal_subtensor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/diagonal_subtensor_kernels.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(DiagonalSubtensor);
KILN_REGISTER_OP(IncDiagonalSubtensor);

namespace {

// NumPy's same_kind casting of amt's dtype into x's: bool < unsigned < signed < float < complex,
// an unsigned integer fitting a signed one.
int Kind(DType d) {
  if (d == DType::kBool) return 0;
  if (IsUnsignedInt(d)) return 1;
  if (IsInteger(d)) return 2;
  if (IsFloat(d)) return 3;
  return 4;
}

// Checks x (input 0, any rank) and the axes i0, i1 (inputs 1 and 2, integer scalars).
absl::Status CheckXAndAxes(const Op& op, const std::vector<VariablePtr>& inputs) {
  static constexpr const char* kNames[] = {"x", "i0", "i1"};
  for (int i = 0; i < 3; ++i) {
    const TensorType* t = inputs[i]->tensor_type();
    if (t == nullptr) {
      return Invalid(op,
                     absl::StrCat("input ", i, " (", kNames[i], ") has type ",
                                  inputs[i]->type()->ToString(), ", which is not a TensorType"));
    }
    if (i > 0 && (t->ndim() != 0 || !IsInteger(t->dtype()))) {
      return Invalid(op, absl::StrCat("input ", i, " (", kNames[i], ") has type ", t->ToString(),
                                      " but must be an integer scalar (an axis of x)"));
    }
  }
  return absl::OkStatus();
}

// The symbolic length of the stripe along i0: n0 - n1 + 1, or min(n0, 1) when n1 is 0 (NumPy's
// slice from -1), with n0, n1 the dims the axis values pick.
absl::StatusOr<ShapeVars> StripeShape(const Apply& node, const ShapeVars& dims) {
  const int ndim = static_cast<int>(dims.size());
  const std::optional<int64_t> c0 = ConstantInt(node.inputs()[1]);
  const std::optional<int64_t> c1 = ConstantInt(node.inputs()[2]);
  const Var one = constant(int64_t{1});
  if (c0 && c1 && *c0 >= -ndim && *c0 < ndim && *c1 >= -ndim && *c1 < ndim) {
    const int64_t a0 = *c0 < 0 ? *c0 + ndim : *c0, a1 = *c1 < 0 ? *c1 + ndim : *c1;
    ShapeVars out = dims;
    const Var n0(dims[a0]), n1(dims[a1]);
    const Var len = switch_(n1 > int64_t{0}, n0 - n1 + one, minimum(n0, one));
    RETURN_IF_ERROR(len.status());
    out[a0] = len.ptr();
    return out;
  }
  // Axes known at run time only: each dim picks itself out by comparing with the axis values.
  auto normalized = [&](int i) {
    const Var a = cast(Var(node.inputs()[i]), DType::kInt64);
    return switch_(a < int64_t{0}, a + constant(int64_t{ndim}), a);
  };
  const Var a0 = normalized(1), a1 = normalized(2);
  Var n0 = constant(int64_t{0}), n1 = constant(int64_t{0});
  for (int d = 0; d < ndim; ++d) {
    const Var here = constant(int64_t{d});
    n0 = switch_(eq(a0, here), Var(dims[d]), n0);
    n1 = switch_(eq(a1, here), Var(dims[d]), n1);
  }
  const Var len = switch_(n1 > int64_t{0}, n0 - n1 + one, minimum(n0, one));
  ShapeVars out;
  for (int d = 0; d < ndim; ++d) {
    const Var dim = switch_(eq(a0, constant(int64_t{d})), len, Var(dims[d]));
    RETURN_IF_ERROR(dim.status());
    out.push_back(dim.ptr());
  }
  return out;
}

}  // namespace

std::string DiagonalSubtensor::Name() const {
  return attrs().inplace ? "DiagonalSubtensor{inplace}" : "DiagonalSubtensor";
}

std::vector<std::vector<bool>> DiagonalSubtensor::ConnectionPattern(const Apply&) const {
  return {{true}, {false}, {false}};
}

std::vector<std::pair<int, int>> DiagonalSubtensor::view_map() const {
  if (attrs().inplace) return {{0, 0}};
  return {};
}

absl::StatusOr<ApplyPtr> DiagonalSubtensor::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 3) return Invalid(*this, "expects 3 inputs (x, i0, i1)");
  RETURN_IF_ERROR(CheckXAndAxes(*this, inputs));
  const TensorType* x = inputs[0]->tensor_type();
  // Aesara's output type: x's dtype, its dims of static size 1 kept (the stripe of a length-1
  // axis has length 1), the others unknown.
  StaticShape shape;
  for (const StaticDim& d : x->shape()) shape.push_back(d == StaticDim(1) ? d : StaticDim());
  TypePtr out = TensorType::Make(x->dtype(), std::move(shape));
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> DiagonalSubtensor::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  ASSIGN_OR_RETURN(ShapeVars out, StripeShape(node, in[0]));
  return std::vector<ShapeVars>{std::move(out)};
}

absl::Status DiagonalSubtensor::Perform(const Apply&, std::span<const Tensor> inputs,
                                        std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(Tensor view, DiagonalStripe(*this, inputs[0], inputs[1], inputs[2]));
  RETURN_IF_ERROR(CheckOutputShape(*this, view.shape(), view.dtype()));
  outputs[0] = view.AsType(view.dtype());  // a contiguous copy
  return absl::OkStatus();
}

// Aesara's grad: the output gradient added into zeros shaped like x; the axes are disconnected.
std::vector<Var> DiagonalSubtensor::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]), i0(node.inputs()[1]), i1(node.inputs()[2]);
  return {inc_diagonal_subtensor(zeros_like(x), i0, i1, g[0]), disconnected_type(),
          disconnected_type()};
}

std::string IncDiagonalSubtensor::Name() const {
  return attrs().inplace ? "IncDiagonalSubtensor{inplace}" : "IncDiagonalSubtensor";
}

std::vector<std::vector<bool>> IncDiagonalSubtensor::ConnectionPattern(const Apply&) const {
  return {{true}, {false}, {false}, {true}};
}

std::vector<std::pair<int, int>> IncDiagonalSubtensor::destroy_map() const {
  return DestroysInput0If(attrs().inplace);
}

absl::StatusOr<ApplyPtr> IncDiagonalSubtensor::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 4) return Invalid(*this, "expects 4 inputs (x, i0, i1, amt)");
  RETURN_IF_ERROR(CheckXAndAxes(*this, inputs));
  const TensorType* x = inputs[0]->tensor_type();
  const TensorType* amt = inputs[3]->tensor_type();
  if (amt == nullptr) {
    return Invalid(*this, absl::StrCat("input 3 (amt) has type ", inputs[3]->type()->ToString(),
                                       ", which is not a TensorType"));
  }
  if (amt->ndim() > x->ndim()) {
    return Invalid(*this, absl::StrCat("input 3 (amt) has type ", amt->ToString(),
                                       " but input 0 "
                                       "(x) has ",
                                       x->ToString(),
                                       ": amt has more dimensions "
                                       "than x"));
  }
  const int from = Kind(amt->dtype()), to = Kind(x->dtype());
  if (from > to || (from == 2 && to == 1)) {
    return Invalid(
        *this, absl::StrCat("input 3 (amt) has type ", amt->ToString(),
                            " but input 0 "
                            "(x) has ",
                            x->ToString(), ": ", DTypeName(amt->dtype()), " cannot be added into ",
                            DTypeName(x->dtype()), " in place (NumPy's same_kind casting)"));
  }
  TypePtr out = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> IncDiagonalSubtensor::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status IncDiagonalSubtensor::Perform(const Apply&, std::span<const Tensor> inputs,
                                           std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  RETURN_IF_ERROR(CheckOutputShape(*this, x.shape(), x.dtype()));
  Tensor out = x.AsType(x.dtype());  // a contiguous copy, whatever inplace says
  ASSIGN_OR_RETURN(Tensor stripe, DiagonalStripe(*this, out, inputs[1], inputs[2]));
  RETURN_IF_ERROR(AddInto(*this, stripe, inputs[3]));
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

// Aesara's grad: the output gradient for x, its stripe for amt; the axes are disconnected.
std::vector<Var> IncDiagonalSubtensor::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var i0(node.inputs()[1]), i1(node.inputs()[2]);
  return {g[0], disconnected_type(), disconnected_type(), diagonal_subtensor(g[0], i0, i1)};
}

Var diagonal_subtensor(const Var& x, const Var& i0, const Var& i1) {
  return ApplyOp(OpPtr(std::make_shared<DiagonalSubtensor>()), {x, i0, i1});
}

Var inc_diagonal_subtensor(const Var& x, const Var& i0, const Var& i1, const Var& amt) {
  return ApplyOp(OpPtr(std::make_shared<IncDiagonalSubtensor>()), {x, i0, i1, amt});
}

}  // namespace kiln
