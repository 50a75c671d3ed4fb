// ONNX's elementwise operators: arithmetic, comparisons and logic, the activations, Cast, Clip
// and Where, as Kiln's Elemwise ops (ONNX broadcasts as NumPy does; the importer's Conform casts
// each result to the dtype ONNX gives it).
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "proto/onnx/import_node.h"
#include "proto/onnx/onnx_tensor.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

// a / b as ONNX divides: truncated towards zero for integers, true division for floats.
Var Divide(const Var& a, const Var& b) {
  if (!a.ok() || !b.ok()) return a.ok() ? b : a;
  if (!IsInteger(a.dtype())) return true_div(a, b);
  const Var q = int_div(a, b);  // floor
  const Var inexact = neq(mod(a, b), ScalarLike(a, 0));
  const Var opposite = neq(lt(a, ScalarLike(a, 0)), lt(b, ScalarLike(b, 0)));
  return switch_(and_(inexact, opposite), q + ScalarLike(q, 1), q);
}

template <Var (*F)(const Var&)>
Outs Unary(const ImportNode& n) {
  return std::vector<Var>{F(n.in(0))};
}

// ONNX's elementwise operators take one type T for all their inputs (Kiln would upcast).
absl::Status SameTypes(const ImportNode& n, int from = 0) {
  for (int i = from + 1; i < n.num_inputs(); ++i) {
    if (n.has(from) && n.has(i) && n.in(i).dtype() != n.in(from).dtype()) {
      return n.Invalid(absl::StrCat("input ", i, " is ", DTypeName(n.in(i).dtype()), " but input ",
                                    from, " is ", DTypeName(n.in(from).dtype())));
    }
  }
  return absl::OkStatus();
}

template <Var (*F)(const Var&, const Var&)>
Outs Binary(const ImportNode& n) {
  if (absl::Status s = SameTypes(n); !s.ok()) return s;
  return std::vector<Var>{F(n.in(0), n.in(1))};
}

// Pow's exponent may have another type than its base.
Outs Pow(const ImportNode& n) { return std::vector<Var>{pow(n.in(0), n.in(1))}; }

Var AddOf(const Var& a, const Var& b) { return a + b; }
Var SubOf(const Var& a, const Var& b) { return a - b; }
Var MulOf(const Var& a, const Var& b) { return a * b; }
Var Identity(const Var& a) { return a; }

Outs Div(const ImportNode& n) {
  if (absl::Status s = SameTypes(n); !s.ok()) return s;
  return std::vector<Var>{Divide(n.in(0), n.in(1))};
}

Outs Mod(const ImportNode& n) {
  const Var a = n.in(0), b = n.in(1);
  if (n.Int("fmod", 0) == 0) {
    if (a.ok() && !IsInteger(a.dtype())) return n.Invalid("fmod=0 is for integers only");
    return std::vector<Var>{mod(a, b)};
  }
  // C's fmod: the remainder takes the dividend's sign.
  if (a.ok() && IsInteger(a.dtype())) return std::vector<Var>{a - Divide(a, b) * b};
  return std::vector<Var>{a - trunc(a / b) * b};
}

// Max, Min, Sum: folded over the inputs; Mean: their sum over their count.
template <Var (*F)(const Var&, const Var&)>
Outs Variadic(const ImportNode& n) {
  if (absl::Status s = SameTypes(n); !s.ok()) return s;
  Var acc = n.in(0);
  for (int i = 1; i < n.num_inputs(); ++i) acc = F(acc, n.in(i));
  return std::vector<Var>{acc};
}

Outs Mean(const ImportNode& n) {
  if (absl::Status s = SameTypes(n); !s.ok()) return s;
  Var acc = n.in(0);
  for (int i = 1; i < n.num_inputs(); ++i) acc = acc + n.in(i);
  return std::vector<Var>{acc / ScalarLike(acc, n.num_inputs())};
}

Outs IsInf(const ImportNode& n) {
  const Var x = n.in(0);
  const bool pos = n.Int("detect_positive", 1) != 0, neg = n.Int("detect_negative", 1) != 0;
  Var r = isinf(x);
  if (pos && !neg) r = and_(r, gt(x, ScalarLike(x, 0)));
  if (neg && !pos) r = and_(r, lt(x, ScalarLike(x, 0)));
  if (!pos && !neg) r = and_(r, eq(x, ScalarLike(x, 0)));  // never true for an infinity
  return std::vector<Var>{r};
}

Outs Relu(const ImportNode& n) { return std::vector<Var>{relu(n.in(0))}; }

Outs LeakyRelu(const ImportNode& n) {
  const Var x = n.in(0);
  return std::vector<Var>{
      switch_(lt(x, ScalarLike(x, 0)), x * ScalarLike(x, n.Float("alpha", 0.01f)), x)};
}

