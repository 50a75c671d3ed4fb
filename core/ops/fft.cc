#include "core/ops/fft.h"

#include <span>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/fft_kernels.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(RFFTOp);
KILN_REGISTER_OP(IRFFTOp);

namespace {

// (a, s) checked for an FFT op whose a has at least `min_ndim` dims and `extra` dims that s does
// not count (the batch, and IRFFTOp's real/imaginary pair); the node has a's dtype and one dim
// more (RFFTOp) or fewer (IRFFTOp), all of unknown length, as in Aesara.
absl::StatusOr<ApplyPtr> MakeFftNode(const Op& op, OpPtr self, std::vector<VariablePtr> inputs,
                                     int min_ndim, int out_ndim_change, const char* dims_message) {
  if (inputs.size() != 2) return Invalid(op, "expects 2 inputs (a, s)");
  const TensorType* a = inputs[0]->tensor_type();
  const TensorType* s = inputs[1]->tensor_type();
  if (a == nullptr || !IsFloat(a->dtype())) {
    return Invalid(op, absl::StrCat("input 0 (a) has type ", inputs[0]->type()->ToString(),
                                    ", which is not a float tensor"));
  }
  if (a->ndim() < min_ndim) {
    return Invalid(op, absl::StrCat("input 0 (a) has type ", a->ToString(), ": ", dims_message));
  }
  if (s == nullptr || s->ndim() != 1 || !IsInteger(s->dtype())) {
    return Invalid(op, absl::StrCat("input 1 (s) has type ", inputs[1]->type()->ToString(),
                                    ": length of the transformed axis must be of type integer"));
  }
  TypePtr out = TensorType::Make(a->dtype(), StaticShape(a->ndim() + out_ndim_change));
  return Apply::Make(std::move(self), std::move(inputs), {std::move(out)});
}

// The lengths in s, each >= 1, k of them; INVALID_ARGUMENT naming the op otherwise.
absl::StatusOr<std::vector<int64_t>> Lengths(const Op& op, const Tensor& s, int64_t k) {
  const Tensor lengths = s.AsType(DType::kInt64);
  std::vector<int64_t> out(lengths.data<int64_t>(), lengths.data<int64_t>() + lengths.size());
  if (static_cast<int64_t>(out.size()) != k) {
    return Invalid(op, absl::StrCat("input 1 (s) has ", out.size(), " lengths for ", k,
                                    " transformed dims"));
  }
  for (int64_t n : out) {
    if (n < 1) return Invalid(op, absl::StrCat("input 1 (s) has the length ", n, ", not >= 1"));
  }
  return out;
}

// Calls put(destination index, source index or -1 where dst is past src) for every element of
// a C-order array of shape `dst`, read from one of shape `src` cut or zero-padded to it.
template <typename Put>
void CutOrPad(std::span<const int64_t> src, std::span<const int64_t> dst, Put put) {
  const size_t k = dst.size();
  std::vector<int64_t> idx(k, 0);
  int64_t total = 1;
  for (int64_t n : dst) total *= n;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d < k; ++d) {
      inside = inside && idx[d] < src[d];
      offset = offset * src[d] + idx[d];
    }
    put(flat, inside ? offset : -1);
    for (size_t d = k; d-- > 0;) {  // the next multi-index
      if (++idx[d] < dst[d]) break;
      idx[d] = 0;
    }
  }
}

// The weights of the frequency dim (the second to last) of g in the gradients: `middle` for the
// entries 1 .. n // 2 + n % 2 - 1, which stand for two frequencies each, 1 elsewhere (n = s[-1]).
Var SpectrumWeights(const Var& g, const Var& s, double middle) {
  const int nd = g.ndim();
  const Var j = arange(shape_i(g, nd - 2));
  const Var n = cast(subtensor(s, {Index(-1)}), DType::kInt64);
  const Var two = constant(int64_t{2});
  const Var end = int_div(n, two) + n % two;
  const Var w = switch_((j >= constant(int64_t{1})) & (j < end), scalar_constant(middle, g.dtype()),
                        scalar_constant(1.0, g.dtype()));
  std::vector<int> order(nd - 2, kX);
  order.push_back(0);
  order.push_back(kX);
  return dimshuffle(w, order);
}

// The product of the lengths in the integer vector s, as a scalar of `dtype`.
Var LengthsProduct(const std::vector<Var>& lengths, DType dtype) {
  Var p = lengths[0];
  for (size_t d = 1; d < lengths.size(); ++d) p = p * lengths[d];
  return cast(p, dtype);
}

