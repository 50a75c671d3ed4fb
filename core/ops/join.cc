#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/alloc.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"

namespace kiln {

KILN_REGISTER_OP(Join);
KILN_REGISTER_OP(Split);

// --- Join -------------------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> Join::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() < 2) return Invalid(*this, "expects an axis and at least one tensor");
  absl::StatusOr<const TensorType*> axis_type =
      ExpectTensor(*this, inputs, 0, 0, true, "an integer scalar axis");
  if (!axis_type.ok()) return axis_type.status();
  const std::optional<int64_t> axis = ConstantInt(inputs[0]);
  std::vector<const TensorType*> types;
  for (size_t i = 1; i < inputs.size(); ++i) {
    ASSIGN_OR_RETURN(const TensorType* t, ExpectTensor(*this, inputs, i, -1, false, "a tensor"));
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
        // Static lengths are summed in checked arithmetic (CheckKnownDims bounds the total).
        const bool known = shape[d] && t.shape()[d];
        shape[d] =
            known ? StaticDim(CheckedAdd(*shape[d], *t.shape()[d]).value_or(kMaxTensorBytes + 1))
                  : std::nullopt;
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
  RETURN_IF_ERROR(CheckKnownDims(*this, shape));
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(dtype, shape)});
}

absl::Status Join::Perform(const Apply& node, std::span<const Tensor> inputs,
                           std::vector<Tensor>& outputs) const {
  const TensorType* out_type = node.output_ptr(0)->tensor_type();
  const int ndim = out_type->ndim();
  const int64_t given = ScalarInt(inputs[0]);
  const int64_t axis = given < 0 ? given + ndim : given;
  if (axis < 0 || axis >= ndim) {
    return Invalid(
        *this, absl::StrCat("axis ", given, " is out of bounds for tensors of ", ndim, " dims"));
  }
  Shape shape = inputs[1].shape();
  shape[axis] = 0;
  bool too_long = false;
  for (size_t i = 1; i < inputs.size(); ++i) {
    for (int d = 0; d < ndim; ++d) {
      if (d != axis && inputs[i].shape()[d] != inputs[1].shape()[d]) {
        return Invalid(
            *this, absl::StrCat("input ", i, " has shape ", ShapeToString(inputs[i].shape()),
                                " but input 1 has ", ShapeToString(inputs[1].shape()), ": dim ", d,
                                " differs"));
      }
    }
    // Checked: many empty pieces of length 2^46 on the axis must not wrap the total.
    too_long =
        too_long || __builtin_add_overflow(shape[axis], inputs[i].shape()[axis], &shape[axis]);
  }
  if (too_long) {
    return Invalid(*this, absl::StrCat("the inputs' lengths on axis ", axis,
                                       " add up to more than ", kMaxTensorBytes));
  }
  RETURN_IF_ERROR(CheckOutputShape(*this, shape, out_type->dtype()));
  Tensor out = Tensor::Empty(out_type->dtype(), shape);
  outputs[0] = out;
  if (out.nbytes() == 0) return absl::OkStatus();  // no loop over the outer rows of nothing
  const int size = DTypeSize(out.dtype());
  // Copy each piece into its slab of every outer row.
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < ndim; ++d) inner *= shape[d];
  int64_t offset = 0;
  char* dst = static_cast<char*>(out.raw_data());
  for (size_t i = 1; i < inputs.size(); ++i) {
    // The piece itself when it is contiguous in the output's dtype, else a converted copy.
    Tensor converted;
    const bool as_is = inputs[i].dtype() == out.dtype() && inputs[i].is_contiguous();
    if (!as_is) converted = inputs[i].AsType(out.dtype());
    const Tensor& piece = as_is ? inputs[i] : converted;
    const int64_t chunk = piece.shape()[axis] * inner * size;
    const char* src = static_cast<const char*>(piece.raw_data());
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + (o * shape[axis] * inner) * size + offset, src + o * chunk, chunk);
    }
    offset += chunk;
  }
  return absl::OkStatus();
}

// The sum of the pieces along a constant axis; the other dims broadcast.
absl::StatusOr<std::vector<ShapeVars>> Join::InferShape(const Apply& node,
                                                        const std::vector<ShapeVars>& in) const {
  const std::optional<int64_t> given = ConstantInt(node.inputs()[0]);
  ShapeVars out = in[1];
  if (!given) {  // a symbolic axis: the output's own dims
    for (size_t d = 0; d < out.size(); ++d) out[d] = DimOf(node.output(0), static_cast<int>(d));
    return std::vector<ShapeVars>{out};
  }
  const int64_t axis = *given < 0 ? *given + static_cast<int64_t>(out.size()) : *given;
  Var total = Var(in[1][axis]);
  for (size_t i = 2; i < in.size(); ++i) total = total + Var(in[i][axis]);
  out[axis] = total.ptr();
  // The other dims agree: a static one where an input has it, else the first input's (as
  // Aesara's infer_shape).
  for (size_t d = 0; d < out.size(); ++d) {
    if (static_cast<int64_t>(d) == axis) continue;
    for (size_t i = 1; i < in.size(); ++i) {
      if (in[i][d]->is_constant()) {
        out[d] = in[i][d];
        break;
      }
    }
  }
  return std::vector<ShapeVars>{out};
}

