// The sparse ops' types, shapes, gradients and builders; their kernels are in sparse_kernels.cc.
#include "core/ops/sparse.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/grad_util.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(SparseDot);
KILN_REGISTER_OP(SampledDot);
KILN_REGISTER_OP(SparseToDense);
KILN_REGISTER_OP(SparseGather);
KILN_REGISTER_OP(ExpandIndptr);
KILN_REGISTER_OP(CompressIndptr);
KILN_REGISTER_OP(SparseUnion);
KILN_REGISTER_OP(SparseIntersection);
KILN_REGISTER_OP(SparseProductPairs);

namespace {

using Shapes = std::vector<ShapeVars>;

absl::Status ExpectCount(const Op& op, const std::vector<VariablePtr>& in, size_t n,
                         const char* names) {
  if (in.size() == n) return absl::OkStatus();
  return Invalid(op, absl::StrCat("expects ", n, " inputs (", names, "), got ", in.size()));
}

// Input i as an integer vector (coordinates or an indptr).
absl::Status ExpectIndexVector(const Op& op, const std::vector<VariablePtr>& in, size_t i) {
  return ExpectTensor(op, in, i, 1, true, "an integer vector").status();
}

// Input i as a float32 or float64 tensor of rank `ndim`; its dtype.
absl::StatusOr<DType> ExpectFloat(const Op& op, const std::vector<VariablePtr>& in, size_t i,
                                  int ndim, const char* what) {
  const TensorType* t = in[i]->tensor_type();
  if (t == nullptr || t->ndim() != ndim ||
      (t->dtype() != DType::kFloat32 && t->dtype() != DType::kFloat64)) {
    return Invalid(op, absl::StrCat("input ", i, " (", what, ") has type ",
                                    in[i]->type()->ToString(), " but a float32 or float64 ",
                                    ndim == 1 ? "vector" : "matrix", " is needed"));
  }
  return t->dtype();
}

// The static size of a vector input (its length), or unknown.
StaticDim Length(const VariablePtr& v) { return v->tensor_type()->shape()[0]; }

TypePtr Vector(DType dtype, StaticDim n = std::nullopt) { return TensorType::Make(dtype, {n}); }

// Dim 0 of every output of `node`, unknown before the kernel runs: Shape_i of the output itself.
Shapes OwnLengths(const Apply& node) {
  Shapes out;
  for (const VariablePtr& v : node.outputs()) out.push_back({DimOf(v, 0)});
  return out;
}

// The structure ops' four index vectors: (indices_a, indptr_a, indices_b, indptr_b).
absl::Status ExpectTwoStructures(const Op& op, const std::vector<VariablePtr>& in, size_t n,
                                 const char* names) {
  RETURN_IF_ERROR(ExpectCount(op, in, n, names));
  for (size_t i = 0; i < 4; ++i) RETURN_IF_ERROR(ExpectIndexVector(op, in, i));
  return absl::OkStatus();
}

// `v` cast to the dtype of `like` (a gradient back to its input's dtype).
Var CastLike(const Var& v, const VariablePtr& like) {
  return v.ok() && v.dtype() != like->tensor_type()->dtype() ? cast(v, like->tensor_type()->dtype())
                                                             : v;
}

std::vector<Var> AllDisconnected(const Apply& node) {
  return std::vector<Var>(node.num_inputs(), disconnected_type());
}

// Every output of `op` applied to `inputs`, or `n` copies of the first error.
std::vector<Var> ApplyAll(OpPtr op, const std::vector<Var>& inputs, size_t n) {
  std::vector<VariablePtr> in;
  for (const Var& v : inputs) {
    if (!v.ok()) return std::vector<Var>(n, v.status());
    in.push_back(v.ptr());
  }
  absl::StatusOr<ApplyPtr> node = op->MakeNode(std::move(in));
  if (!node.ok()) return std::vector<Var>(n, node.status());
  const std::vector<VariablePtr> outputs = (*node)->outputs();
  return std::vector<Var>(outputs.begin(), outputs.end());
}

// Only the float inputs (listed) carry values into the output; the rest place them.
std::vector<std::vector<bool>> ValuesFrom(const Apply& node, std::initializer_list<int> values) {
  std::vector<std::vector<bool>> pattern(node.num_inputs(),
                                         std::vector<bool>(node.num_outputs(), false));
  for (int i : values) pattern[i] = std::vector<bool>(node.num_outputs(), true);
  return pattern;
}

}  // namespace

