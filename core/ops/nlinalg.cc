#include "core/ops/nlinalg.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/diagonal.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/nlinalg_util.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(MatrixInverse);
KILN_REGISTER_OP(MatrixPinv);
KILN_REGISTER_OP(Det);
KILN_REGISTER_OP(SLogDet);
KILN_REGISTER_OP(Lstsq);
KILN_REGISTER_OP(TensorInv);
KILN_REGISTER_OP(TensorSolve);

using nlinalg::CheckSquare;
using nlinalg::CheckStaticSquare;
using nlinalg::ComputeDType;
using nlinalg::ConstMatrix;
using nlinalg::DispatchCompute;
using nlinalg::ExpectRank;
using nlinalg::InDType;
using nlinalg::MutableMatrix;
using nlinalg::OpError;

namespace {

absl::Status ExpectInputs(const Op& op, const std::vector<VariablePtr>& in, size_t n,
                          const char* names) {
  if (in.size() == n) return absl::OkStatus();
  return Invalid(op, absl::StrCat("expects ", n, " input", n == 1 ? "" : "s", " ", names));
}

// A square matrix input, typed as Aesara's make_node asserts.
absl::StatusOr<const TensorType*> SquareInput(const Op& op, const std::vector<VariablePtr>& in) {
  RETURN_IF_ERROR(ExpectInputs(op, in, 1, "(x)"));
  ASSIGN_OR_RETURN(const TensorType* x, ExpectRank(op, in, 0, 2));
  RETURN_IF_ERROR(CheckStaticSquare(op, *x));
  return x;
}

DType OutDType(const Apply& node, int i) { return node.outputs()[i]->tensor_type()->dtype(); }

// The product of dims, or INVALID_ARGUMENT naming the op when it overflows.
absl::StatusOr<int64_t> Product(const Op& op, std::span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    std::optional<int64_t> next = CheckedMul(p, d);
    if (!next) return Invalid(op, "the product of the dims overflows");
    p = *next;
  }
  return p;
}

}  // namespace

absl::Status TensorInvAttrs::Check() const {
  if (ind < 1 || ind > 64) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid ind argument: ", ind));
  }
  return absl::OkStatus();
}

absl::Status TensorSolveAttrs::Check() const {
  if (!axes) return absl::OkStatus();
  for (int a : *axes) {
    if (a < -64 || a >= 64) {
      return absl::InvalidArgumentError(absl::StrCat("axis ", a, " is out of range"));
    }
  }
  return absl::OkStatus();
}

// ---- MatrixInverse, MatrixPinv, Det, SLogDet --------------------------------------------------

absl::StatusOr<ApplyPtr> MatrixInverse::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(SquareInput(*this, inputs).status());
  TypePtr out = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> MatrixInverse::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<std::vector<VariablePtr>>{in[0]};
}

absl::Status MatrixInverse::Perform(const Apply& node, std::span<const Tensor> inputs,
                                    std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(CheckSquare(*this, inputs[0]));
  const DType compute = ComputeDType(inputs[0].dtype());
  const Tensor x = InDType(inputs[0], compute);
  Tensor out = Tensor::Empty(compute, x.shape());
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) {
    using T = decltype(tag);
    return OpError(*this, nlinalg::Inverse<T>(ConstMatrix<T>(x), MutableMatrix<T>(out)));
  }));
  outputs[0] = InDType(out, OutDType(node, 0));
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> MatrixPinv::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectInputs(*this, inputs, 1, "(x)"));
  ASSIGN_OR_RETURN(const TensorType* x, ExpectRank(*this, inputs, 0, 2));
  if (attrs().hermitian) RETURN_IF_ERROR(CheckStaticSquare(*this, *x));
  TypePtr out = TensorType::Make(x->dtype(), {x->shape()[1], x->shape()[0]});
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> MatrixPinv::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<std::vector<VariablePtr>>{{in[0][1], in[0][0]}};
}

