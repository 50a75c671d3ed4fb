// ONNX's quantized operators, in Kiln's float and integer arithmetic as ONNX Runtime computes
// them: QuantizeLinear and DequantizeLinear (per tensor or per axis), DynamicQuantizeLinear,
// MatMulInteger and ConvInteger (exact: the products of 8-bit values summed in float64), and
// QLinearMatMul and QLinearConv (the integer result requantized in float32, rounded half to
// even, saturated).
#include <string>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "proto/onnx/import_node.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

// A scale or zero point: a scalar as it is, a vector laid along `axis` of a rank-`rank` tensor.
Var PerAxis(const Var& v, int axis, int rank) {
  if (!v.ok() || v.ndim() == 0 || rank == 0) return v;
  std::vector<int> order(rank, kX);
  order[axis] = 0;
  return dimshuffle(v, order);
}

// round(x) + zero_point saturated to `dtype`'s range (uint8 or int8), in that dtype.
Var Saturate(const Var& rounded, const Var& zero_point, DType dtype) {
  const double lo = dtype == DType::kInt8 ? -128 : 0, hi = dtype == DType::kInt8 ? 127 : 255;
  const Var shifted = rounded + cast(zero_point, rounded.dtype());
  return cast(clip(shifted, ScalarLike(shifted, lo), ScalarLike(shifted, hi)), dtype);
}

// The zero point given (input i), or a 0 of uint8.
Var ZeroPoint(const ImportNode& n, int i) {
  return n.has(i) ? n.in(i) : scalar_constant(int64_t{0}, DType::kUInt8);
}

// The axis a per-axis scale lies along (0 when the scale is a scalar: no axis is read).
absl::StatusOr<int> QuantAxis(const ImportNode& n, const Var& x) {
  if (!n.in(1).ok() || n.in(1).ndim() == 0) return 0;
  return NormalizeAxis(n, n.Int("axis", 1), x.ndim());
}

Outs QuantizeLinear(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  absl::StatusOr<int> axis = QuantAxis(n, x);
  if (!axis.ok()) return axis.status();
  const Var zero = ZeroPoint(n, 2);
  const Var scale = PerAxis(n.in(1), *axis, x.ndim());
  const Var q = round_half_to_even(x / cast(scale, x.dtype()));
  return std::vector<Var>{Saturate(q, PerAxis(zero, *axis, x.ndim()), zero.dtype())};
}

Outs DequantizeLinear(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  absl::StatusOr<int> axis = QuantAxis(n, x);
  if (!axis.ok()) return axis.status();
  const Var scale = n.in(1);
  const Var zero = PerAxis(ZeroPoint(n, 2), *axis, x.ndim());
  const Var centred = cast(x, DType::kInt32) - cast(zero, DType::kInt32);
  return std::vector<Var>{cast(centred, scale.dtype()) * PerAxis(scale, *axis, x.ndim())};
}

// DynamicQuantizeLinear: uint8 over [min(x, 0), max(x, 0)].
Outs DynamicQuantizeLinear(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  const Var zero = ScalarLike(x, 0);
  const Var lo = minimum(min(x), zero), hi = maximum(max(x), zero);
  const Var scale = (hi - lo) / ScalarLike(x, 255);
  const Var zero_point = cast(clip(round_half_to_even(zero - lo / scale), zero,
                                   ScalarLike(x, 255)), DType::kUInt8);
  const Var y = Saturate(round_half_to_even(x / scale), zero_point, DType::kUInt8);
  return std::vector<Var>{y, scale, zero_point};
}

// x - zero_point in float64 (exact for 8-bit values), the zero point laid along `axis`.
Var Centred(const Var& x, const Var& zero_point, int axis) {
  return cast(x, DType::kFloat64) - PerAxis(cast(zero_point, DType::kFloat64), axis, x.ndim());
}

Outs MatMulInteger(const ImportNode& n) {
  const Var a = n.in(0), b = n.in(1);
  if (!a.ok() || !b.ok()) return a.ok() ? b.status() : a.status();
  if (a.ndim() < 1 || b.ndim() < 1) return n.Invalid("MatMulInteger takes tensors of rank 1 up");
  // A's zero point is per row (its second last dim), B's per column (its last).
  const Var product = matmul(Centred(a, ZeroPoint(n, 2), std::max(a.ndim() - 2, 0)),
                             Centred(b, ZeroPoint(n, 3), b.ndim() - 1));
  return std::vector<Var>{cast(product, DType::kInt32)};
}

Outs ConvInteger(const ImportNode& n) {
  const Var x = n.in(0), w = n.in(1);
  if (!x.ok() || !w.ok()) return x.ok() ? w.status() : x.status();
  absl::StatusOr<Var> y = ConvolveAsOnnx(n, Centred(x, ZeroPoint(n, 2), 1),
                                         Centred(w, ZeroPoint(n, 3), 0));
  if (!y.ok()) return y.status();
  return std::vector<Var>{cast(*y, DType::kInt32)};
}

// The integer result `acc` (float64) requantized: acc * (a_scale * b_scale / y_scale) in
// float32, rounded half to even, plus y's zero point, saturated.
Var Requantize(const Var& acc, const Var& a_scale, const Var& b_scale, const Var& y_scale,
               const Var& y_zero) {
  const Var multiplier = a_scale * b_scale / y_scale;
  const Var value = round_half_to_even(cast(acc, DType::kFloat32) * multiplier);
  return Saturate(value, y_zero, y_zero.dtype());
}

Outs QLinearMatMul(const ImportNode& n) {
  const Var a = n.in(0), b = n.in(3);
  if (!a.ok() || !b.ok()) return a.ok() ? b.status() : a.status();
  const Var acc = matmul(Centred(a, n.in(2), std::max(a.ndim() - 2, 0)),
                         Centred(b, n.in(5), b.ndim() - 1));
  const Var a_scale = PerAxis(n.in(1), std::max(acc.ndim() - 2, 0), acc.ndim());
  const Var b_scale = PerAxis(n.in(4), acc.ndim() - 1, acc.ndim());
  return std::vector<Var>{Requantize(acc, a_scale, b_scale, n.in(6), n.in(7))};
}

Outs QLinearConv(const ImportNode& n) {
  const Var x = n.in(0), w = n.in(3);
  if (!x.ok() || !w.ok()) return x.ok() ? w.status() : x.status();
  absl::StatusOr<Var> acc = ConvolveAsOnnx(n, Centred(x, n.in(2), 1), Centred(w, n.in(5), 0));
  if (!acc.ok()) return acc.status();
  Var sum = *acc;
  if (n.has(8)) sum = sum + PerAxis(cast(n.in(8), DType::kFloat64), 1, sum.ndim());
  const Var w_scale = PerAxis(n.in(4), 1, sum.ndim());  // per output channel
  return std::vector<Var>{Requantize(sum, n.in(1), w_scale, n.in(6), n.in(7))};
}

}  // namespace

void AddQuantizedImporters(OpTable& t) {
  t["QuantizeLinear"] = QuantizeLinear;
  t["DequantizeLinear"] = DequantizeLinear;
  t["DynamicQuantizeLinear"] = DynamicQuantizeLinear;
  t["MatMulInteger"] = MatMulInteger;
  t["ConvInteger"] = ConvInteger;
  t["QLinearMatMul"] = QLinearMatMul;
  t["QLinearConv"] = QLinearConv;
}

}  // namespace kiln::onnx