// --- SparseDot(data, rows, cols, n_rows, b) ---------------------------------------------------

absl::StatusOr<ApplyPtr> SparseDot::MakeNode(std::vector<VariablePtr> in) const {
  RETURN_IF_ERROR(ExpectCount(*this, in, 5, "data, rows, cols, n_rows, b"));
  ASSIGN_OR_RETURN(DType data, ExpectFloat(*this, in, 0, 1, "data"));
  RETURN_IF_ERROR(ExpectIndexVector(*this, in, 1));
  RETURN_IF_ERROR(ExpectIndexVector(*this, in, 2));
  RETURN_IF_ERROR(ExpectTensor(*this, in, 3, 0, true, "an integer scalar (n_rows)").status());
  ASSIGN_OR_RETURN(DType b, ExpectFloat(*this, in, 4, 2, "b"));
  const std::optional<int64_t> n_rows = ConstantInt(in[3]);
  const StaticDim cols = in[4]->tensor_type()->shape()[1];
  TypePtr out = TensorType::Make(PromoteTypes(data, b), {n_rows, cols});
  return Apply::Make(self(), std::move(in), {std::move(out)});
}

absl::StatusOr<Shapes> SparseDot::InferShape(const Apply& node, const Shapes& in) const {
  const Var n_rows = cast(Var(node.inputs()[3]), DType::kInt64);
  RETURN_IF_ERROR(n_rows.status());
  return Shapes{{n_rows.ptr(), in[4][1]}};
}

std::vector<std::vector<bool>> SparseDot::ConnectionPattern(const Apply& node) const {
  return ValuesFrom(node, {0, 4});
}

std::vector<Var> SparseDot::LOp(const Apply& node, const std::vector<Var>& g) const {
  const std::vector<VariablePtr>& in = node.inputs();
  const Var data(in[0]), cols(in[2]), b(in[4]);
  const Var rows = attrs().compressed ? expand_indptr(Var(in[1])) : Var(in[1]);
  return {CastLike(sampled_dot(rows, cols, g[0], b), in[0]), disconnected_type(),
          disconnected_type(), disconnected_type(),
          CastLike(sparse_dot(data, cols, rows, shape_i(b, 0), g[0]), in[4])};
}

// --- SampledDot(rows, cols, x, y) --------------------------------------------------------------

absl::StatusOr<ApplyPtr> SampledDot::MakeNode(std::vector<VariablePtr> in) const {
  RETURN_IF_ERROR(ExpectCount(*this, in, 4, "rows, cols, x, y"));
  RETURN_IF_ERROR(ExpectIndexVector(*this, in, 0));
  RETURN_IF_ERROR(ExpectIndexVector(*this, in, 1));
  ASSIGN_OR_RETURN(DType x, ExpectFloat(*this, in, 2, 2, "x"));
  ASSIGN_OR_RETURN(DType y, ExpectFloat(*this, in, 3, 2, "y"));
  const StaticDim xk = in[2]->tensor_type()->shape()[1], yk = in[3]->tensor_type()->shape()[1];
  if (xk && yk && *xk != *yk) {
    return Invalid(*this, absl::StrCat("input 2 (x) has type ", in[2]->type()->ToString(),
                                       " but input 3 (y) has ", in[3]->type()->ToString(),
                                       ": x and y need as many columns"));
  }
  TypePtr out = Vector(PromoteTypes(x, y), Length(in[0]));
  return Apply::Make(self(), std::move(in), {std::move(out)});
}

