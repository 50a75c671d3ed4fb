#include "core/ops/slinalg_lu.h"

#include <cstring>
#include <memory>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/op_registry.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/ops/slinalg.h"
#include "core/ops/slinalg_kernels.h"
#include "core/ops/slinalg_util.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(LU);
KILN_REGISTER_OP(LUFactor);
KILN_REGISTER_OP(PivotToPermutations);
KILN_REGISTER_OP(BlockDiagonal);

namespace {

// The packed getrf factors of a square x (in scipy's dtype for it), its 0-based pivots and the
// inverse permutation (x[perm] = L U); run-time checks of the value first.
struct Factors {
  Tensor lu;
  std::vector<int32_t> pivots;
  std::vector<int64_t> perm;
};

// x's Factors, or the op's error for a value that is not square (or finite, when checked).
absl::StatusOr<Factors> Factor(const Op& op, const Tensor& x, bool check_finite) {
  RETURN_IF_ERROR(slinalg::CheckSquare(op, x, 0, "x"));
  if (check_finite) RETURN_IF_ERROR(slinalg::CheckFinite(op, x, 0, "x"));
  const DType dtype = slinalg::LapackDType(x.dtype());
  RETURN_IF_ERROR(CheckOutputShape(op, x.shape(), dtype));
  const int64_t n = x.shape()[0];
  Factors f{Tensor::Empty(dtype, x.shape()), std::vector<int32_t>(n), std::vector<int64_t>(n)};
  const Tensor a = slinalg::Converted(x, dtype);
  slinalg::DispatchLapack(dtype, [&](auto zero) {
    using T = decltype(zero);
    return slinalg::LuFactor<T>(slinalg::ConstRef<T>(a), slinalg::MutRef<T>(f.lu), f.pivots.data());
  });
  std::iota(f.perm.begin(), f.perm.end(), int64_t{0});
  for (int64_t i = 0; i < n; ++i) std::swap(f.perm[i], f.perm[f.pivots[i]]);
  return f;
}

// The dtype of LU's permutation matrix: float32 for single precision inputs, else float64.
DType PermutationDType(DType x) {
  return x == DType::kFloat32 || x == DType::kComplex64 ? DType::kFloat32 : DType::kFloat64;
}

}  // namespace

absl::Status LUAttrs::Check() const {
  if (permute_l && p_indices) {
    return absl::InvalidArgumentError("Only one of permute_l and p_indices can be True");
  }
  if (overwrite_a) {
    return absl::InvalidArgumentError(
        "attribute 'overwrite_a' must be False (Kiln never writes into an input)");
  }
  return absl::OkStatus();
}

absl::Status LUFactorAttrs::Check() const {
  if (overwrite_a) {
    return absl::InvalidArgumentError(
        "attribute 'overwrite_a' must be False (Kiln never writes into an input)");
  }
  return absl::OkStatus();
}

absl::Status BlockDiagonalAttrs::Check() const {
  if (n_inputs < 1 || n_inputs > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute 'n_inputs' must be in [1, 4096], not ", n_inputs));
  }
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> LU::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input (x)");
  ASSIGN_OR_RETURN(const TensorType* x, slinalg::MatrixInput(*this, inputs, 0, "x", 2));
  RETURN_IF_ERROR(slinalg::CheckStaticSquare(*this, *x, 0, "x"));
  const TypePtr factor = TensorType::Make(x->dtype(), x->shape());
  std::vector<TypePtr> outs;
  if (attrs().p_indices) {
    outs.push_back(TensorType::Make(DType::kInt32, {x->shape()[0]}));
  } else if (!attrs().permute_l) {
    outs.push_back(TensorType::Make(PermutationDType(x->dtype()), x->shape()));
  }
  outs.push_back(factor);
  outs.push_back(factor);
  return Apply::Make(self(), std::move(inputs), std::move(outs));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> LU::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const ShapeVars square = {in[0][0], in[0][0]};
  if (attrs().permute_l) return std::vector<ShapeVars>{square, square};
  if (attrs().p_indices) return std::vector<ShapeVars>{{in[0][0]}, square, square};
  return std::vector<ShapeVars>{square, square, square};
}