Outs Elu(const ImportNode& n) {
  const Var x = n.in(0);
  const Var neg = ScalarLike(x, n.Float("alpha", 1.0f)) * (exp(x) - ScalarLike(x, 1));
  return std::vector<Var>{switch_(lt(x, ScalarLike(x, 0)), neg, x)};
}

Outs Selu(const ImportNode& n) {
  const Var x = n.in(0);
  const double alpha = n.Float("alpha", 1.67326319217681884765625f);
  const double gamma = n.Float("gamma", 1.05070102214813232421875f);
  const Var neg = ScalarLike(x, alpha) * (exp(x) - ScalarLike(x, 1));
  return std::vector<Var>{ScalarLike(x, gamma) * switch_(le(x, ScalarLike(x, 0)), neg, x)};
}

Outs Celu(const ImportNode& n) {
  const Var x = n.in(0);
  const Var a = ScalarLike(x, n.Float("alpha", 1.0f));
  return std::vector<Var>{maximum(x, ScalarLike(x, 0)) +
                          minimum(ScalarLike(x, 0), a * (exp(x / a) - ScalarLike(x, 1)))};
}

Outs HardSigmoid(const ImportNode& n) {
  const Var x = n.in(0);
  const Var y = ScalarLike(x, n.Float("alpha", 0.2f)) * x + ScalarLike(x, n.Float("beta", 0.5f));
  return std::vector<Var>{minimum(maximum(y, ScalarLike(x, 0)), ScalarLike(x, 1))};
}

Outs HardSwish(const ImportNode& n) {
  const Var x = n.in(0);
  const Var y = x * ScalarLike(x, 1.0 / 6) + ScalarLike(x, 0.5);
  return std::vector<Var>{x * minimum(maximum(y, ScalarLike(x, 0)), ScalarLike(x, 1))};
}

Outs Softsign(const ImportNode& n) {
  const Var x = n.in(0);
  return std::vector<Var>{x / (ScalarLike(x, 1) + abs(x))};
}

Outs ThresholdedRelu(const ImportNode& n) {
  const Var x = n.in(0);
  return std::vector<Var>{
      switch_(gt(x, ScalarLike(x, n.Float("alpha", 1.0f))), x, ScalarLike(x, 0))};
}

Outs Shrink(const ImportNode& n) {
  const Var x = n.in(0);
  const Var lambd = ScalarLike(x, n.Float("lambd", 0.5f)),
            bias = ScalarLike(x, n.Float("bias", 0.0f));
  return std::vector<Var>{
      switch_(lt(x, -lambd), x + bias, switch_(gt(x, lambd), x - bias, ScalarLike(x, 0)))};
}

// The slope broadcasts to x as NumPy's rules say; a (C,) slope that cannot (a model converted
// from opset 6, where it lay along the channels) is laid along axis 1.
Outs PRelu(const ImportNode& n) {
  const Var x = n.in(0);
  Var slope = n.in(1);
  if (x.ok() && slope.ok() && slope.ndim() == 1 && x.ndim() > 2 &&
      slope.type().shape()[0] == x.type().shape()[1] &&
      slope.type().shape()[0] != x.type().shape()[x.ndim() - 1]) {
    std::vector<int> order(x.ndim(), -1);
    order[1] = 0;
    slope = dimshuffle(slope, order);
  }
  return std::vector<Var>{switch_(lt(x, ScalarLike(x, 0)), x * slope, x)};
}

Outs Cast(const ImportNode& n) {
  absl::StatusOr<DType> to = DTypeFromOnnx(static_cast<int32_t>(n.Int("to", 0)));
  if (!to.ok()) return n.Unimplemented(to.status().message());
  return std::vector<Var>{cast(n.in(0), *to)};
}

Outs CastLike(const ImportNode& n) {
  const Var like = n.in(1);
  if (!like.ok()) return like.status();
  return std::vector<Var>{cast(n.in(0), like.dtype())};
}

Outs Clip(const ImportNode& n) {
  Var x = n.in(0);
  if (n.opset() < 11) {
    const float lo = n.Float("min", -std::numeric_limits<float>::max());
    const float hi = n.Float("max", std::numeric_limits<float>::max());
    return std::vector<Var>{minimum(maximum(x, ScalarLike(x, lo)), ScalarLike(x, hi))};
  }
  if (n.has(1)) x = maximum(x, n.in(1));
  if (n.has(2)) x = minimum(x, n.in(2));
  return std::vector<Var>{x};
}

Outs Where(const ImportNode& n) {
  if (absl::Status s = SameTypes(n, 1); !s.ok()) return s;
  return std::vector<Var>{switch_(n.in(0), n.in(1), n.in(2))};
}

