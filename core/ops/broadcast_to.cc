#include "core/ops/broadcast_to.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/grad_util.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(BroadcastTo);
KILN_REGISTER_OP(Choose);

// ---- BroadcastTo ----

absl::StatusOr<ApplyPtr> BroadcastTo::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.empty()) return Invalid(*this, "expects an input (a) and its new dims");
  ASSIGN_OR_RETURN(const TensorType* a, ExpectTensor(*this, inputs, 0, -1, false, "a tensor"));
  const int ndim = static_cast<int>(inputs.size()) - 1;
  if (ndim < a->ndim() || ndim > 64) {
    return Invalid(*this,
                   absl::StrCat("input 0 has type ", a->ToString(), " but the shape has ", ndim,
                                " dims: a broadcasts to as many dims as it has, "
                                "or more (at most 64)"));
  }
  StaticShape shape(ndim, std::nullopt);
  for (int d = 0; d < ndim; ++d) {
    RETURN_IF_ERROR(
        ExpectTensor(*this, inputs, d + 1, 0, true, "an integer scalar (a dim)").status());
    shape[d] = ConstantInt(inputs[d + 1]);
    if (shape[d] && *shape[d] < 0) {
      return Invalid(*this, absl::StrCat("dim ", d, " is ", *shape[d],
                                         ": all elements of broadcast shape must be "
                                         "non-negative"));
    }
    const int ad = d - (ndim - a->ndim());
    if (ad >= 0 && shape[d] && a->shape()[ad] && *a->shape()[ad] != 1 &&
        *a->shape()[ad] != *shape[d]) {
      return Invalid(*this,
                     absl::StrCat("input 0 has type ", a->ToString(),
                                  ", which does not broadcast to dim ", d, " of size ", *shape[d]));
    }
  }
  RETURN_IF_ERROR(CheckKnownDims(*this, shape));
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(a->dtype(), shape)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> BroadcastTo::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>&) const {
  ShapeVars out;
  for (size_t i = 1; i < node.inputs().size(); ++i) {
    ASSIGN_OR_RETURN(VariablePtr d, Unwrap(cast(Var(node.inputs()[i]), DType::kInt64)));
    out.push_back(d);
  }
  return std::vector<ShapeVars>{out};
}

absl::Status BroadcastTo::Perform(const Apply&, std::span<const Tensor> inputs,
                                  std::vector<Tensor>& outputs) const {
  Shape shape;
  for (size_t i = 1; i < inputs.size(); ++i) {
    shape.push_back(ScalarInt(inputs[i]));
    if (shape.back() < 0) {
      return Invalid(*this, absl::StrCat("shape ", ShapeToString(shape),
                                         "...: all elements of broadcast shape must be "
                                         "non-negative"));
    }
  }
  RETURN_IF_ERROR(CheckOutputShape(*this, shape, inputs[0].dtype()));
  std::optional<Tensor> view = inputs[0].BroadcastTo(shape);
  if (!view) {
    return Invalid(*this, absl::StrCat("operands could not be broadcast together: input 0 of "
                                       "shape ",
                                       ShapeToString(inputs[0].shape()), " and requested shape ",
                                       ShapeToString(shape)));
  }
  outputs[0] = view->AsType(view->dtype());
  return absl::OkStatus();
}

// Aesara's: gz summed over the leading dims a lacks and over a's static broadcastable dims that
// the output's static shape does not have; the dims are not differentiable.
std::vector<Var> BroadcastTo::LOp(const Apply& node, const std::vector<Var>& g) const {
  std::vector<Var> grads = {SumToShapeOf(g[0], Var(node.inputs()[0]))};
  for (int i = 1; i < node.num_inputs(); ++i) {
    grads.push_back(grad_undefined(Name(), i, node.inputs()[i]));
  }
  return grads;
}

// ---- Choose ----

absl::Status ChooseAttrs::Check() const {
  if (mode == "raise" || mode == "wrap" || mode == "clip") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("attribute 'mode' must be 'raise', 'wrap' or 'clip', not '", mode, "'"));
}

namespace {

// The broadcast of a's dims with choices' dims after the first (right-aligned), as dims of D.
template <typename D, typename Merge>
std::vector<D> ChooseDims(const std::vector<D>& a, const std::vector<D>& choices, D one,
                          Merge merge) {
  const std::vector<D> rest(choices.begin() + 1, choices.end());
  const size_t n = std::max(a.size(), rest.size());
  std::vector<D> out(n, one);
  for (size_t d = 0; d < n; ++d) {
    std::vector<D> dims;
    if (d + a.size() >= n) dims.push_back(a[d + a.size() - n]);
    if (d + rest.size() >= n) dims.push_back(rest[d + rest.size() - n]);
    out[d] = merge(dims);
  }
  return out;
}

}  // namespace

