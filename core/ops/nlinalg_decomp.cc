#include "core/ops/nlinalg_decomp.h"

#include <algorithm>
#include <complex>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/ops/math.h"
#include "core/ops/nlinalg.h"
#include "core/ops/nlinalg_util.h"
#include "core/ops/op_util.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(Eig);
KILN_REGISTER_OP(Eigh);
KILN_REGISTER_OP(EighGrad);
KILN_REGISTER_OP(QRFull);
KILN_REGISTER_OP(SVD);

using nlinalg::CheckSquare;
using nlinalg::CheckStaticSquare;
using nlinalg::ComputeDType;
using nlinalg::ConstMatrix;
using nlinalg::DispatchCompute;
using nlinalg::ExpectRank;
using nlinalg::InDType;
using nlinalg::MutableMatrix;
using nlinalg::OpError;
using nlinalg::RealDType;

namespace {

absl::StatusOr<const TensorType*> OneMatrix(const Op& op, const std::vector<VariablePtr>& in) {
  if (in.size() != 1) return Invalid(op, "expects 1 input (x)");
  return ExpectRank(op, in, 0, 2);
}

// Aesara's f{itemsize} output dtype of QRFull and SVD: float16, float32 or float64 for inputs of
// 2, 4 or 8 bytes that are not complex; INVALID_ARGUMENT for the others (Aesara's TypeError).
absl::StatusOr<DType> ItemsizeFloat(const Op& op, const TensorType& x) {
  if (!IsComplex(x.dtype())) {
    switch (DTypeSize(x.dtype())) {
      case 2:
        return DType::kFloat16;
      case 4:
        return DType::kFloat32;
      case 8:
        return DType::kFloat64;
      default:
        break;
    }
  }
  return Invalid(op, absl::StrCat("input 0 has type ", x.ToString(),
                                  ": there is no float dtype of its itemsize (",
                                  DTypeSize(x.dtype()), " bytes) for the output"));
}

DType OutDType(const Apply& node, int i) { return node.outputs()[i]->tensor_type()->dtype(); }

TypePtr Vector(DType d) { return TensorType::Make(d, StaticShape(1)); }
TypePtr Matrix(DType d) { return TensorType::Make(d, StaticShape(2)); }

// Eigh's dtype of w (and of v for a real x): float32 for float32 and complex64, else float64.
DType EighRealDType(DType x) {
  return x == DType::kFloat32 || x == DType::kFloat16 || x == DType::kComplex64 ? DType::kFloat32
                                                                                : DType::kFloat64;
}

nlinalg::QrMode ModeOf(const std::string& mode) {
  if (mode == "complete") return nlinalg::QrMode::kComplete;
  if (mode == "r") return nlinalg::QrMode::kR;
  if (mode == "raw") return nlinalg::QrMode::kRaw;
  return nlinalg::QrMode::kReduced;
}

}  // namespace

absl::Status EighAttrs::Check() const {
  if (UPLO != "L" && UPLO != "U") {
    return absl::InvalidArgumentError(absl::StrCat("UPLO must be 'L' or 'U', not '", UPLO, "'"));
  }
  return absl::OkStatus();
}

absl::Status QRFullAttrs::Check() const {
  if (mode != "reduced" && mode != "complete" && mode != "r" && mode != "raw") {
    return absl::InvalidArgumentError(absl::StrCat("Unrecognized mode '", mode, "'"));
  }
  return absl::OkStatus();
}

