#include "core/ops/ravel_index.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(UnravelIndex);
KILN_REGISTER_OP(RavelMultiIndex);

namespace {

absl::Status CheckOrder(const std::string& order) {
  if (order == "C" || order == "F") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("attribute 'order' must be 'C' or 'F', not '", order, "'"));
}

// The dims vector's length, known from its type, or INVALID_ARGUMENT.
absl::StatusOr<int64_t> DimsLength(const Op& op, const std::vector<VariablePtr>& in, size_t i) {
  ASSIGN_OR_RETURN(const TensorType* dims,
                   ExpectTensor(op, in, i, 1, true, "an integer vector (dims)"));
  if (!dims->shape()[0]) {
    return Invalid(op, absl::StrCat("input ", i, " (dims) has type ", dims->ToString(),
                                    ": its length must be known"));
  }
  if (*dims->shape()[0] > 64) {
    return Invalid(op, absl::StrCat("input ", i, " (dims) has type ", dims->ToString(),
                                    ": more than 64 dims"));
  }
  return *dims->shape()[0];
}

// The dims' values and the element stride of each in `order`, or NumPy's error for a negative
// dim or a size that does not fit an int64.
absl::Status DimStrides(const Op& op, const Tensor& dims_t, const std::string& order,
                        std::vector<int64_t>& dims, std::vector<int64_t>& strides, int64_t& size) {
  const Tensor d = dims_t.AsType(DType::kInt64);
  dims.assign(d.data<int64_t>(), d.data<int64_t>() + d.size());
  strides.assign(dims.size(), 1);
  size = 1;
  const int n = static_cast<int>(dims.size());
  for (int k = 0; k < n; ++k) {
    const int i = order == "C" ? n - 1 - k : k;
    if (dims[i] < 0) {
      return Invalid(op, absl::StrCat("dims has the negative entry ", dims[i]));
    }
    strides[i] = size;
    const std::optional<int64_t> next = CheckedMul(size, dims[i]);
    if (!next) {
      return Invalid(op,
                     "invalid dims: array size defined by dims is larger than the maximum "
                     "possible size.");
    }
    size = *next;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status UnravelIndexAttrs::Check() const { return CheckOrder(order); }

absl::Status RavelMultiIndexAttrs::Check() const {
  if (mode != "raise" && mode != "wrap" && mode != "clip") {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute 'mode' must be 'raise', 'wrap' or 'clip', not '", mode, "'"));
  }
  return CheckOrder(order);
}

// ---- UnravelIndex ----

absl::StatusOr<ApplyPtr> UnravelIndex::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 2) return Invalid(*this, "expects 2 inputs (indices, dims)");
  ASSIGN_OR_RETURN(const TensorType* indices,
                   ExpectTensor(*this, inputs, 0, -1, true, "an integer tensor (indices)"));
  ASSIGN_OR_RETURN(const int64_t n, DimsLength(*this, inputs, 1));
  std::vector<TypePtr> outs;
  for (int64_t i = 0; i < n; ++i) {
    outs.push_back(TensorType::Make(DType::kInt64, StaticShape(indices->ndim(), std::nullopt)));
  }
  return Apply::Make(self(), std::move(inputs), std::move(outs));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> UnravelIndex::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>(node.num_outputs(), in[0]);
}

absl::Status UnravelIndex::Perform(const Apply& node, std::span<const Tensor> inputs,
                                   std::vector<Tensor>& outputs) const {
  std::vector<int64_t> dims, strides;
  int64_t size = 0;
  RETURN_IF_ERROR(DimStrides(*this, inputs[1], attrs().order, dims, strides, size));
  if (static_cast<int>(dims.size()) != node.num_outputs()) {
    return Invalid(*this, absl::StrCat("dims has ", dims.size(), " entries but the node has ",
                                       node.num_outputs(), " outputs"));
  }
  const Tensor idx = inputs[0].AsType(DType::kInt64);
  // Every output together: dims.size() tensors of indices' shape.
  Shape all = idx.shape();
  all.insert(all.begin(), static_cast<int64_t>(dims.size()));
  RETURN_IF_ERROR(CheckOutputShape(*this, all, DType::kInt64));
  const int64_t* p = idx.data<int64_t>();
  for (int64_t e = 0; e < idx.size(); ++e) {
    if (p[e] < 0 || p[e] >= size) {
      return Invalid(*this,
                     absl::StrCat("index ", p[e], " is out of bounds for array with size ", size));
    }
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    Tensor out = Tensor::Empty(DType::kInt64, idx.shape());
    int64_t* o = out.data<int64_t>();
    for (int64_t e = 0; e < idx.size(); ++e) o[e] = p[e] / strides[k] % dims[k];
    outputs[k] = std::move(out);
  }
  return absl::OkStatus();
}

std::vector<std::vector<bool>> UnravelIndex::ConnectionPattern(const Apply& node) const {
  return std::vector<std::vector<bool>>(2, std::vector<bool>(node.num_outputs(), false));
}

std::vector<Var> UnravelIndex::LOp(const Apply&, const std::vector<Var>&) const {
  return {disconnected_type(), disconnected_type()};
}

// ---- RavelMultiIndex ----