absl::Status MatrixPinv::Perform(const Apply& node, std::span<const Tensor> inputs,
                                 std::vector<Tensor>& outputs) const {
  if (attrs().hermitian) RETURN_IF_ERROR(CheckSquare(*this, inputs[0]));
  RETURN_IF_ERROR(nlinalg::CheckFits(*this, inputs[0]));
  const DType compute = ComputeDType(inputs[0].dtype());
  const Tensor x = InDType(inputs[0], compute);
  Tensor out = Tensor::Empty(compute, {x.shape()[1], x.shape()[0]});
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) {
    using T = decltype(tag);
    return OpError(*this, nlinalg::PseudoInverse<T>(ConstMatrix<T>(x), attrs().hermitian,
                                                    MutableMatrix<T>(out)));
  }));
  outputs[0] = InDType(out, OutDType(node, 0));
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> Det::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(const TensorType* x, SquareInput(*this, inputs));
  TypePtr out = TensorType::Make(x->dtype(), {});
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Det::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>&) const {
  return std::vector<std::vector<VariablePtr>>{{}};
}

absl::Status Det::Perform(const Apply& node, std::span<const Tensor> inputs,
                          std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(CheckSquare(*this, inputs[0]));
  const DType compute = ComputeDType(inputs[0].dtype());
  const Tensor x = InDType(inputs[0], compute);
  Tensor out = Tensor::Empty(compute, {});
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    absl::StatusOr<T> d = nlinalg::Determinant<T>(ConstMatrix<T>(x));
    if (!d.ok()) return OpError(*this, d.status());
    out.data<T>()[0] = *d;
    return absl::OkStatus();
  }));
  outputs[0] = InDType(out, OutDType(node, 0));
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> SLogDet::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(const TensorType* x, SquareInput(*this, inputs));
  TypePtr out = TensorType::Make(x->dtype(), {});
  return Apply::Make(self(), std::move(inputs), {out, out});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> SLogDet::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>&) const {
  return std::vector<std::vector<VariablePtr>>{{}, {}};
}

absl::Status SLogDet::Perform(const Apply& node, std::span<const Tensor> inputs,
                              std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(CheckSquare(*this, inputs[0]));
  const DType compute = ComputeDType(inputs[0].dtype());
  const Tensor x = InDType(inputs[0], compute);
  Tensor sign = Tensor::Empty(compute, {}), logdet = Tensor::Empty(compute, {});
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    auto d = nlinalg::LogDeterminant<T>(ConstMatrix<T>(x));
    if (!d.ok()) return OpError(*this, d.status());
    sign.data<T>()[0] = d->first;
    logdet.data<T>()[0] = T(d->second);
    return absl::OkStatus();
  }));
  outputs[0] = InDType(sign, OutDType(node, 0));
  outputs[1] = InDType(logdet, OutDType(node, 1));
  return absl::OkStatus();
}

// ---- Lstsq ------------------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> Lstsq::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectInputs(*this, inputs, 3, "(a, b, rcond)"));
  RETURN_IF_ERROR(ExpectRank(*this, inputs, 0, 2).status());
  const TensorType* b = inputs[1]->tensor_type();
  if (b == nullptr || (b->ndim() != 1 && b->ndim() != 2)) {
    return Invalid(*this, absl::StrCat("input 1 has type ", inputs[1]->type()->ToString(),
                                       " but a vector or a matrix is needed"));
  }
  RETURN_IF_ERROR(ExpectRank(*this, inputs, 2, 0).status());
  for (size_t i = 0; i < 3; ++i) {
    if (IsComplex(inputs[i]->tensor_type()->dtype())) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", inputs[i]->type()->ToString(),
                                         ", which is complex: Lstsq's outputs are float64"));
    }
  }
  std::vector<TypePtr> out = {TensorType::Make(DType::kFloat64, StaticShape(b->ndim())),
                              TensorType::Make(DType::kFloat64, StaticShape(1)),
                              TensorType::Make(DType::kInt64, {}),
                              TensorType::Make(DType::kFloat64, StaticShape(1))};
  return Apply::Make(self(), std::move(inputs), std::move(out));
}

// x is (n,) or (n, k), s (min(m, n),); the residuals' length depends on the rank of a, so it is
// the output's own (known when it runs), as Aesara does for an op without infer_shape.
absl::StatusOr<std::vector<std::vector<VariablePtr>>> Lstsq::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  std::vector<VariablePtr> x = {in[0][1]};
  if (node.inputs()[1]->tensor_type()->ndim() == 2) x.push_back(in[1][1]);
  const Var k = minimum(Var(in[0][0]), Var(in[0][1]));
  RETURN_IF_ERROR(k.status());
  return std::vector<std::vector<VariablePtr>>{x, {DimOf(node.output(1), 0)}, {}, {k.ptr()}};
}