// ---- Eig --------------------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> Eig::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(const TensorType* x, OneMatrix(*this, inputs));
  RETURN_IF_ERROR(CheckStaticSquare(*this, *x));
  const DType d = x->dtype();
  return Apply::Make(self(), std::move(inputs), {Vector(d), Matrix(d)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Eig::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  const VariablePtr& n = in[0][0];
  return std::vector<std::vector<VariablePtr>>{{n}, {n, n}};
}

absl::Status Eig::Perform(const Apply& node, std::span<const Tensor> inputs,
                          std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(CheckSquare(*this, inputs[0]));
  const DType compute = ComputeDType(inputs[0].dtype());
  const DType complex =
      RealDType(compute) == DType::kFloat32 ? DType::kComplex64 : DType::kComplex128;
  const Tensor x = InDType(inputs[0], compute);
  const int64_t n = x.shape()[0];
  Tensor w = Tensor::Zeros(complex, {n}), v = Tensor::Zeros(complex, {n, n});
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) {
    using T = decltype(tag);
    using C = std::complex<nlinalg::Real<T>>;
    return OpError(*this,
                   nlinalg::EigGeneral<T>(ConstMatrix<T>(x), w.data<C>(), MutableMatrix<C>(v)));
  }));
  // A real x keeps the real parts, as Aesara's astype(x.dtype).
  outputs[0] = InDType(w, OutDType(node, 0));
  outputs[1] = InDType(v, OutDType(node, 1));
  return absl::OkStatus();
}

// ---- Eigh, EighGrad ---------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> Eigh::MakeNode(std::vector<VariablePtr> inputs) const {
  if (absl::Status s = attrs().Check(); !s.ok()) return Invalid(*this, std::string(s.message()));
  ASSIGN_OR_RETURN(const TensorType* x, OneMatrix(*this, inputs));
  RETURN_IF_ERROR(CheckStaticSquare(*this, *x));
  const DType w = EighRealDType(x->dtype());
  const DType v = IsComplex(x->dtype()) ? x->dtype() : w;
  return Apply::Make(self(), std::move(inputs), {Vector(w), Matrix(v)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Eigh::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  const VariablePtr& n = in[0][0];
  return std::vector<std::vector<VariablePtr>>{{n}, {n, n}};
}

absl::Status Eigh::Perform(const Apply& node, std::span<const Tensor> inputs,
                           std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(CheckSquare(*this, inputs[0]));
  const DType compute = ComputeDType(inputs[0].dtype());
  const Tensor x = InDType(inputs[0], compute);
  const int64_t n = x.shape()[0];
  Tensor w = Tensor::Empty(RealDType(compute), {n}), v = Tensor::Empty(compute, {n, n});
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) {
    using T = decltype(tag);
    return OpError(*this,
                   nlinalg::EigHermitian<T>(ConstMatrix<T>(x), attrs().UPLO[0],
                                            w.data<nlinalg::Real<T>>(), MutableMatrix<T>(v)));
  }));
  outputs[0] = InDType(w, OutDType(node, 0));
  outputs[1] = InDType(v, OutDType(node, 1));
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> EighGrad::MakeNode(std::vector<VariablePtr> inputs) const {
  if (absl::Status s = attrs().Check(); !s.ok()) return Invalid(*this, std::string(s.message()));
  if (inputs.size() != 5) return Invalid(*this, "expects 5 inputs (x, w, v, gw, gv)");
  DType out = DType::kBool;
  const int ranks[] = {2, 1, 2, 1, 2};
  for (size_t i = 0; i < 5; ++i) {
    ASSIGN_OR_RETURN(const TensorType* t, ExpectRank(*this, inputs, i, ranks[i]));
    if (IsComplex(t->dtype())) {
      return Invalid(*this, absl::StrCat("input ", i, " has type ", t->ToString(),
                                         ": complex eigensystems have no gradient here"));
    }
    out = i == 0 ? t->dtype() : PromoteTypes(out, t->dtype());
  }
  return Apply::Make(self(), std::move(inputs), {Matrix(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> EighGrad::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<std::vector<VariablePtr>>{in[0]};
}

absl::Status EighGrad::Perform(const Apply& node, std::span<const Tensor> inputs,
                               std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(CheckSquare(*this, inputs[0]));
  const int64_t n = inputs[0].shape()[0];
  for (size_t i = 1; i < 5; ++i) {
    const Shape want = inputs[i].ndim() == 1 ? Shape{n} : Shape{n, n};
    if (inputs[i].shape() != want) {
      return Invalid(*this,
                     absl::StrCat("input ", i, " has shape ", ShapeToString(inputs[i].shape()),
                                  " for a ", n, " x ", n, " eigensystem"));
    }
  }
  const DType compute = RealDType(ComputeDType(OutDType(node, 0)));
  std::vector<Tensor> in;
  for (size_t i = 1; i < 5; ++i) in.push_back(InDType(inputs[i], compute).Contiguous());
  Tensor out = Tensor::Empty(compute, {n, n});
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, nlinalg::Real<T>>) {
      nlinalg::EighGradient<T>(ConstMatrix<T>(in[1]), in[0].data<T>(), in[2].data<T>(),
                               ConstMatrix<T>(in[3]), attrs().UPLO[0], MutableMatrix<T>(out));
    }
    return absl::OkStatus();
  }));
  outputs[0] = InDType(out, OutDType(node, 0));
  return absl::OkStatus();
}