absl::StatusOr<Shapes> SampledDot::InferShape(const Apply&, const Shapes& in) const {
  return Shapes{{in[0][0]}};
}

std::vector<std::vector<bool>> SampledDot::ConnectionPattern(const Apply& node) const {
  return ValuesFrom(node, {2, 3});
}

std::vector<Var> SampledDot::LOp(const Apply& node, const std::vector<Var>& g) const {
  const std::vector<VariablePtr>& in = node.inputs();
  const Var rows(in[0]), cols(in[1]), x(in[2]), y(in[3]);
  return {disconnected_type(), disconnected_type(),
          CastLike(sparse_dot(g[0], rows, cols, shape_i(x, 0), y), in[2]),
          CastLike(sparse_dot(g[0], cols, rows, shape_i(y, 0), x), in[3])};
}

// --- SparseToDense(data, rows, cols, shape) and SparseGather(x, rows, cols) --------------------

absl::StatusOr<ApplyPtr> SparseToDense::MakeNode(std::vector<VariablePtr> in) const {
  RETURN_IF_ERROR(ExpectCount(*this, in, 4, "data, rows, cols, shape"));
  ASSIGN_OR_RETURN(const TensorType* data, ExpectTensor(*this, in, 0, 1, false, "a vector (data)"));
  RETURN_IF_ERROR(ExpectIndexVector(*this, in, 1));
  RETURN_IF_ERROR(ExpectIndexVector(*this, in, 2));
  ASSIGN_OR_RETURN(const TensorType* shape,
                   ExpectTensor(*this, in, 3, 1, true, "an integer vector of 2 (shape)"));
  if (shape->shape()[0] && *shape->shape()[0] != 2) {
    return Invalid(*this, absl::StrCat("input 3 (shape) has type ", shape->ToString(),
                                       " but a shape of 2 dims is needed"));
  }
  TypePtr out = TensorType::Make(data->dtype(), {std::nullopt, std::nullopt});
  return Apply::Make(self(), std::move(in), {std::move(out)});
}

absl::StatusOr<Shapes> SparseToDense::InferShape(const Apply& node, const Shapes&) const {
  const Var shape = cast(Var(node.inputs()[3]), DType::kInt64);
  RETURN_IF_ERROR(shape.status());
  Shapes out(1);
  for (int64_t d : {0, 1}) {
    const Var dim = subtensor(shape, {Index(d)});
    RETURN_IF_ERROR(dim.status());
    out[0].push_back(dim.ptr());
  }
  return out;
}

std::vector<std::vector<bool>> SparseToDense::ConnectionPattern(const Apply& node) const {
  return ValuesFrom(node, {0});
}

std::vector<Var> SparseToDense::LOp(const Apply& node, const std::vector<Var>& g) const {
  const std::vector<VariablePtr>& in = node.inputs();
  std::vector<Var> grads = AllDisconnected(node);
  grads[0] = IsDiscreteVar(Var(in[0])) ? FloatZerosLike(Var(in[0]))
                                       : sparse_gather(g[0], Var(in[1]), Var(in[2]));
  return grads;
}

absl::StatusOr<ApplyPtr> SparseGather::MakeNode(std::vector<VariablePtr> in) const {
  RETURN_IF_ERROR(ExpectCount(*this, in, 3, "x, rows, cols"));
  ASSIGN_OR_RETURN(const TensorType* x, ExpectTensor(*this, in, 0, 2, false, "a matrix (x)"));
  RETURN_IF_ERROR(ExpectIndexVector(*this, in, 1));
  RETURN_IF_ERROR(ExpectIndexVector(*this, in, 2));
  TypePtr out = Vector(x->dtype(), Length(in[1]));
  return Apply::Make(self(), std::move(in), {std::move(out)});
}