// Inference: the input passes, and the mask (when asked for) is all true.
Outs Dropout(const ImportNode& n) {
  const Var x = n.in(0);
  const std::optional<Tensor>& training = n.constant(2);
  const bool off =
      training.has_value() && training->size() == 1 && training->ElementAsDouble(0) == 0;
  if (n.has(2) && !off) {
    return n.Unimplemented("training_mode (random dropout)");
  }
  return std::vector<Var>{x, ones_like(x, DType::kBool)};
}

// BitShift on unsigned integers: x times (LEFT, wrapping as unsigned arithmetic does) or divided
// by (RIGHT) 2^y, the power read from a table of the dtype's; a shift by the width or more gives 0.
Outs BitShift(const ImportNode& n) {
  if (absl::Status s = SameTypes(n); !s.ok()) return s;
  const Var x = n.in(0), y = n.in(1);
  if (!x.ok() || !y.ok()) return x.ok() ? y.status() : x.status();
  const std::string direction = n.String("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    return n.Invalid(absl::StrCat("direction '", direction, "'"));
  }
  if (!IsUnsignedInt(x.dtype())) return n.Invalid("BitShift takes unsigned integers");
  const int64_t bits = 8 * static_cast<int64_t>(DTypeSize(x.dtype()));
  Tensor powers = Tensor::Empty(DType::kUInt64, {bits});
  for (int64_t k = 0; k < bits; ++k) powers.data<uint64_t>()[k] = uint64_t{1} << k;
  const Var table = constant(powers.AsType(x.dtype()));
  const Var shift = cast(y, DType::kInt64);
  const Var wide = ge(shift, scalar_constant(bits, DType::kInt64));
  const Var power = advanced_subtensor(
      table, {AdvIndex(clip(shift, scalar_constant(int64_t{0}, DType::kInt64),
                            scalar_constant(bits - 1, DType::kInt64)))});
  const Var shifted = direction == "LEFT" ? x * power : int_div(x, power);
  return std::vector<Var>{switch_(wide, ScalarLike(x, 0), shifted)};
}

}  // namespace

void AddElementwiseImporters(OpTable& t) {
  t["BitShift"] = BitShift;
  t["Add"] = Binary<AddOf>;
  t["Sub"] = Binary<SubOf>;
  t["Mul"] = Binary<MulOf>;
  t["Div"] = Div;
  t["Pow"] = Pow;
  t["Mod"] = Mod;
  t["Equal"] = Binary<eq>;
  t["Greater"] = Binary<gt>;
  t["Less"] = Binary<lt>;
  t["GreaterOrEqual"] = Binary<ge>;
  t["LessOrEqual"] = Binary<le>;
  t["And"] = Binary<and_>;
  t["Or"] = Binary<or_>;
  t["Xor"] = Binary<xor_>;
  t["Not"] = Unary<invert>;
  t["Max"] = Variadic<maximum>;
  t["Min"] = Variadic<minimum>;
  t["Sum"] = Variadic<AddOf>;
  t["Mean"] = Mean;
  t["Abs"] = Unary<abs>;
  t["Neg"] = Unary<neg>;
  t["Reciprocal"] = Unary<reciprocal>;
  t["Sqrt"] = Unary<sqrt>;
  t["Exp"] = Unary<exp>;
  t["Log"] = Unary<log>;
  t["Floor"] = Unary<floor>;
  t["Ceil"] = Unary<ceil>;
  t["Sign"] = Unary<sgn>;
  t["Round"] = Unary<round_half_to_even>;
  t["Sin"] = Unary<sin>;
  t["Cos"] = Unary<cos>;
  t["Tan"] = Unary<tan>;
  t["Asin"] = Unary<arcsin>;
  t["Acos"] = Unary<arccos>;
  t["Atan"] = Unary<arctan>;
  t["Sinh"] = Unary<sinh>;
  t["Cosh"] = Unary<cosh>;
  t["Tanh"] = Unary<tanh>;
  t["Asinh"] = Unary<arcsinh>;
  t["Acosh"] = Unary<arccosh>;
  t["Atanh"] = Unary<arctanh>;
  t["Erf"] = Unary<erf>;
  t["Sigmoid"] = Unary<sigmoid>;
  t["Softplus"] = Unary<softplus>;
  t["IsNaN"] = Unary<isnan>;
  t["IsInf"] = IsInf;
  t["Identity"] = Unary<Identity>;
  t["Relu"] = Relu;
  t["LeakyRelu"] = LeakyRelu;
  t["Elu"] = Elu;
  t["Selu"] = Selu;
  t["Celu"] = Celu;
  t["HardSigmoid"] = HardSigmoid;
  t["HardSwish"] = HardSwish;
  t["Softsign"] = Softsign;
  t["ThresholdedRelu"] = ThresholdedRelu;
  t["Shrink"] = Shrink;
  t["PRelu"] = PRelu;
  t["Cast"] = Cast;
  t["CastLike"] = CastLike;
  t["Clip"] = Clip;
  t["Where"] = Where;
  t["Dropout"] = Dropout;
}

}  // namespace kiln::onnx