// ---- QRFull -----------------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> QRFull::MakeNode(std::vector<VariablePtr> inputs) const {
  if (absl::Status s = attrs().Check(); !s.ok()) return Invalid(*this, std::string(s.message()));
  ASSIGN_OR_RETURN(const TensorType* x, OneMatrix(*this, inputs));
  ASSIGN_OR_RETURN(DType d, ItemsizeFloat(*this, *x));
  const std::string& mode = attrs().mode;
  std::vector<TypePtr> out;
  if (mode == "r") {
    out = {Matrix(d)};
  } else if (mode == "raw") {
    out = {Matrix(d), Vector(d)};
  } else {
    out = {Matrix(d), Matrix(d)};
  }
  return Apply::Make(self(), std::move(inputs), std::move(out));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> QRFull::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  const VariablePtr &m = in[0][0], &n = in[0][1];
  const Var k = minimum(Var(m), Var(n));
  RETURN_IF_ERROR(k.status());
  const std::string& mode = attrs().mode;
  if (mode == "r") return std::vector<std::vector<VariablePtr>>{{k.ptr(), n}};
  if (mode == "raw") return std::vector<std::vector<VariablePtr>>{{n, m}, {k.ptr()}};
  if (mode == "complete") return std::vector<std::vector<VariablePtr>>{{m, m}, {m, n}};
  return std::vector<std::vector<VariablePtr>>{{m, k.ptr()}, {k.ptr(), n}};
}

absl::Status QRFull::Perform(const Apply& node, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(nlinalg::CheckFits(*this, inputs[0]));
  const DType compute = ComputeDType(OutDType(node, 0));
  const Tensor x = InDType(inputs[0], compute);
  const int64_t m = x.shape()[0], n = x.shape()[1], k = std::min(m, n);
  const nlinalg::QrMode mode = ModeOf(attrs().mode);
  Shape q_shape = {m, k}, r_shape = {k, n};
  if (mode == nlinalg::QrMode::kComplete) q_shape = {m, m}, r_shape = {m, n};
  if (mode == nlinalg::QrMode::kRaw) q_shape = {n, m}, r_shape = {0, 0};
  if (mode == nlinalg::QrMode::kR) q_shape = {0, 0};
  RETURN_IF_ERROR(CheckOutputShape(*this, q_shape, compute));  // (m, m) may be past the limits
  Tensor q = Tensor::Empty(compute, q_shape), r = Tensor::Empty(compute, r_shape);
  Tensor tau = Tensor::Empty(compute, {k});
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) {
    using T = decltype(tag);
    return OpError(*this, nlinalg::Qr<T>(ConstMatrix<T>(x), mode, MutableMatrix<T>(q),
                                         MutableMatrix<T>(r), tau.data<T>()));
  }));
  const DType out = OutDType(node, 0);
  if (mode == nlinalg::QrMode::kR) {
    outputs[0] = InDType(r, out);
  } else if (mode == nlinalg::QrMode::kRaw) {
    outputs[0] = InDType(q, out);
    outputs[1] = InDType(tau, out);
  } else {
    outputs[0] = InDType(q, out);
    outputs[1] = InDType(r, out);
  }
  return absl::OkStatus();
}