absl::StatusOr<Shapes> SparseGather::InferShape(const Apply&, const Shapes& in) const {
  return Shapes{{in[1][0]}};
}

std::vector<std::vector<bool>> SparseGather::ConnectionPattern(const Apply& node) const {
  return ValuesFrom(node, {0});
}

std::vector<Var> SparseGather::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  std::vector<Var> grads = AllDisconnected(node);
  grads[0] = IsDiscreteVar(x)
                 ? FloatZerosLike(x)
                 : sparse_to_dense(g[0], Var(node.inputs()[1]), Var(node.inputs()[2]), shape(x));
  return grads;
}

// --- The structure ops: integers in, integers out, no gradient --------------------------------

absl::StatusOr<ApplyPtr> ExpandIndptr::MakeNode(std::vector<VariablePtr> in) const {
  RETURN_IF_ERROR(ExpectCount(*this, in, 1, "indptr"));
  RETURN_IF_ERROR(ExpectIndexVector(*this, in, 0));
  return Apply::Make(self(), std::move(in), {Vector(DType::kInt64)});
}

absl::StatusOr<Shapes> ExpandIndptr::InferShape(const Apply& node, const Shapes&) const {
  return OwnLengths(node);
}

std::vector<Var> ExpandIndptr::LOp(const Apply& node, const std::vector<Var>&) const {
  return AllDisconnected(node);
}

absl::StatusOr<ApplyPtr> CompressIndptr::MakeNode(std::vector<VariablePtr> in) const {
  RETURN_IF_ERROR(ExpectCount(*this, in, 2, "rows, n"));
  RETURN_IF_ERROR(ExpectIndexVector(*this, in, 0));
  RETURN_IF_ERROR(ExpectTensor(*this, in, 1, 0, true, "an integer scalar (n)").status());
  const std::optional<int64_t> n = ConstantInt(in[1]);
  const StaticDim length = n && *n >= 0 && *n < kMaxTensorBytes ? StaticDim(*n + 1) : std::nullopt;
  return Apply::Make(self(), std::move(in), {Vector(DType::kInt64, length)});
}

absl::StatusOr<Shapes> CompressIndptr::InferShape(const Apply& node, const Shapes&) const {
  const Var length = cast(Var(node.inputs()[1]), DType::kInt64) + constant(int64_t{1});
  RETURN_IF_ERROR(length.status());
  return Shapes{{length.ptr()}};
}

std::vector<Var> CompressIndptr::LOp(const Apply& node, const std::vector<Var>&) const {
  return AllDisconnected(node);
}

absl::StatusOr<ApplyPtr> SparseUnion::MakeNode(std::vector<VariablePtr> in) const {
  RETURN_IF_ERROR(ExpectTwoStructures(*this, in, 4, "indices_a, indptr_a, indices_b, indptr_b"));
  const TypePtr index = Vector(DType::kInt64);
  // The output types read `in` before it is moved (the order of a call's arguments is unspecified).
  std::vector<TypePtr> types = {index, Vector(DType::kInt64, Length(in[1])),
                                Vector(DType::kInt64, Length(in[0])),
                                Vector(DType::kInt64, Length(in[2]))};
  return Apply::Make(self(), std::move(in), std::move(types));
}

absl::StatusOr<Shapes> SparseUnion::InferShape(const Apply& node, const Shapes& in) const {
  Shapes out = OwnLengths(node);
  out[1] = in[1];
  out[2] = in[0];
  out[3] = in[2];
  return out;
}

std::vector<Var> SparseUnion::LOp(const Apply& node, const std::vector<Var>&) const {
  return AllDisconnected(node);
}