absl::StatusOr<ApplyPtr> RavelMultiIndex::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() < 2) return Invalid(*this, "expects the index tensors and dims");
  const size_t n = inputs.size() - 1;
  int ndim = 0;
  for (size_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(const TensorType* t,
                     ExpectTensor(*this, inputs, i, -1, true, "an integer tensor (an index)"));
    ndim = std::max(ndim, t->ndim());
  }
  ASSIGN_OR_RETURN(const int64_t length, DimsLength(*this, inputs, n));
  if (length != static_cast<int64_t>(n)) {
    return Invalid(*this, absl::StrCat("dims has ", length,
                                       " entries: parameter multi_index "
                                       "must be a sequence of length ",
                                       length));
  }
  TypePtr out = TensorType::Make(DType::kInt64, StaticShape(ndim, std::nullopt));
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> RavelMultiIndex::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const int ndim = node.outputs()[0]->tensor_type()->ndim();
  ShapeVars out;
  for (int d = 0; d < ndim; ++d) {
    std::vector<VariablePtr> dims;
    for (size_t i = 0; i + 1 < in.size(); ++i) {
      const int at = d - (ndim - static_cast<int>(in[i].size()));
      if (at >= 0) dims.push_back(in[i][at]);
    }
    out.push_back(BroadcastDim(dims));
  }
  return std::vector<ShapeVars>{out};
}

absl::Status RavelMultiIndex::Perform(const Apply& node, std::span<const Tensor> inputs,
                                      std::vector<Tensor>& outputs) const {
  const size_t n = inputs.size() - 1;
  std::vector<int64_t> dims, strides;
  int64_t size = 0;
  RETURN_IF_ERROR(DimStrides(*this, inputs[n], attrs().order, dims, strides, size));
  if (dims.size() != n) {
    return Invalid(
        *this, absl::StrCat("parameter multi_index must be a sequence of length ", dims.size()));
  }
  // The indices' broadcast shape.
  const int ndim = node.outputs()[0]->tensor_type()->ndim();
  Shape shape(ndim, 1);
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = inputs[i].shape();
    for (int d = 0; d < static_cast<int>(s.size()); ++d) {
      int64_t& o = shape[ndim - s.size() + d];
      if (o == 1) {
        o = s[d];
      } else if (s[d] != 1 && s[d] != o) {
        return Invalid(*this, absl::StrCat("the index shapes do not broadcast: ", ShapeToString(s),
                                           " and ", ShapeToString(shape)));
      }
    }
  }
  RETURN_IF_ERROR(CheckOutputShape(*this, shape, DType::kInt64));
  Tensor out = Tensor::Zeros(DType::kInt64, shape);
  int64_t* o = out.data<int64_t>();
  const std::string& mode = attrs().mode;
  for (size_t i = 0; i < n; ++i) {
    const std::optional<Tensor> view = inputs[i].BroadcastTo(shape);
    if (!view) return Invalid(*this, absl::StrCat("index ", i, " does not broadcast"));
    const Tensor idx = view->AsType(DType::kInt64);
    const int64_t* p = idx.data<int64_t>();
    const int64_t dim = dims[i];
    for (int64_t e = 0; e < out.size(); ++e) {
      int64_t v = p[e];
      if (v < 0 || v >= dim) {
        if (mode == "raise" || dim == 0) {
          return Invalid(*this, absl::StrCat("index ", v, " of input ", i, " is outside dim ", dim,
                                             ": invalid entry in coordinates array"));
        }
        v = mode == "wrap" ? ((v % dim) + dim) % dim : std::clamp<int64_t>(v, 0, dim - 1);
      }
      o[e] += v * strides[i];
    }
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

std::vector<std::vector<bool>> RavelMultiIndex::ConnectionPattern(const Apply& node) const {
  return std::vector<std::vector<bool>>(node.num_inputs(), std::vector<bool>{false});
}

std::vector<Var> RavelMultiIndex::LOp(const Apply& node, const std::vector<Var>&) const {
  return std::vector<Var>(node.num_inputs(), disconnected_type());
}

// ---- builders ----

std::vector<Var> unravel_index(const Var& indices, const Var& dims, const std::string& order) {
  if (!indices.ok()) return {indices};
  if (!dims.ok()) return {dims};
  const UnravelIndexAttrs attrs{order};
  if (absl::Status s = attrs.Check(); !s.ok()) {
    return {Var(absl::InvalidArgumentError(absl::StrCat("UnravelIndex: ", s.message())))};
  }
  absl::StatusOr<ApplyPtr> node =
      std::make_shared<UnravelIndex>(attrs)->MakeNode({indices.ptr(), dims.ptr()});
  if (!node.ok()) return {Var(node.status())};
  std::vector<Var> out;
  for (int i = 0; i < (*node)->num_outputs(); ++i) out.push_back(Var((*node)->output(i)));
  return out;
}

Var ravel_multi_index(const std::vector<Var>& multi_index, const Var& dims, const std::string& mode,
                      const std::string& order) {
  const RavelMultiIndexAttrs attrs{mode, order};
  if (absl::Status s = attrs.Check(); !s.ok()) {
    return Var(absl::InvalidArgumentError(absl::StrCat("RavelMultiIndex: ", s.message())));
  }
  std::vector<Var> inputs = multi_index;
  inputs.push_back(dims);
  return ApplyOp(OpPtr(std::make_shared<RavelMultiIndex>(attrs)), inputs);
}

}  // namespace kiln