// --- Split ------------------------------------------------------------------------------------

absl::Status SplitAttrs::Check() const {
  if (n_splits < 0 || n_splits > kMaxSplits) {
    return absl::InvalidArgumentError(
        absl::StrCat("n_splits ", n_splits, " is out of range [0, ", kMaxSplits, "]"));
  }
  return absl::OkStatus();
}

std::string Split::Name() const { return absl::StrCat("Split{", attrs().n_splits, "}"); }

std::vector<std::pair<int, int>> Split::view_map() const {
  std::vector<std::pair<int, int>> views;
  for (int i = 0; i < attrs().n_splits; ++i) views.push_back({i, 0});
  return views;
}

absl::StatusOr<ApplyPtr> Split::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 3) return Invalid(*this, "expects x, axis and sizes");
  absl::StatusOr<const TensorType*> x = ExpectTensor(*this, inputs, 0, -1, false, "a tensor");
  if (!x.ok()) return x.status();
  RETURN_IF_ERROR(ExpectTensor(*this, inputs, 1, 0, true, "an integer scalar axis").status());
  RETURN_IF_ERROR(ExpectTensor(*this, inputs, 2, 1, true, "an integer vector").status());
  const std::optional<int64_t> axis = ConstantInt(inputs[1]);
  if (!axis || *axis < 0 || *axis >= (*x)->ndim()) {
    return Invalid(*this, "the axis must be a constant dim of x");
  }
  StaticShape shape = (*x)->shape();
  shape[*axis] = std::nullopt;
  std::vector<TypePtr> types(attrs().n_splits, TensorType::Make((*x)->dtype(), shape));
  return Apply::Make(self(), std::move(inputs), types);
}

absl::Status Split::Perform(const Apply&, std::span<const Tensor> inputs,
                            std::vector<Tensor>& outputs) const {
  const int n_splits = attrs().n_splits;
  const Tensor& x = inputs[0];
  const int64_t axis = ScalarInt(inputs[1]);
  const Tensor sizes = inputs[2].AsType(DType::kInt64);
  if (sizes.size() != n_splits) {
    return Invalid(*this, absl::StrCat("got ", sizes.size(), " sizes for ", n_splits, " pieces"));
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
  for (int i = 0; i < n_splits; ++i) {
    Shape shape = x.shape();
    shape[axis] = sizes.data<int64_t>()[i];
    outputs[i] = x.View(shape, x.strides(), start * x.strides()[axis]);
    start += shape[axis];
  }
  return absl::OkStatus();
}

// The sizes.
absl::StatusOr<std::vector<ShapeVars>> Split::InferShape(const Apply& node,
                                                         const std::vector<ShapeVars>& in) const {
  const std::vector<VariablePtr>& x = node.inputs();
  const int n_splits = attrs().n_splits;
  const int64_t axis = *ConstantInt(x[1]);  // MakeNode takes only a constant axis
  std::vector<ShapeVars> outs;
  for (int i = 0; i < n_splits; ++i) {
    ShapeVars s = in[0];
    s[axis] = cast(subtensor(Var(x[2]), {i}), DType::kInt64).ptr();
    outs.push_back(s);
  }
  return outs;
}

Var concatenate(const std::vector<Var>& tensors, int axis) {
  if (tensors.empty()) return Var(absl::InvalidArgumentError("concatenate: no tensors"));
  if (!tensors[0].ok()) return tensors[0];
  if (axis < 0 && tensors[0]->tensor_type()) axis += tensors[0].ndim();
  std::vector<Var> inputs = {constant(axis)};
  inputs.insert(inputs.end(), tensors.begin(), tensors.end());
  return ApplyOp(OpPtr(std::make_shared<Join>()), inputs);
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
  auto op = std::make_shared<Split>(SplitAttrs{n});
  absl::StatusOr<Tensor> s =
      Tensor::FromValues<int64_t>(DType::kInt64, {static_cast<int64_t>(n)}, sizes);
  absl::StatusOr<ApplyPtr> node = op->MakeNode({x.ptr(), constant(axis).ptr(), constant(*s).ptr()});
  if (!node.ok()) return std::vector<Var>(std::max(1, n), Var(node.status()));
  std::vector<Var> out;
  for (int i = 0; i < n; ++i) out.push_back(Var((*node)->output(i)));
  return out;
}

}  // namespace kiln
