#include "core/ops/slinalg_matfun.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/ops/slinalg.h"
#include "core/ops/slinalg_kernels.h"
#include "core/ops/slinalg_util.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(Eigvalsh);
KILN_REGISTER_OP(EigvalshGrad);
KILN_REGISTER_OP(Expm);
KILN_REGISTER_OP(ExpmGrad);
KILN_REGISTER_OP(SolveContinuousLyapunov);
KILN_REGISTER_OP(BilinearSolveDiscreteLyapunov);

using slinalg::ConstRef;
using slinalg::Converted;
using slinalg::MutRef;

namespace {

// OK when `t` (input i) is a square matrix of `n` rows (the first square input's size when n
// is -1), finite when asked.
absl::Status CheckSquareOf(const Op& op, const Tensor& t, int i, const char* name,
                           const Tensor* like, const char* like_name, bool finite) {
  RETURN_IF_ERROR(slinalg::CheckSquare(op, t, i, name));
  if (like != nullptr && t.shape() != like->shape()) {
    return Invalid(
        op, absl::StrCat("input ", i, " (", name, ") has shape ", ShapeToString(t.shape()),
                         " but input 0 (", like_name, ") has shape ", ShapeToString(like->shape()),
                         ": the shapes must be equal"));
  }
  if (finite) RETURN_IF_ERROR(slinalg::CheckFinite(op, t, i, name));
  return absl::OkStatus();
}

// A matrix node of `dtype` over the (a, q) of a Lyapunov op (each a matrix).
absl::StatusOr<ApplyPtr> MakeLyapunovNode(const Op& op, OpPtr self,
                                          std::vector<VariablePtr> inputs) {
  if (inputs.size() != 2) return Invalid(op, "expects 2 inputs (A, B)");
  ASSIGN_OR_RETURN(const TensorType* a, slinalg::MatrixInput(op, inputs, 0, "A", 2));
  ASSIGN_OR_RETURN(const TensorType* b, slinalg::MatrixInput(op, inputs, 1, "B", 2));
  RETURN_IF_ERROR(slinalg::CheckStaticSquare(op, *a, 0, "A"));
  RETURN_IF_ERROR(slinalg::CheckStaticSquare(op, *b, 1, "B"));
  TypePtr out = TensorType::Make(PromoteTypes(a->dtype(), b->dtype()), StaticShape(2));
  return Apply::Make(std::move(self), std::move(inputs), {std::move(out)});
}

// Runs kernel(a, q, x) in scipy's dtype for (a, q), x converted to the node's dtype; the
// kernel's info.
template <typename Kernel>
int RunPair(const Apply& node, const Tensor& a_in, const Tensor& q_in, Tensor& out, Kernel kernel) {
  const DType dtype = slinalg::LapackDType(a_in.dtype(), q_in.dtype());
  const Tensor a = Converted(a_in, dtype);
  const Tensor q = Converted(q_in, dtype);
  Tensor x = Tensor::Empty(dtype, a_in.shape());
  const int info = slinalg::DispatchLapack(dtype, [&](auto zero) {
    using T = decltype(zero);
    return kernel(ConstRef<T>(a), ConstRef<T>(q), MutRef<T>(x));
  });
  out = Converted(x, node.outputs()[0]->tensor_type()->dtype());
  return info;
}

// The eigenvalue failure of (a, b) in scipy's words.
absl::Status EighFailure(const Op& op, int info, int64_t n) {
  if (info > n) {
    return Invalid(op, absl::StrCat("input 1 (b) is not positive definite: the leading minor of "
                                    "order ",
                                    info - n,
                                    " of 'b' is not positive definite. The factorization of "
                                    "'b' could not be completed and no eigenvalues or "
                                    "eigenvectors were computed."));
  }
  return Invalid(op, absl::StrCat("input 0 (a): the algorithm failed to converge; ", info,
                                  " off-diagonal elements of an intermediate tridiagonal form "
                                  "did not converge to zero."));
}

}  // namespace