absl::StatusOr<ApplyPtr> SparseIntersection::MakeNode(std::vector<VariablePtr> in) const {
  RETURN_IF_ERROR(ExpectTwoStructures(*this, in, 4, "indices_a, indptr_a, indices_b, indptr_b"));
  const TypePtr index = Vector(DType::kInt64);
  std::vector<TypePtr> types = {index, Vector(DType::kInt64, Length(in[1])), index, index};
  return Apply::Make(self(), std::move(in), std::move(types));
}

absl::StatusOr<Shapes> SparseIntersection::InferShape(const Apply& node, const Shapes& in) const {
  Shapes out = OwnLengths(node);
  out[1] = in[1];
  return out;
}

std::vector<Var> SparseIntersection::LOp(const Apply& node, const std::vector<Var>&) const {
  return AllDisconnected(node);
}

absl::StatusOr<ApplyPtr> SparseProductPairs::MakeNode(std::vector<VariablePtr> in) const {
  RETURN_IF_ERROR(
      ExpectTwoStructures(*this, in, 5, "indices_a, indptr_a, indices_b, indptr_b, n_cols"));
  RETURN_IF_ERROR(ExpectTensor(*this, in, 4, 0, true, "an integer scalar (n_cols)").status());
  const TypePtr index = Vector(DType::kInt64);
  std::vector<TypePtr> types = {index, Vector(DType::kInt64, Length(in[1])), index, index, index};
  return Apply::Make(self(), std::move(in), std::move(types));
}

absl::StatusOr<Shapes> SparseProductPairs::InferShape(const Apply& node, const Shapes& in) const {
  Shapes out = OwnLengths(node);
  out[1] = in[1];
  return out;
}

std::vector<Var> SparseProductPairs::LOp(const Apply& node, const std::vector<Var>&) const {
  return AllDisconnected(node);
}

// --- Builders ----------------------------------------------------------------------------------

Var sparse_dot(const Var& data, const Var& rows, const Var& cols, const Var& n_rows, const Var& b,
               bool compressed) {
  return ApplyOp(OpPtr(std::make_shared<SparseDot>(SparseDotAttrs{compressed})),
                 {data, rows, cols, n_rows, b});
}

Var sampled_dot(const Var& rows, const Var& cols, const Var& x, const Var& y) {
  return ApplyOp(OpPtr(std::make_shared<SampledDot>()), {rows, cols, x, y});
}

Var sparse_to_dense(const Var& data, const Var& rows, const Var& cols, const Var& shape) {
  return ApplyOp(OpPtr(std::make_shared<SparseToDense>()), {data, rows, cols, shape});
}

Var sparse_gather(const Var& x, const Var& rows, const Var& cols) {
  return ApplyOp(OpPtr(std::make_shared<SparseGather>()), {x, rows, cols});
}

Var expand_indptr(const Var& indptr) {
  return ApplyOp(OpPtr(std::make_shared<ExpandIndptr>()), {indptr});
}

Var compress_indptr(const Var& rows, const Var& n) {
  return ApplyOp(OpPtr(std::make_shared<CompressIndptr>()), {rows, n});
}

std::vector<Var> sparse_union(const Var& indices_a, const Var& indptr_a, const Var& indices_b,
                              const Var& indptr_b) {
  return ApplyAll(std::make_shared<SparseUnion>(), {indices_a, indptr_a, indices_b, indptr_b}, 4);
}

std::vector<Var> sparse_intersection(const Var& indices_a, const Var& indptr_a,
                                     const Var& indices_b, const Var& indptr_b) {
  return ApplyAll(std::make_shared<SparseIntersection>(),
                  {indices_a, indptr_a, indices_b, indptr_b}, 4);
}

std::vector<Var> sparse_product_pairs(const Var& indices_a, const Var& indptr_a,
                                      const Var& indices_b, const Var& indptr_b,
                                      const Var& n_cols) {
  return ApplyAll(std::make_shared<SparseProductPairs>(),
                  {indices_a, indptr_a, indices_b, indptr_b, n_cols}, 5);
}

}  // namespace kiln