// Aesara's _unitary: OK for "", "ortho" and "no_norm".
bool KnownNorm(const std::string& norm) {
  return norm.empty() || norm == "ortho" || norm == "no_norm";
}

}  // namespace

absl::StatusOr<ApplyPtr> RFFTOp::MakeNode(std::vector<VariablePtr> inputs) const {
  return MakeFftNode(*this, self(), std::move(inputs), 2, 1,
                     "input must have dimension > 2, with first dimension batches");
}

absl::StatusOr<ApplyPtr> IRFFTOp::MakeNode(std::vector<VariablePtr> inputs) const {
  return MakeFftNode(*this, self(), std::move(inputs), 3, -1,
                     "input must have dimension >= 3,  with first dimension batches and last "
                     "real/imag parts");
}

// (m, s..., s[-1] // 2 + 1, 2).
absl::StatusOr<std::vector<std::vector<VariablePtr>>> RFFTOp::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const Var s(node.inputs()[1]);
  const int k = node.inputs()[0]->tensor_type()->ndim() - 1;
  std::vector<VariablePtr> out = {in[0][0]};
  for (int d = 0; d < k; ++d) {
    Var n = cast(subtensor(s, {Index(d)}), DType::kInt64);
    if (d == k - 1) n = int_div(n, constant(int64_t{2})) + constant(int64_t{1});
    out.push_back(n.ptr());
  }
  out.push_back(constant(int64_t{2}).ptr());
  return std::vector<std::vector<VariablePtr>>{out};
}

// (m, s...).
absl::StatusOr<std::vector<std::vector<VariablePtr>>> IRFFTOp::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const Var s(node.inputs()[1]);
  const int k = node.inputs()[0]->tensor_type()->ndim() - 2;
  std::vector<VariablePtr> out = {in[0][0]};
  for (int d = 0; d < k; ++d) out.push_back(cast(subtensor(s, {Index(d)}), DType::kInt64).ptr());
  return std::vector<std::vector<VariablePtr>>{out};
}

namespace {

// A complex128 work tensor of `shape` (charged to the call's budget), or the op's error when
// its size is past the limits.
absl::StatusOr<Tensor> WorkTensor(const Op& op, const std::vector<int64_t>& shape) {
  RETURN_IF_ERROR(CheckOutputShape(op, Shape(shape.begin(), shape.end()), DType::kComplex128));
  return Tensor::Zeros(DType::kComplex128, Shape(shape.begin(), shape.end()));
}

std::span<fft::Complex> ComplexSpan(Tensor& t) {
  return {static_cast<fft::Complex*>(t.raw_data()), static_cast<size_t>(t.size())};
}

}  // namespace

absl::Status RFFTOp::Perform(const Apply&, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  const Tensor a = inputs[0].AsType(DType::kFloat64);  // contiguous
  const int64_t k = a.ndim() - 1;
  ASSIGN_OR_RETURN(std::vector<int64_t> s, Lengths(*this, inputs[1], k));
  const std::vector<int64_t> in_dims(a.shape().begin() + 1, a.shape().end());
  Shape out_shape = {a.shape()[0]};
  out_shape.insert(out_shape.end(), s.begin(), s.end());
  const int64_t n = s.back(), half = n / 2 + 1;
  out_shape.back() = half;
  out_shape.push_back(2);
  RETURN_IF_ERROR(CheckOutputShape(*this, out_shape, inputs[0].dtype()));
  ASSIGN_OR_RETURN(Tensor work, WorkTensor(*this, s));  // bounds every product of s below
  std::span<fft::Complex> x = ComplexSpan(work);
  int64_t in_size = 1;
  for (int64_t d : in_dims) in_size *= d;
  Tensor out = Tensor::Zeros(DType::kFloat64, out_shape);
  double* dst = out.data<double>();
  for (int64_t b = 0; b < a.shape()[0]; ++b) {
    const double* src = a.data<double>() + b * in_size;
    CutOrPad(in_dims, s, [&](int64_t i, int64_t from) { x[i] = from < 0 ? 0.0 : src[from]; });
    RETURN_IF_ERROR(fft::RealForward(x, s));
    for (size_t line = 0; line < x.size() / n; ++line) {
      for (int64_t j = 0; j < half; ++j) {
        *dst++ = x[line * n + j].real();
        *dst++ = x[line * n + j].imag();
      }
    }
  }
  outputs[0] = out.AsType(inputs[0].dtype());
  return absl::OkStatus();
}