absl::Status LU::Perform(const Apply& node, std::span<const Tensor> inputs,
                         std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(Factors f, Factor(*this, inputs[0], attrs().check_finite));
  const int64_t n = inputs[0].shape()[0];
  const DType dtype = f.lu.dtype();
  Tensor l = Tensor::Zeros(dtype, {n, n}), u = Tensor::Zeros(dtype, {n, n});
  slinalg::DispatchLapack(dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* p = f.lu.data<T>();
    T* pl = l.data<T>();
    T* pu = u.data<T>();
    // Row i of L (of P L when permute_l: row perm[i] of the result).
    for (int64_t i = 0; i < n; ++i) {
      const int64_t row = attrs().permute_l ? f.perm[i] : i;
      for (int64_t j = 0; j < i; ++j) pl[row * n + j] = p[i * n + j];
      pl[row * n + i] = T(1);
      for (int64_t j = i; j < n; ++j) pu[i * n + j] = p[i * n + j];
    }
    return 0;
  });
  const auto& outs = node.outputs();
  size_t k = 0;
  if (attrs().p_indices) {
    Tensor p = Tensor::Empty(DType::kInt32, {n});
    for (int64_t i = 0; i < n; ++i) p.data<int32_t>()[f.perm[i]] = static_cast<int32_t>(i);
    outputs[k++] = std::move(p);
  } else if (!attrs().permute_l) {
    Tensor p = Tensor::Zeros(DType::kFloat64, {n, n});
    for (int64_t i = 0; i < n; ++i) p.data<double>()[f.perm[i] * n + i] = 1.0;
    outputs[k++] = slinalg::Converted(p, outs[0]->tensor_type()->dtype());
  }
  outputs[k] = slinalg::Converted(l, outs[k]->tensor_type()->dtype());
  outputs[k + 1] = slinalg::Converted(u, outs[k + 1]->tensor_type()->dtype());
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> LUFactor::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input (x)");
  ASSIGN_OR_RETURN(const TensorType* x, slinalg::MatrixInput(*this, inputs, 0, "x", 2));
  RETURN_IF_ERROR(slinalg::CheckStaticSquare(*this, *x, 0, "x"));
  return Apply::Make(
      self(), std::move(inputs),
      {TensorType::Make(x->dtype(), x->shape()), TensorType::Make(DType::kInt32, {x->shape()[0]})});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> LUFactor::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{{in[0][0], in[0][0]}, {in[0][0]}};
}

absl::Status LUFactor::Perform(const Apply& node, std::span<const Tensor> inputs,
                               std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(Factors f, Factor(*this, inputs[0], attrs().check_finite));
  const int64_t n = inputs[0].shape()[0];
  Tensor pivots = Tensor::Empty(DType::kInt32, {n});
  std::copy(f.pivots.begin(), f.pivots.end(), pivots.data<int32_t>());
  outputs[0] = slinalg::Converted(f.lu, node.outputs()[0]->tensor_type()->dtype());
  outputs[1] = std::move(pivots);
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> PivotToPermutations::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input (pivots)");
  ASSIGN_OR_RETURN(const TensorType* p,
                   ExpectTensor(*this, inputs, 0, 1, true, "an integer vector (pivots)"));
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(DType::kInt64, p->shape())});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> PivotToPermutations::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status PivotToPermutations::Perform(const Apply&, std::span<const Tensor> inputs,
                                          std::vector<Tensor>& outputs) const {
  const Tensor pivots = inputs[0].AsType(DType::kInt64);
  const int64_t n = pivots.size();
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), int64_t{0});
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = pivots.data<int64_t>()[i];
    if (p < 0 || p >= n) {
      return Invalid(*this, absl::StrCat("input 0 (pivots) has the entry ", p, " at ", i,
                                         ", outside [0, ", n, ")"));
    }
    std::swap(perm[i], perm[p]);
  }
  Tensor out = Tensor::Empty(DType::kInt64, {n});
  int64_t* o = out.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (attrs().inverse) {
      o[i] = perm[i];
    } else {
      o[perm[i]] = i;  // argsort of a permutation
    }
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