absl::Status Lstsq::Perform(const Apply&, std::span<const Tensor> inputs,
                            std::vector<Tensor>& outputs) const {
  const Tensor& a_in = inputs[0];
  const Tensor& b_in = inputs[1];
  if (a_in.shape()[0] != b_in.shape()[0]) {
    return Invalid(*this,
                   absl::StrCat("input 0 has shape ", ShapeToString(a_in.shape()), " and input 1 ",
                                ShapeToString(b_in.shape()), ": Incompatible dimensions"));
  }
  const int64_t m = a_in.shape()[0], n = a_in.shape()[1], k = std::min(m, n);
  const int64_t nrhs = b_in.ndim() == 2 ? b_in.shape()[1] : 1;
  const DType compute = ComputeDType(PromoteTypes(a_in.dtype(), b_in.dtype()));
  Shape x_shape = {n};
  if (b_in.ndim() == 2) x_shape.push_back(nrhs);
  RETURN_IF_ERROR(CheckOutputShape(*this, x_shape, compute));
  const Tensor a = InDType(a_in, compute), b = InDType(b_in, compute);
  const double rcond = inputs[2].ElementAsDouble(0);
  Tensor x = Tensor::Empty(compute, x_shape);
  Tensor s = Tensor::Zeros(nlinalg::RealDType(compute), {k});
  Tensor residuals = Tensor::Zeros(nlinalg::RealDType(compute), {nrhs});
  int64_t rank = 0;
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    using R = nlinalg::Real<T>;
    auto r = nlinalg::LeastSquares<T>(ConstMatrix<T>(a), ConstMatrix<T>(b), static_cast<R>(rcond),
                                      MutableMatrix<T>(x), s.data<R>(), residuals.data<R>());
    if (!r.ok()) return OpError(*this, r.status());
    rank = *r;
    return absl::OkStatus();
  }));
  outputs[0] = InDType(x, DType::kFloat64);
  outputs[1] = rank == n && m > n ? InDType(residuals, DType::kFloat64)
                                  : Tensor::Zeros(DType::kFloat64, {0});
  outputs[2] = *Tensor::Of<int64_t>(DType::kInt64, {}, {rank});
  outputs[3] = InDType(s, DType::kFloat64);
  return absl::OkStatus();
}

// ---- TensorInv, TensorSolve -------------------------------------------------------------------

absl::StatusOr<ApplyPtr> TensorInv::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectInputs(*this, inputs, 1, "(a)"));
  if (absl::Status s = attrs().Check(); !s.ok()) return Invalid(*this, std::string(s.message()));
  const TensorType* a = inputs[0]->tensor_type();
  if (a == nullptr || a->ndim() < 1) {
    return Invalid(*this, absl::StrCat("input 0 has type ", inputs[0]->type()->ToString(),
                                       " but a tensor of rank >= 1 is needed"));
  }
  const StaticShape& s = a->shape();
  const size_t ind = std::min<size_t>(attrs().ind, s.size());
  StaticShape out(s.begin() + ind, s.end());
  out.insert(out.end(), s.begin(), s.begin() + ind);
  TypePtr type = TensorType::Make(a->dtype(), std::move(out));
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> TensorInv::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  const auto& s = in[0];
  const size_t ind = std::min<size_t>(attrs().ind, s.size());
  std::vector<VariablePtr> out(s.begin() + ind, s.end());
  out.insert(out.end(), s.begin(), s.begin() + ind);
  return std::vector<std::vector<VariablePtr>>{out};
}