// ---- SVD --------------------------------------------------------------------------------------

absl::StatusOr<ApplyPtr> SVD::MakeNode(std::vector<VariablePtr> inputs) const {
  ASSIGN_OR_RETURN(const TensorType* x, OneMatrix(*this, inputs));
  ASSIGN_OR_RETURN(DType d, ItemsizeFloat(*this, *x));
  if (!attrs().compute_uv) return Apply::Make(self(), std::move(inputs), {Vector(d)});
  return Apply::Make(self(), std::move(inputs), {Matrix(d), Vector(d), Matrix(d)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> SVD::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  const VariablePtr &m = in[0][0], &n = in[0][1];
  const Var k = minimum(Var(m), Var(n));
  RETURN_IF_ERROR(k.status());
  if (!attrs().compute_uv) return std::vector<std::vector<VariablePtr>>{{k.ptr()}};
  if (attrs().full_matrices) {
    return std::vector<std::vector<VariablePtr>>{{m, m}, {k.ptr()}, {n, n}};
  }
  return std::vector<std::vector<VariablePtr>>{{m, k.ptr()}, {k.ptr()}, {k.ptr(), n}};
}

absl::Status SVD::Perform(const Apply& node, std::span<const Tensor> inputs,
                          std::vector<Tensor>& outputs) const {
  RETURN_IF_ERROR(nlinalg::CheckFits(*this, inputs[0]));
  const DType compute = ComputeDType(OutDType(node, 0));
  const Tensor x = InDType(inputs[0], compute);
  const int64_t m = x.shape()[0], n = x.shape()[1], k = std::min(m, n);
  const bool uv = attrs().compute_uv, full = attrs().full_matrices;
  const Shape u_shape = !uv ? Shape{0, 0} : full ? Shape{m, m} : Shape{m, k};
  const Shape vt_shape = !uv ? Shape{0, 0} : full ? Shape{n, n} : Shape{k, n};
  RETURN_IF_ERROR(CheckOutputShape(*this, u_shape, compute));
  RETURN_IF_ERROR(CheckOutputShape(*this, vt_shape, compute));
  Tensor s = Tensor::Empty(compute, {k});
  Tensor u = Tensor::Empty(compute, u_shape), vt = Tensor::Empty(compute, vt_shape);
  RETURN_IF_ERROR(DispatchCompute(compute, [&](auto tag) {
    using T = decltype(tag);
    nlinalg::MatrixRef<T> ur, vtr;
    if (uv) ur = MutableMatrix<T>(u), vtr = MutableMatrix<T>(vt);
    return OpError(*this,
                   nlinalg::Svd<T>(ConstMatrix<T>(x), full, s.data<nlinalg::Real<T>>(), ur, vtr));
  }));
  const DType out = OutDType(node, 0);
  if (!uv) {
    outputs[0] = InDType(s, out);
    return absl::OkStatus();
  }
  outputs[0] = InDType(u, out);
  outputs[1] = InDType(s, out);
  outputs[2] = InDType(vt, out);
  return absl::OkStatus();
}

// ---- builders ---------------------------------------------------------------------------------

std::vector<Var> eig(const Var& x) { return ApplyOpOutputs(std::make_shared<Eig>(), {x}, 2); }

std::vector<Var> eigh(const Var& x, const std::string& UPLO) {
  return ApplyOpOutputs(std::make_shared<Eigh>(EighAttrs{UPLO}), {x}, 2);
}

std::vector<Var> qr(const Var& x, const std::string& mode) {
  return ApplyOpOutputs(std::make_shared<QRFull>(QRFullAttrs{mode}), {x}, mode == "r" ? 1 : 2);
}

std::vector<Var> svd(const Var& x, bool full_matrices, bool compute_uv) {
  return ApplyOpOutputs(std::make_shared<SVD>(SVDAttrs{full_matrices, compute_uv}), {x},
                        compute_uv ? 3 : 1);
}

}  // namespace kiln