absl::StatusOr<ApplyPtr> Eigvalsh::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1 && inputs.size() != 2) return Invalid(*this, "expects inputs (a[, b])");
  ASSIGN_OR_RETURN(const TensorType* a, slinalg::MatrixInput(*this, inputs, 0, "a", 2));
  RETURN_IF_ERROR(slinalg::CheckStaticSquare(*this, *a, 0, "a"));
  DType dtype = a->dtype();
  if (inputs.size() == 2) {
    ASSIGN_OR_RETURN(const TensorType* b, slinalg::MatrixInput(*this, inputs, 1, "b", 2));
    dtype = PromoteTypes(dtype, b->dtype());
  }
  TypePtr out = TensorType::Make(dtype, StaticShape(1));
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Eigvalsh::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{{in[0][0]}};
}

absl::Status Eigvalsh::Perform(const Apply& node, std::span<const Tensor> inputs,
                               std::vector<Tensor>& outputs) const {
  const bool general = inputs.size() == 2;
  RETURN_IF_ERROR(CheckSquareOf(*this, inputs[0], 0, "a", nullptr, "", true));
  if (general) RETURN_IF_ERROR(CheckSquareOf(*this, inputs[1], 1, "b", &inputs[0], "a", true));
  const DType dtype =
      slinalg::LapackDType(inputs[0].dtype(), general ? inputs[1].dtype() : inputs[0].dtype());
  const int64_t n = inputs[0].shape()[0];
  const Tensor a = Converted(inputs[0], dtype);
  const Tensor b = general ? Converted(inputs[1], dtype) : Tensor();
  const DType real =
      IsComplex(dtype) ? (dtype == DType::kComplex64 ? DType::kFloat32 : DType::kFloat64) : dtype;
  Tensor w = Tensor::Empty(real, {n});
  const int info = slinalg::DispatchLapack(dtype, [&](auto zero) {
    using T = decltype(zero);
    const slinalg::MatrixRef<const T> none{nullptr, 0, 0, 0, 0};
    return slinalg::Eigh<T>(ConstRef<T>(a), general ? ConstRef<T>(b) : none, attrs().lower,
                            w.data<slinalg::Real<T>>(), 1, {nullptr, 0, 0, 0, 0});
  });
  if (info != 0) return EighFailure(*this, info, n);
  outputs[0] = Converted(w, node.outputs()[0]->tensor_type()->dtype());
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> EigvalshGrad::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 2 && inputs.size() != 3) {
    return Invalid(*this, "expects inputs (a, b, gw) or (a, gw)");
  }
  const size_t g = inputs.size() - 1;
  ASSIGN_OR_RETURN(const TensorType* a, slinalg::MatrixInput(*this, inputs, 0, "a", 2));
  ASSIGN_OR_RETURN(const TensorType* gw, slinalg::MatrixInput(*this, inputs, g, "gw", 1));
  if (gw->ndim() != 1) {
    return Invalid(*this, absl::StrCat("input ", g, " (gw) has type ", gw->ToString(),
                                       ": `gw` must be a vector"));
  }
  DType dtype = PromoteTypes(a->dtype(), gw->dtype());
  if (g == 2) {
    ASSIGN_OR_RETURN(const TensorType* b, slinalg::MatrixInput(*this, inputs, 1, "b", 2));
    dtype = PromoteTypes(dtype, b->dtype());
  }
  std::vector<TypePtr> outs(g, TensorType::Make(dtype, StaticShape(2)));
  return Apply::Make(self(), std::move(inputs), std::move(outs));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> EigvalshGrad::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  if (node.inputs().size() == 3) return std::vector<ShapeVars>{in[0], in[1]};
  return std::vector<ShapeVars>{in[0]};
}