absl::Status TensorInv::Perform(const Apply& node, std::span<const Tensor> inputs,
                                std::vector<Tensor>& outputs) const {
  const Shape& shape = inputs[0].shape();
  const size_t ind = std::min<size_t>(attrs().ind, shape.size());
  ASSIGN_OR_RETURN(int64_t rows, Product(*this, std::span(shape).subspan(ind)));
  ASSIGN_OR_RETURN(int64_t cols, Product(*this, std::span(shape).first(ind)));
  if (rows != cols) {
    return Invalid(
        *this, absl::StrCat("input 0 has shape ", ShapeToString(shape), ", read as a (", rows, ", ",
                            cols, ") matrix: Last 2 dimensions of the array must be square"));
  }
  const DType compute = ComputeDType(inputs[0].dtype());
  const Tensor a = InDType(inputs[0], compute).Contiguous();
  Shape out_shape(shape.begin() + ind, shape.end());
  out_shape.insert(out_shape.end(), shape.begin(), shape.begin() + ind);
  Tensor out = Tensor::Empty(compute, out_shape);
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) {
    using T = decltype(tag);
    return OpError(*this, nlinalg::Inverse<T>(nlinalg::RowMajor<const T>(a.data<T>(), rows, rows),
                                              nlinalg::RowMajor<T>(out.data<T>(), rows, rows)));
  }));
  outputs[0] = InDType(out, OutDType(node, 0));
  return absl::OkStatus();
}

namespace {

// numpy.linalg.tensorsolve's order of a's axes: those in `axes` moved to the end, in order.
absl::StatusOr<std::vector<int>> SolveOrder(const Op& op, int ndim,
                                            const std::optional<std::vector<int>>& axes) {
  std::vector<int> order(ndim);
  std::iota(order.begin(), order.end(), 0);
  if (!axes) return order;
  for (int k : *axes) {
    const int axis = k < 0 ? k + ndim : k;
    auto at = std::find(order.begin(), order.end(), axis);
    if (axis < 0 || axis >= ndim || at == order.end()) {
      return Invalid(op, absl::StrCat("axis ", k,
                                      " is out of range or repeated for a tensor of "
                                      "rank ",
                                      ndim));
    }
    order.erase(at);
    order.push_back(axis);
  }
  return order;
}

// How many trailing dims of the reordered a the solution has (numpy's a.shape[-(an - bn):]).
int SolutionRank(int an, int bn) { return an - bn == 0 ? an : an - bn; }

}  // namespace

absl::StatusOr<ApplyPtr> TensorSolve::MakeNode(std::vector<VariablePtr> inputs) const {
  RETURN_IF_ERROR(ExpectInputs(*this, inputs, 2, "(a, b)"));
  if (absl::Status s = attrs().Check(); !s.ok()) return Invalid(*this, std::string(s.message()));
  const TensorType* a = inputs[0]->tensor_type();
  const TensorType* b = inputs[1]->tensor_type();
  if (a == nullptr || b == nullptr || a->ndim() < b->ndim()) {
    return Invalid(*this,
                   absl::StrCat("input 0 has type ", inputs[0]->type()->ToString(), " and input 1 ",
                                inputs[1]->type()->ToString(), ": a needs at least b's rank"));
  }
  ASSIGN_OR_RETURN(std::vector<int> order, SolveOrder(*this, a->ndim(), attrs().axes));
  DType dtype = PromoteTypes(a->dtype(), b->dtype());
  if (!IsFloat(dtype) && !IsComplex(dtype)) dtype = DType::kFloat64;
  StaticShape out;
  for (size_t d = a->ndim() - SolutionRank(a->ndim(), b->ndim()); d < order.size(); ++d) {
    out.push_back(a->shape()[order[d]]);
  }
  TypePtr type = TensorType::Make(dtype, std::move(out));
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> TensorSolve::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const int an = node.inputs()[0]->tensor_type()->ndim();
  const int bn = node.inputs()[1]->tensor_type()->ndim();
  ASSIGN_OR_RETURN(std::vector<int> order, SolveOrder(*this, an, attrs().axes));
  std::vector<VariablePtr> out;
  for (size_t d = an - SolutionRank(an, bn); d < order.size(); ++d) out.push_back(in[0][order[d]]);
  return std::vector<std::vector<VariablePtr>>{out};
}

