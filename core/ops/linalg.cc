#include "core/ops/linalg.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"

namespace kiln {
namespace {

bool IsBlasDType(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kComplex64 ||
         d == DType::kComplex128;
}

// Static inner dims must agree when both are known.
absl::Status CheckInner(const Op& op, const TensorType& a, const TensorType& b) {
  const StaticDim ka = a.shape().back();
  const StaticDim kb = b.ndim() == 1 ? b.shape()[0] : b.shape()[b.ndim() - 2];
  if (ka && kb && *ka != *kb) {
    return Invalid(op, absl::StrCat("input 1 has type ", b.ToString(), " but input 0 has ",
                                    a.ToString(), ": inner dims ", *ka, " and ", *kb, " differ"));
  }
  return absl::OkStatus();
}

// numpy.matmul's static output shape.
absl::StatusOr<StaticShape> MatMulShape(const Op& op, const TensorType& a, const TensorType& b) {
  StaticShape sa = a.shape(), sb = b.shape();
  if (a.ndim() == 1) sa.insert(sa.begin(), StaticDim(1));
  if (b.ndim() == 1) sb.push_back(StaticDim(1));
  const int nd = static_cast<int>(std::max(sa.size(), sb.size()));
  StaticShape out(nd, StaticDim(1));
  for (int d = 0; d < nd - 2; ++d) {
    const int da = d - (nd - static_cast<int>(sa.size()));
    const int db = d - (nd - static_cast<int>(sb.size()));
    const StaticDim x = da >= 0 ? sa[da] : StaticDim(1), y = db >= 0 ? sb[db] : StaticDim(1);
    if (x && y && *x != *y && *x != 1 && *y != 1) {
      return Invalid(op, absl::StrCat("batch dims of ", a.ToString(), " and ", b.ToString(),
                                      " do not broadcast"));
    }
    out[d] = (x == 1) ? y : (y == 1 ? x : (x ? x : y));
  }
  out[nd - 2] = sa[sa.size() - 2];
  out[nd - 1] = sb.back();
  if (b.ndim() == 1) out.pop_back();
  if (a.ndim() == 1) out.erase(out.end() - (b.ndim() == 1 ? 1 : 2));
  return out;
}

}  // namespace

namespace {

// The inputs as tensor types, or the error naming the first that is not one.
absl::StatusOr<std::vector<const TensorType*>> TensorTypes(const Op& op,
                                                           const std::vector<VariablePtr>& inputs,
                                                           size_t arity) {
  if (inputs.size() != arity) {
    return Invalid(op, absl::StrCat("expects ", arity, " inputs, got ", inputs.size()));
  }
  std::vector<const TensorType*> t;
  for (size_t i = 0; i < inputs.size(); ++i) {
    t.push_back(inputs[i]->tensor_type());
    if (t.back() == nullptr) {
      return Invalid(op, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                      ", which is not a TensorType"));
    }
  }
  return t;
}

absl::Status RankError(const Op& op, size_t i, const TensorType& t, const char* wanted) {
  return Invalid(
      op, absl::StrCat("input ", i, " has type ", t.ToString(), " but ", wanted, " is needed"));
}

// The output type of a product of two tensors whose ranks lie in [min_rank, max_rank].
absl::StatusOr<TypePtr> ProductType(const Op& op, const std::vector<VariablePtr>& inputs,
                                    int min_rank, int max_rank, const char* wanted) {
  ASSIGN_OR_RETURN(std::vector<const TensorType*> t, TensorTypes(op, inputs, 2));
  for (size_t i = 0; i < 2; ++i) {
    if (t[i]->ndim() < min_rank || t[i]->ndim() > max_rank) return RankError(op, i, *t[i], wanted);
  }
  RETURN_IF_ERROR(CheckInner(op, *t[0], *t[1]));
  ASSIGN_OR_RETURN(StaticShape shape, MatMulShape(op, *t[0], *t[1]));
  return TensorType::Make(PromoteTypes(t[0]->dtype(), t[1]->dtype()), std::move(shape));
}

// Gemm's and Gemv's inputs (the accumulator, a scalar, the two factors, a scalar) checked: the
// ranks, one float dtype for all, and the inner dims. The output has the accumulator's type.
absl::Status CheckScaledProduct(const Op& op, const std::vector<VariablePtr>& inputs,
                                int vector_rank) {
  ASSIGN_OR_RETURN(std::vector<const TensorType*> t, TensorTypes(op, inputs, 5));
  const int ranks[5] = {vector_rank, 0, 2, vector_rank, 0};
  const DType dtype = t[0]->dtype();
  for (size_t i = 0; i < 5; ++i) {
    if (t[i]->ndim() != ranks[i]) {
      return RankError(op, i, *t[i],
                       ranks[i] == 0   ? "a scalar"
                       : ranks[i] == 1 ? "a vector"
                                       : "a matrix");
    }
    if (t[i]->dtype() != dtype || !IsBlasDType(dtype)) {
      return Invalid(op, absl::StrCat("input ", i, " has type ", t[i]->ToString(),
                                      " but every input must have input 0's dtype, one of "
                                      "float32, float64, complex64, complex128"));
    }
  }
  return CheckInner(op, *t[2], *t[3]);
}

// Broadcast batch dims, then the rows of a and the columns of b (as numpy.matmul).
std::vector<ShapeVars> ProductShape(const std::vector<ShapeVars>& in) {
  ShapeVars a = in[0], b = in[1];
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), ConstDim(1));
  if (b_vec) b.push_back(ConstDim(1));
  const size_t nd = std::max(a.size(), b.size());
  ShapeVars out;
  for (size_t d = 0; d + 2 < nd; ++d) {
    std::vector<VariablePtr> dims;
    if (d + a.size() >= nd) dims.push_back(a[d + a.size() - nd]);
    if (d + b.size() >= nd) dims.push_back(b[d + b.size() - nd]);
    out.push_back(BroadcastDim(dims));
  }
  if (!a_vec) out.push_back(a[a.size() - 2]);
  if (!b_vec) out.push_back(b.back());
  return {out};
}