absl::Status IRFFTOp::Perform(const Apply&, std::span<const Tensor> inputs,
                              std::vector<Tensor>& outputs) const {
  const Tensor a = inputs[0].AsType(DType::kFloat64);
  const int64_t k = a.ndim() - 2;
  if (a.shape().back() != 2) {
    return Invalid(*this, absl::StrCat("input 0 (a) has shape ", ShapeToString(a.shape()),
                                       ": its last dim must hold 2 values (real, imaginary)"));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> s, Lengths(*this, inputs[1], k));
  const std::vector<int64_t> in_dims(a.shape().begin() + 1, a.shape().end() - 1);
  std::vector<int64_t> half(s);
  half.back() = s.back() / 2 + 1;
  Shape out_shape = {a.shape()[0]};
  out_shape.insert(out_shape.end(), s.begin(), s.end());
  RETURN_IF_ERROR(CheckOutputShape(*this, out_shape, inputs[0].dtype()));  // bounds prod(s)
  ASSIGN_OR_RETURN(Tensor work, WorkTensor(*this, half));
  std::span<fft::Complex> x = ComplexSpan(work);
  int64_t in_size = 2, signal = 1;
  for (int64_t d : in_dims) in_size *= d;
  for (int64_t d : s) signal *= d;
  Tensor out = Tensor::Zeros(DType::kFloat64, out_shape);
  for (int64_t b = 0; b < a.shape()[0]; ++b) {
    const double* src = a.data<double>() + b * in_size;
    CutOrPad(in_dims, half, [&](int64_t i, int64_t from) {
      x[i] = from < 0 ? fft::Complex() : fft::Complex(src[2 * from], src[2 * from + 1]);
    });
    RETURN_IF_ERROR(fft::RealInverse(
        x, s, std::span<double>(out.data<double>() + b * signal, static_cast<size_t>(signal))));
  }
  outputs[0] = out.AsType(inputs[0].dtype());
  return absl::OkStatus();
}

// Aesara's: the frequencies that stand for two are halved, then IRFFTOp; s is disconnected.
std::vector<Var> RFFTOp::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var s(node.inputs()[1]);
  const Var weighted = g[0] * SpectrumWeights(g[0], s, 0.5);
  return {ApplyOp(OpPtr(std::make_shared<IRFFTOp>()), {weighted, s}), disconnected_type()};
}

// Aesara's: RFFTOp of the gradient, with the frequencies that stand for two doubled.
std::vector<Var> IRFFTOp::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var s(node.inputs()[1]);
  const Var spectrum = ApplyOp(OpPtr(std::make_shared<RFFTOp>()), {g[0], s});
  return {spectrum * SpectrumWeights(spectrum, s, 2.0), disconnected_type()};
}

Var rfft(const Var& inp, const std::string& norm) {
  if (!KnownNorm(norm)) {
    return Var(absl::InvalidArgumentError(absl::StrCat(
        "rfft: invalid value ", norm, " for norm, must be None, 'ortho' or 'no norm'")));
  }
  std::vector<Var> lengths;
  for (int d = 1; d < inp.ndim(); ++d) lengths.push_back(shape_i(inp, d));
  if (lengths.empty()) return ApplyOp(OpPtr(std::make_shared<RFFTOp>()), {inp, make_vector({})});
  const Var out = ApplyOp(OpPtr(std::make_shared<RFFTOp>()), {inp, make_vector(lengths)});
  if (norm != "ortho") return out;
  return out / sqrt(LengthsProduct(lengths, inp.dtype()));
}

Var irfft(const Var& inp, const std::string& norm, bool is_odd) {
  if (!KnownNorm(norm)) {
    return Var(absl::InvalidArgumentError(absl::StrCat(
        "irfft: invalid value ", norm, " for norm, must be None, 'ortho' or 'no norm'")));
  }
  std::vector<Var> lengths;
  for (int d = 1; d + 1 < inp.ndim(); ++d) lengths.push_back(shape_i(inp, d));
  if (lengths.empty()) return ApplyOp(OpPtr(std::make_shared<IRFFTOp>()), {inp, make_vector({})});
  const Var last = (lengths.back() - constant(int64_t{1})) * constant(int64_t{2});
  lengths.back() = is_odd ? last + constant(int64_t{1}) : last;
  const Var out = ApplyOp(OpPtr(std::make_shared<IRFFTOp>()), {inp, make_vector(lengths)});
  if (norm == "no_norm") return out;
  const Var n = LengthsProduct(lengths, inp.dtype());
  return out / (norm == "ortho" ? sqrt(n) : n);
}

}  // namespace kiln