absl::Status TensorSolve::Perform(const Apply& node, std::span<const Tensor> inputs,
                                  std::vector<Tensor>& outputs) const {
  const Tensor& a_in = inputs[0];
  const Tensor& b_in = inputs[1];
  ASSIGN_OR_RETURN(std::vector<int> order, SolveOrder(*this, a_in.ndim(), attrs().axes));
  Shape shape, strides;
  for (int d : order) {
    shape.push_back(a_in.shape()[d]);
    strides.push_back(a_in.strides()[d]);
  }
  const Shape solution(shape.end() - SolutionRank(a_in.ndim(), b_in.ndim()), shape.end());
  ASSIGN_OR_RETURN(int64_t n, Product(*this, solution));
  std::optional<int64_t> square = CheckedMul(n, n);
  if (!square || *square != a_in.size() || b_in.size() != n) {
    return Invalid(*this, absl::StrCat("input 0 has shape ", ShapeToString(a_in.shape()),
                                       " and input 1 ", ShapeToString(b_in.shape()),
                                       ": Input arrays must satisfy the requirement "
                                       "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])"));
  }
  const DType compute = ComputeDType(OutDType(node, 0));
  const Tensor a = InDType(a_in.View(shape, strides), compute).Contiguous();
  const Tensor b = InDType(b_in, compute).Contiguous();
  Tensor out = Tensor::Empty(compute, solution);
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) {
    using T = decltype(tag);
    return OpError(*this, nlinalg::Solve<T>(nlinalg::RowMajor<const T>(a.data<T>(), n, n),
                                            nlinalg::RowMajor<const T>(b.data<T>(), n, 1),
                                            nlinalg::RowMajor<T>(out.data<T>(), n, 1)));
  }));
  outputs[0] = InDType(out, OutDType(node, 0));
  return absl::OkStatus();
}

// ---- builders ---------------------------------------------------------------------------------

std::vector<Var> ApplyOpOutputs(const OpPtr& op, const std::vector<Var>& inputs, size_t n_outputs) {
  std::vector<VariablePtr> in;
  for (const Var& v : inputs) {
    if (!v.ok()) return std::vector<Var>(n_outputs, v);
    in.push_back(v.ptr());
  }
  absl::StatusOr<ApplyPtr> node = op->MakeNode(std::move(in));
  if (!node.ok()) return std::vector<Var>(n_outputs, Var(node.status()));
  return nlinalg::OutputsOf(*node);
}

Var matrix_inverse(const Var& x) { return ApplyOp(OpPtr(std::make_shared<MatrixInverse>()), {x}); }

Var pinv(const Var& x, bool hermitian) {
  return ApplyOp(OpPtr(std::make_shared<MatrixPinv>(MatrixPinvAttrs{hermitian})), {x});
}

Var det(const Var& x) { return ApplyOp(OpPtr(std::make_shared<Det>()), {x}); }

std::vector<Var> slogdet(const Var& x) {
  return ApplyOpOutputs(std::make_shared<SLogDet>(), {x}, 2);
}

std::vector<Var> lstsq(const Var& a, const Var& b, const Var& rcond) {
  return ApplyOpOutputs(std::make_shared<Lstsq>(), {a, b, rcond}, 4);
}

Var tensorinv(const Var& a, int ind) {
  return ApplyOp(OpPtr(std::make_shared<TensorInv>(TensorInvAttrs{ind})), {a});
}

Var tensorsolve(const Var& a, const Var& b, std::optional<std::vector<int>> axes) {
  return ApplyOp(OpPtr(std::make_shared<TensorSolve>(TensorSolveAttrs{std::move(axes)})), {a, b});
}

Var matrix_dot(const std::vector<Var>& factors) {
  if (factors.empty()) return Var(absl::InvalidArgumentError("matrix_dot: no matrices"));
  Var out = factors[0];
  for (size_t i = 1; i < factors.size(); ++i) out = dot(out, factors[i]);
  return out;
}

// Aesara's: pinv for a negative power, eye for 0, products for 1 to 3, else by squaring.
Var matrix_power(const Var& m, int64_t n) {
  if (!m.ok()) return m;
  Var base = m;
  if (n < 0) {
    if (n == std::numeric_limits<int64_t>::min()) {
      return Var(absl::InvalidArgumentError(
          absl::StrCat("matrix_power: the power ", n, " has no positive opposite")));
    }
    base = pinv(m);
    n = -n;
  }
  if (n == 0) {
    const Var rows = shape_i(m, m.ndim() - 2);
    return eye(rows, rows, constant(int64_t{0}));
  }
  if (n <= 3) {
    Var out = base;
    for (int64_t i = 1; i < n; ++i) out = dot(out, base);
    return out;
  }
  Var result, z;
  while (n > 0) {
    z = z.ok() ? dot(z, z) : base;
    if (n % 2 == 1) result = result.ok() ? dot(result, z) : z;
    n /= 2;
  }
  return result;
}

Var trace(const Var& x) { return sum(diagonal(x)); }

}  // namespace kiln