std::string InplaceName(absl::string_view type_name, bool inplace) {
  return absl::StrCat(type_name, inplace ? "{inplace}" : "{no_inplace}");
}

}  // namespace

absl::StatusOr<ApplyPtr> Dot::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(TypePtr type, ProductType(*this, inputs, 1, 2, "a vector or a matrix"));
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<ApplyPtr> MatMul::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(TypePtr type, ProductType(*this, inputs, 1, std::numeric_limits<int>::max(),
                                             "at least one dim"));
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<ApplyPtr> Dot22::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(TypePtr type, ProductType(*this, inputs, 2, 2, "a matrix"));
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<ApplyPtr> Gemm::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(CheckScaledProduct(*this, inputs, 2));
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<ApplyPtr> Gemv::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(CheckScaledProduct(*this, inputs, 1));
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<std::vector<ShapeVars>> Dot::InferShape(const Apply&,
                                                       const std::vector<ShapeVars>& in) const {
  return ProductShape(in);
}
absl::StatusOr<std::vector<ShapeVars>> MatMul::InferShape(const Apply&,
                                                          const std::vector<ShapeVars>& in) const {
  return ProductShape(in);
}
absl::StatusOr<std::vector<ShapeVars>> Dot22::InferShape(const Apply&,
                                                         const std::vector<ShapeVars>& in) const {
  return ProductShape(in);
}
// The accumulator's shape.
absl::StatusOr<std::vector<ShapeVars>> Gemm::InferShape(const Apply&,
                                                        const std::vector<ShapeVars>& in) const {
  return std::vector<ShapeVars>{in[0]};
}
absl::StatusOr<std::vector<ShapeVars>> Gemv::InferShape(const Apply&,
                                                        const std::vector<ShapeVars>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

std::string Gemm::Name() const { return InplaceName(kTypeName, attrs().inplace); }
std::string Gemv::Name() const { return InplaceName(kTypeName, attrs().inplace); }

KILN_REGISTER_OP(Dot);
KILN_REGISTER_OP(MatMul);
KILN_REGISTER_OP(Dot22);
KILN_REGISTER_OP(Gemm);
KILN_REGISTER_OP(Gemv);

Var dot(const Var& a, const Var& b) {
  if (!a.ok()) return a;
  if (!b.ok()) return b;
  if (a->tensor_type() && b->tensor_type() && (a.ndim() > 2 || b.ndim() > 2)) {
    return tensordot(a, b, {a.ndim() - 1}, {std::max(0, b.ndim() - 2)});
  }
  return ApplyOp(OpPtr(std::make_shared<Dot>()), {a, b});
}

Var matmul(const Var& a, const Var& b) {
  return ApplyOp(OpPtr(std::make_shared<MatMul>()), {a, b});
}

Var dot22(const Var& x, const Var& y) { return ApplyOp(OpPtr(std::make_shared<Dot22>()), {x, y}); }

Var gemm(const Var& z, const Var& a, const Var& x, const Var& y, const Var& b) {
  return ApplyOp(OpPtr(std::make_shared<Gemm>()), {z, a, x, y, b});
}

Var gemv(const Var& y, const Var& alpha, const Var& A, const Var& x, const Var& beta) {
  return ApplyOp(OpPtr(std::make_shared<Gemv>()), {y, alpha, A, x, beta});
}

Var outer(const Var& x, const Var& y) {
  return dot(dimshuffle(x, {0, kX}), dimshuffle(y, {kX, 0}));
}

Var tensordot(const Var& a, const Var& b, int n) {
  if (!a.ok()) return a;
  if (!b.ok()) return b;
  std::vector<int> a_axes, b_axes;
  for (int i = 0; i < n; ++i) {
    a_axes.push_back(a.ndim() - n + i);
    b_axes.push_back(i);
  }
  return tensordot(a, b, a_axes, b_axes);
}

// Moves the summed axes of a last and of b first, flattens both to matrices, multiplies, and
// reshapes to a's free dims followed by b's.
Var tensordot(const Var& a, const Var& b, const std::vector<int>& a_axes,
              const std::vector<int>& b_axes) {
  if (!a.ok()) return a;
  if (!b.ok()) return b;
  if (a_axes.size() != b_axes.size()) {
    return Var(absl::InvalidArgumentError("tensordot: the axes lists have different lengths"));
  }
  auto normalize = [](std::vector<int> axes, int ndim) -> absl::StatusOr<std::vector<int>> {
    for (int& x : axes) {
      if (x < 0) x += ndim;
      if (x < 0 || x >= ndim) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensordot: axis out of bounds for a tensor of ", ndim, " dims"));
      }
    }
    return axes;
  };
  absl::StatusOr<std::vector<int>> sa = normalize(a_axes, a.ndim());
  if (!sa.ok()) return Var(sa.status());
  absl::StatusOr<std::vector<int>> sb = normalize(b_axes, b.ndim());
  if (!sb.ok()) return Var(sb.status());
  std::vector<int> a_free, b_free;
  for (int d = 0; d < a.ndim(); ++d) {
    if (std::find(sa->begin(), sa->end(), d) == sa->end()) a_free.push_back(d);
  }
  for (int d = 0; d < b.ndim(); ++d) {
    if (std::find(sb->begin(), sb->end(), d) == sb->end()) b_free.push_back(d);
  }
  std::vector<int> a_order = a_free, b_order = *sb;
  a_order.insert(a_order.end(), sa->begin(), sa->end());
  b_order.insert(b_order.end(), b_free.begin(), b_free.end());
  Var at = dimshuffle(a, a_order), bt = dimshuffle(b, b_order);
  // Matrices (prod(a_free), prod(summed)) and (prod(summed), prod(b_free)).
  auto prod_of = [](const Var& x, int begin, int end) {
    const ShapeVars dims = ShapeOf(x.ptr());
    return Var(ProductOf(ShapeVars(dims.begin() + begin, dims.begin() + end)));
  };
  const int na = static_cast<int>(a_free.size()), ns = static_cast<int>(sa->size());
  Var am = reshape(at, make_vector({prod_of(at, 0, na), prod_of(at, na, na + ns)}));
  Var bm = reshape(bt, make_vector({prod_of(bt, 0, ns), prod_of(bt, ns, b.ndim())}));
  std::vector<Var> out_dims;
  for (int d = 0; d < na; ++d) out_dims.push_back(shape_i(at, d));
  for (int d = ns; d < b.ndim(); ++d) out_dims.push_back(shape_i(bt, d));
  Var product = ApplyOp(OpPtr(std::make_shared<Dot>()), {am, bm});
  if (out_dims.empty()) return reshape(product, std::vector<int64_t>{});
  return reshape(product, make_vector(out_dims));
}

}  // namespace kiln