absl::StatusOr<ApplyPtr> BlockDiagonal::MakeNode(std::vector<VariablePtr> inputs) const {
  if (static_cast<int>(inputs.size()) != attrs().n_inputs) {
    return Invalid(*this, absl::StrCat("Expected ", attrs().n_inputs,
                                       attrs().n_inputs > 1 ? " matrices" : " matrix", ", got ",
                                       inputs.size()));
  }
  DType dtype = DType::kBool;
  StaticShape shape = {StaticDim(0), StaticDim(0)};
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSIGN_OR_RETURN(const TensorType* m, slinalg::MatrixInput(*this, inputs, i, "matrix", 2));
    dtype = i == 0 ? m->dtype() : PromoteTypes(dtype, m->dtype());
    for (int d = 0; d < 2; ++d) {
      const std::optional<int64_t> sum =
          shape[d] && m->shape()[d] ? CheckedAdd(*shape[d], *m->shape()[d]) : std::nullopt;
      shape[d] = sum;
    }
  }
  RETURN_IF_ERROR(CheckKnownDims(*this, shape));
  return Apply::Make(self(), std::move(inputs), {TensorType::Make(dtype, shape)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> BlockDiagonal::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  Var rows = in[0][0], cols = in[0][1];
  for (size_t i = 1; i < in.size(); ++i) {
    rows = rows + Var(in[i][0]);
    cols = cols + Var(in[i][1]);
  }
  ASSIGN_OR_RETURN(VariablePtr r, Unwrap(rows));
  ASSIGN_OR_RETURN(VariablePtr c, Unwrap(cols));
  return std::vector<ShapeVars>{{r, c}};
}

absl::Status BlockDiagonal::Perform(const Apply& node, std::span<const Tensor> inputs,
                                    std::vector<Tensor>& outputs) const {
  const DType dtype = node.outputs()[0]->tensor_type()->dtype();
  int64_t rows = 0, cols = 0;
  for (const Tensor& m : inputs) {
    const std::optional<int64_t> r = CheckedAdd(rows, m.shape()[0]);
    const std::optional<int64_t> c = CheckedAdd(cols, m.shape()[1]);
    if (!r || !c) return Invalid(*this, "the output's dims overflow int64");
    rows = *r;
    cols = *c;
  }
  RETURN_IF_ERROR(CheckOutputShape(*this, {rows, cols}, dtype));
  Tensor out = Tensor::Zeros(dtype, {rows, cols});
  const int64_t size = DTypeSize(dtype);
  char* dst = static_cast<char*>(out.raw_data());
  int64_t r0 = 0, c0 = 0;
  for (const Tensor& m : inputs) {
    const Tensor block = m.AsType(dtype);  // contiguous
    const char* src = static_cast<const char*>(block.raw_data());
    const int64_t h = m.shape()[0], w = m.shape()[1];
    for (int64_t i = 0; i < h; ++i) {
      std::memcpy(dst + ((r0 + i) * cols + c0) * size, src + i * w * size, w * size);
    }
    r0 += h;
    c0 += w;
  }
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

std::vector<Var> lu(const Var& a, bool permute_l, bool check_finite, bool p_indices) {
  LUAttrs attrs{.permute_l = permute_l, .check_finite = check_finite, .p_indices = p_indices};
  if (absl::Status s = attrs.Check(); !s.ok()) {
    return {Var(absl::InvalidArgumentError(absl::StrCat("LU: ", s.message())))};
  }
  const Var first = ApplyOp(OpPtr(std::make_shared<LU>(attrs)), {a});
  if (!first.ok()) return {first};
  std::vector<Var> out;
  for (const VariablePtr& o : first->owner()->outputs()) out.push_back(o);
  return out;
}

std::vector<Var> lu_factor(const Var& a, bool check_finite) {
  const Var first =
      ApplyOp(OpPtr(std::make_shared<LUFactor>(LUFactorAttrs{.check_finite = check_finite})), {a});
  if (!first.ok()) return {first, first};
  return {first, Var(first->owner()->outputs()[1])};
}

Var pivot_to_permutation(const Var& p, bool inverse) {
  return ApplyOp(
      OpPtr(std::make_shared<PivotToPermutations>(PivotToPermutationsAttrs{.inverse = inverse})),
      {p});
}

Var lu_solve(const Var& lu, const Var& pivots, const Var& b, bool trans, bool check_finite) {
  const Var inv = pivot_to_permutation(pivots, true);
  Var x = trans ? b : take(b, inv);
  const int t = trans ? 1 : 0;
  x = solve_triangular(lu, x, t, !trans, !trans, check_finite);
  x = solve_triangular(lu, x, t, trans, trans, check_finite);
  return trans ? take(x, argsort(inv)) : x;
}

Var block_diag(const std::vector<Var>& matrices) {
  const int n = static_cast<int>(matrices.size());
  BlockDiagonalAttrs attrs{.n_inputs = n};
  if (absl::Status s = attrs.Check(); !s.ok()) {
    return Var(absl::InvalidArgumentError(absl::StrCat("BlockDiagonal: ", s.message())));
  }
  return ApplyOp(OpPtr(std::make_shared<BlockDiagonal>(attrs)), matrices);
}

}  // namespace kiln