absl::Status EigvalshGrad::Perform(const Apply& node, std::span<const Tensor> inputs,
                                   std::vector<Tensor>& outputs) const {
  const bool general = inputs.size() == 3;
  const Tensor& gw_in = inputs.back();
  RETURN_IF_ERROR(CheckSquareOf(*this, inputs[0], 0, "a", nullptr, "", true));
  if (general) RETURN_IF_ERROR(CheckSquareOf(*this, inputs[1], 1, "b", &inputs[0], "a", true));
  const int64_t n = inputs[0].shape()[0];
  if (gw_in.ndim() != 1 || gw_in.shape()[0] != n) {
    return Invalid(*this, absl::StrCat("input ", inputs.size() - 1, " (gw) has shape ",
                                       ShapeToString(gw_in.shape()), " but a has shape ",
                                       ShapeToString(inputs[0].shape())));
  }
  DType dtype = slinalg::LapackDType(inputs[0].dtype(), gw_in.dtype());
  if (general) dtype = slinalg::LapackDType(dtype, inputs[1].dtype());
  const Tensor a = Converted(inputs[0], dtype);
  const Tensor b = general ? Converted(inputs[1], dtype) : Tensor();
  const Tensor gw = Converted(gw_in, dtype);
  Tensor ga = Tensor::Empty(dtype, {n, n});
  Tensor gb = general ? Tensor::Empty(dtype, {n, n}) : Tensor();
  const int info = slinalg::DispatchLapack(dtype, [&](auto zero) {
    using T = decltype(zero);
    const slinalg::MatrixRef<const T> none{nullptr, 0, 0, 0, 0};
    const slinalg::MatrixRef<T> no_out{nullptr, 0, 0, 0, 0};
    return slinalg::EighGrad<T>(ConstRef<T>(a), general ? ConstRef<T>(b) : none, ConstRef<T>(gw),
                                attrs().lower, MutRef<T>(ga), general ? MutRef<T>(gb) : no_out);
  });
  if (info != 0) return EighFailure(*this, info, n);
  outputs[0] = Converted(ga, node.outputs()[0]->tensor_type()->dtype());
  if (general) outputs[1] = Converted(gb, node.outputs()[1]->tensor_type()->dtype());
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> Expm::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input (A)");
  ASSIGN_OR_RETURN(const TensorType* a, slinalg::MatrixInput(*this, inputs, 0, "A", 2));
  RETURN_IF_ERROR(slinalg::CheckStaticSquare(*this, *a, 0, "A"));
  TypePtr out = TensorType::Make(a->dtype(), StaticShape(2));
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Expm::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status Expm::Perform(const Apply& node, std::span<const Tensor> inputs,
                           std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(CheckSquareOf(*this, inputs[0], 0, "A", nullptr, "", false));
  RETURN_IF_ERROR(CheckOutputShape(*this, inputs[0].shape(), DType::kComplex128));
  RunPair(node, inputs[0], inputs[0], outputs[0],
          [](auto a, auto, auto x) { return slinalg::Expm(a, x); });
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> ExpmGrad::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 2) return Invalid(*this, "expects 2 inputs (A, gw)");
  ASSIGN_OR_RETURN(const TensorType* a, slinalg::MatrixInput(*this, inputs, 0, "A", 2));
  ASSIGN_OR_RETURN(const TensorType* g, slinalg::MatrixInput(*this, inputs, 1, "gw", 2));
  (void)g;
  TypePtr out = TensorType::Make(a->dtype(), StaticShape(2));
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> ExpmGrad::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status ExpmGrad::Perform(const Apply& node, std::span<const Tensor> inputs,
                               std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(CheckSquareOf(*this, inputs[0], 0, "A", nullptr, "", false));
  RETURN_IF_ERROR(CheckSquareOf(*this, inputs[1], 1, "gw", &inputs[0], "A", false));
  // The kernel exponentiates a matrix of twice a's size.
  const int64_t n2 = 2 * inputs[0].shape()[0];
  RETURN_IF_ERROR(CheckOutputShape(*this, {n2, n2}, DType::kComplex128));
  RunPair(node, inputs[0], inputs[1], outputs[0],
          [](auto a, auto g, auto x) { return slinalg::ExpmGrad(a, g, x); });
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> SolveContinuousLyapunov::MakeNode(std::vector<VariablePtr> inputs) const {
  return MakeLyapunovNode(*this, self(), std::move(inputs));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> SolveContinuousLyapunov::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status SolveContinuousLyapunov::Perform(const Apply& node, std::span<const Tensor> inputs,
                                              std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(CheckSquareOf(*this, inputs[0], 0, "A", nullptr, "", true));
  RETURN_IF_ERROR(CheckSquareOf(*this, inputs[1], 1, "B", &inputs[0], "A", true));
  RETURN_IF_ERROR(CheckOutputShape(*this, inputs[0].shape(), DType::kComplex128));
  const int info = RunPair(node, inputs[0], inputs[1], outputs[0], [](auto a, auto q, auto x) {
    return slinalg::SolveContinuousLyapunov(a, q, x);
  });
  if (info != 0) {
    outputs[0] = Tensor();
    return Invalid(*this, "input 0 (A): the Schur decomposition failed to converge");
  }
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> BilinearSolveDiscreteLyapunov::MakeNode(
    std::vector<VariablePtr> inputs) const {
  return MakeLyapunovNode(*this, self(), std::move(inputs));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> BilinearSolveDiscreteLyapunov::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status BilinearSolveDiscreteLyapunov::Perform(const Apply& node,
                                                    std::span<const Tensor> inputs,
                                                    std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(CheckSquareOf(*this, inputs[0], 0, "A", nullptr, "", true));
  RETURN_IF_ERROR(CheckSquareOf(*this, inputs[1], 1, "B", &inputs[0], "A", true));
  RETURN_IF_ERROR(CheckOutputShape(*this, inputs[0].shape(), DType::kComplex128));
  const int info = RunPair(node, inputs[0], inputs[1], outputs[0], [](auto a, auto q, auto x) {
    return slinalg::SolveDiscreteLyapunovBilinear(a, q, x);
  });
  if (info > 0) {
    outputs[0] = Tensor();
    return Invalid(*this, "input 0 (A): A + I is singular: Matrix is singular.");
  }
  if (info < 0) {
    outputs[0] = Tensor();
    return Invalid(*this, "input 0 (A): the Schur decomposition failed to converge");
  }
  return absl::OkStatus();
}

Var eigvalsh(const Var& a, const Var& b, bool lower) {
  const OpPtr op = std::make_shared<Eigvalsh>(EigvalshAttrs{.lower = lower});
  if (!b.ok()) return ApplyOp(op, {a});
  return ApplyOp(op, {a, b});
}

Var expm(const Var& a) { return ApplyOp(OpPtr(std::make_shared<Expm>()), {a}); }

Var solve_continuous_lyapunov(const Var& a, const Var& q) {
  return ApplyOp(OpPtr(std::make_shared<SolveContinuousLyapunov>()), {a, q});
}

Var solve_discrete_lyapunov(const Var& a, const Var& q, const std::string& method) {
  if (method == "bilinear") {
    return ApplyOp(OpPtr(std::make_shared<BilinearSolveDiscreteLyapunov>()), {a, q});
  }
  if (method != "direct") {
    return Var(absl::InvalidArgumentError(
        absl::StrCat("solve_discrete_lyapunov: Parameter \"method\" must be one of \"direct\" or "
                     "\"bilinear\", found ",
                     method)));
  }
  if (!a.ok()) return a;
  if (!q.ok()) return q;
  if (a->tensor_type() == nullptr || a.ndim() != 2) {
    return Var(absl::InvalidArgumentError(absl::StrCat(
        "solve_discrete_lyapunov: A has type ", a->type()->ToString(), " but must be a matrix")));
  }
  // kron(a, conj(a)) (kron(a, a) for real a), then solve(I - aa, q.ravel()) reshaped to q's shape.
  const Var other = IsComplex(a.dtype()) ? conj(a) : a;
  const Var outer = dimshuffle(a, {0, kX, 1, kX}) * dimshuffle(other, {kX, 0, kX, 1});
  const Var n = shape_i(a, 0), n2 = n * n;
  const Var aa = reshape(outer, make_vector({n2, n2}));
  const Var x = solve(eye(n2, n2, constant(int64_t{0})) - aa, flatten(q));
  return reshape(x, shape(q));
}

}  // namespace kiln