absl::StatusOr<ApplyPtr> Choose::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 2) return Invalid(*this, "expects 2 inputs (a, choices)");
  ASSIGN_OR_RETURN(const TensorType* a, ExpectTensor(*this, inputs, 0, -1, false, "a tensor"));
  if (!IsInteger(a->dtype()) && a->dtype() != DType::kBool) {
    return Invalid(*this, absl::StrCat("choose first argument must have an [u]int* dtype. Got ",
                                       DTypeName(a->dtype()), "."));
  }
  ASSIGN_OR_RETURN(const TensorType* c, ExpectTensor(*this, inputs, 1, -1, false, "a tensor"));
  if (c->ndim() < 1) {
    return Invalid(*this, absl::StrCat("input 1 (choices) has type ", c->ToString(),
                                       " but needs a first dim indexing the choices"));
  }
  StaticShape shape = ChooseDims<StaticDim>(a->shape(), c->shape(), StaticDim(1),
                                            [](const std::vector<StaticDim>& dims) {
                                              for (const StaticDim& d : dims) {
                                                if (d != StaticDim(1)) return StaticDim();
                                              }
                                              return StaticDim(1);
                                            });
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(c->dtype(), shape)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Choose::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{ChooseDims<VariablePtr>(in[0], in[1], ConstDim(1), BroadcastDim)};
}

absl::Status Choose::Perform(const Apply&, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  const Tensor& a = inputs[0];
  const Tensor& c = inputs[1];
  const int64_t n = c.shape()[0];
  // The output shape: NumPy's broadcast of a with one choice, or an error.
  const Shape rest(c.shape().begin() + 1, c.shape().end());
  Shape shape = ChooseDims<int64_t>(a.shape(), c.shape(), 1, [](const std::vector<int64_t>& d) {
    int64_t out = 1;
    for (int64_t v : d) out = v == 1 ? out : (out == 1 ? v : (out == v ? out : -1));
    return out;
  });
  if (std::find(shape.begin(), shape.end(), -1) != shape.end()) {
    return Invalid(
        *this, absl::StrCat("shape mismatch: a of shape ", ShapeToString(a.shape()),
                            " and choices of shape ", ShapeToString(rest), " do not broadcast"));
  }
  RETURN_IF_ERROR(CheckOutputShape(*this, shape, c.dtype()));
  RETURN_IF_ERROR(CheckOutputShape(*this, shape, DType::kInt64));  // a's indices, broadcast
  Shape full = shape;
  full.insert(full.begin(), n);
  const std::optional<Tensor> a_view = a.BroadcastTo(shape);
  if (!a_view) return Invalid(*this, "a does not broadcast to the output");
  const Tensor index = a_view->AsType(DType::kInt64);
  // choices broadcast (as a strided view, nothing copied) to (n, *shape): each choice aligned on
  // the right with the output, the choice dim kept first.
  Shape padded = {n};
  std::vector<int64_t> padded_strides = {c.strides()[0]};
  for (size_t d = rest.size(); d < shape.size(); ++d)
    padded.push_back(1), padded_strides.push_back(0);
  for (size_t d = 0; d < rest.size(); ++d) {
    padded.push_back(rest[d]), padded_strides.push_back(c.strides()[d + 1]);
  }
  const std::optional<Tensor> broadcast = c.View(padded, padded_strides).BroadcastTo(full);
  if (!broadcast) return Invalid(*this, "choices do not broadcast to the output");
  const Tensor& choices = *broadcast;
  Tensor out = Tensor::Empty(c.dtype(), shape);
  const int64_t size = DTypeSize(c.dtype());
  const int64_t* idx = index.data<int64_t>();
  const char* src = static_cast<const char*>(choices.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  std::vector<int64_t> coord(shape.size(), 0);
  for (int64_t e = 0; e < out.size(); ++e) {
    int64_t k = idx[e];
    if (k < 0 || k >= n) {
      if (attrs().mode == "raise" || n == 0) {
        return Invalid(*this, absl::StrCat("index ", k, " for ", n,
                                           " choices: invalid entry in choice array"));
      }
      k = attrs().mode == "wrap" ? ((k % n) + n) % n : std::clamp<int64_t>(k, 0, n - 1);
    }
    int64_t at = k * choices.strides()[0];
    for (size_t d = 0; d < coord.size(); ++d) at += coord[d] * choices.strides()[d + 1];
    std::memcpy(dst + e * size, src + at * size, size);
    for (int d = static_cast<int>(coord.size()) - 1; d >= 0 && ++coord[d] == shape[d]; --d) {
      coord[d] = 0;
    }
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

std::vector<Var> Choose::LOp(const Apply& node, const std::vector<Var>&) const {
  return {
      grad_undefined(Name(), 0, node.inputs()[0], "a holds indices"),
      grad_not_implemented(Name(), 1, node.inputs()[1], "Aesara's Choose defines no gradient.")};
}

// ---- builders ----

Var broadcast_to(const Var& x, const std::vector<Var>& shape) {
  if (!x.ok()) return x;
  if (x.ndim() == 0 && shape.empty()) return x;
  std::vector<Var> inputs = {x};
  inputs.insert(inputs.end(), shape.begin(), shape.end());
  return ApplyOp(OpPtr(std::make_shared<BroadcastTo>()), inputs);
}

Var choose(const Var& a, const Var& choices, const std::string& mode) {
  const ChooseAttrs attrs{mode};
  if (absl::Status s = attrs.Check(); !s.ok()) {
    return Var(absl::InvalidArgumentError(absl::StrCat("Choose: ", s.message())));
  }
  return ApplyOp(OpPtr(std::make_shared<Choose>(attrs)), {a, choices});
}

}  // namespace kiln
