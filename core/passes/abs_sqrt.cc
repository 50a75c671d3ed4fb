// canonicalize and specialize: Aesara's rules on abs (lifted over products so that x / abs(x)
// can become sgn(x), merged back in specialize) and PyTensor's sqrt(x**2) -> abs(x), which
// does not overflow where x**2 does. Each rule reads `before -> after`.
#include <vector>

#include "core/graph/constructors.h"
#include "core/ops/elemwise.h"
#include "core/ops/math.h"
#include "core/passes/passes.h"
#include "core/passes/rule_util.h"
#include "core/rewrite/pattern.h"

namespace kiln {
namespace {

using K = ScalarOpKind;

bool RealFloat(const Variable& v) { return IsFloat(v.tensor_type()->dtype()); }

// abs(a * b) -> abs(a) * abs(b); abs(a / b) -> abs(a) / abs(b); abs(-a) -> abs(a) (Aesara's
// local_abs_lift, which sees -a as -1 * a).
Replacement AbsLift(const FunctionGraph&, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kAbs) return std::nullopt;
  const VariablePtr& arg = node.inputs()[0];
  const std::optional<K> kind = ElemwiseKind(*arg);
  if (kind == K::kNeg) return ReplaceWith(abs(Var(arg->owner()->inputs()[0])), node);
  if (!RealFloat(*arg) || (kind != K::kMul && kind != K::kTrueDiv)) return std::nullopt;
  std::vector<Var> lifted;
  for (const VariablePtr& in : arg->owner()->inputs()) lifted.push_back(abs(Var(in)));
  return ReplaceWith(ApplyOp(Elemwise::Make(*kind), lifted), node);
}

// sqrt(x**2), sqrt(sqr(x)), sqrt(x * x) -> abs(x); sqrt(x)**2, sqr(sqrt(x)) -> x where x >= 0,
// else nan (PyTensor's local_sqrt_sqr; Aesara 2.9.4 has no such rule and overflows).
Replacement SqrtSqr(const FunctionGraph&, Apply& node) {
  if (!RealFloat(*node.output_ptr(0))) return std::nullopt;
  const VariablePtr& out = node.output(0);
  VariablePtr x;
  const m::Any any_x(&x);
  if (ElemwiseKind(*out) == K::kSqrt) {
    const VariablePtr& arg = node.inputs()[0];
    const bool of_square = m::Pow(any_x, m::Const(2)).Match(arg) || m::Sqr(any_x).Match(arg) ||
                           (ElemwiseKind(*arg) == K::kMul && arg->owner()->num_inputs() == 2 &&
                            arg->owner()->inputs()[0] == arg->owner()->inputs()[1] &&
                            (x = arg->owner()->inputs()[0]) != nullptr);
    return of_square ? ReplaceWith(abs(Var(x)), node) : std::nullopt;
  }
  if (!m::Pow(m::Sqrt(any_x), m::Const(2)).Match(out) && !m::Sqr(m::Sqrt(any_x)).Match(out)) {
    return std::nullopt;
  }
  const Var xv(x);
  const DType d = out->tensor_type()->dtype();
  return ReplaceWith(switch_(xv >= scalar_constant(0.0, d), xv, scalar_constant(NAN, d)), node);
}

// abs(a) * abs(b) * c -> abs(a * b) * c for constants c >= 0; abs(a) / abs(b) -> abs(a / b)
// (Aesara's local_abs_merge, undoing the lift where nothing used it).
Replacement AbsMerge(const FunctionGraph&, Apply& node) {
  const std::optional<K> kind = ElemwiseKind(*node.output_ptr(0));
  if ((kind != K::kMul && kind != K::kTrueDiv) || !RealFloat(*node.output_ptr(0))) {
    return std::nullopt;
  }
  std::vector<Var> inside;
  int n_abs = 0;
  for (const VariablePtr& in : node.inputs()) {
    if (ElemwiseKind(*in) == K::kAbs) {
      inside.emplace_back(in->owner()->inputs()[0]);
      ++n_abs;
    } else if (std::optional<double> c = ScalarConstantValue(*in);
               kind == K::kMul && in->is_constant() && c && *c >= 0) {
      inside.emplace_back(in);
    } else {
      return std::nullopt;
    }
  }
  if (n_abs < 2) return std::nullopt;
  return ReplaceWith(abs(ApplyOp(Elemwise::Make(*kind), inside)), node);
}

}  // namespace

std::vector<RewriteRule> AbsSqrtRules(const std::string& phase) {
  if (phase == "specialize") {
    return {ElemwiseRule("local_abs_merge", phase, {K::kMul, K::kTrueDiv}, AbsMerge)};
  }
  return {ElemwiseRule("local_abs_lift", phase, {K::kAbs}, AbsLift),
          ElemwiseRule("local_sqrt_sqr", phase, {K::kSqrt, K::kPow, K::kSqr}, SqrtSqr)};
}

}  // namespace kiln
