// stabilize: forms that lose precision or overflow replaced by stable ones. Each rule reads
// `before -> after`.
#include <cmath>
#include <numbers>

#include "core/graph/constructors.h"
#include "core/ops/elemwise.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/reduce.h"
#include "core/passes/passes.h"
#include "core/passes/rule_util.h"
#include "core/rewrite/pattern.h"

namespace kiln {
namespace {

using K = ScalarOpKind;

// The operands of the add computing v other than one constant equal to `value`, or nullopt.
std::optional<std::vector<Var>> AddWithConstant(const VariablePtr& v, double value) {
  if (ElemwiseKind(*v) != K::kAdd) return std::nullopt;
  std::vector<Var> rest;
  bool found = false;
  for (const VariablePtr& in : v->owner()->inputs()) {
    if (!found && ScalarConstantValue(*in) == value) {
      found = true;
    } else {
      rest.push_back(in);
    }
  }
  if (!found || rest.empty()) return std::nullopt;
  return rest;
}

Var Sum(const std::vector<Var>& terms) {
  return terms.size() == 1 ? terms[0] : ApplyOp(Elemwise::Make(K::kAdd), terms);
}

// log(1 + x) -> log1p(x); log(1 + exp(x)) -> softplus(x); log1p(exp(x)) -> softplus(x).
Replacement Log1p(const FunctionGraph&, Apply& node) {
  const std::optional<K> kind = ElemwiseKind(*node.output_ptr(0));
  const VariablePtr& arg = node.inputs()[0];
  if (kind == K::kLog1p && ElemwiseKind(*arg) == K::kExp) {
    return ReplaceWith(softplus(Var(arg->owner()->inputs()[0])), node);
  }
  if (kind != K::kLog) return std::nullopt;
  const std::optional<std::vector<Var>> rest = AddWithConstant(arg, 1.0);
  if (!rest) return std::nullopt;
  if (rest->size() == 1 && ElemwiseKind(*(*rest)[0]) == K::kExp) {
    return ReplaceWith(softplus(Var((*rest)[0]->owner()->inputs()[0])), node);
  }
  return ReplaceWith(log1p(Sum(*rest)), node);
}

// exp(x) - 1 -> expm1(x); 1 - sigmoid(x), 1 + -sigmoid(x) -> sigmoid(-x).
Replacement SubRules(const FunctionGraph&, Apply& node) {
  VariablePtr x;
  if (m::Sub(m::Exp(m::Any(&x)), m::Const(1)).Match(node.output(0))) {
    return ReplaceWith(expm1(Var(x)), node);
  }
  if (m::Sub(m::Const(1), m::Sigmoid(m::Any(&x))).Match(node.output(0)) ||
      m::Add(m::Const(1), m::Neg(m::Sigmoid(m::Any(&x)))).Match(node.output(0))) {
    return ReplaceWith(sigmoid(Negate(Var(x))), node);
  }
  return std::nullopt;
}

// sigmoid(x) - sigmoid(x)**2 -> sigmoid(x) * sigmoid(-x): the derivative of sigmoid as a
// gradient leaves it, which cancels to 0 where sigmoid(x) rounds to 1 (from x = 17 in float32).
// Kiln's own rule: Aesara's graphs keep 1 - sigmoid(x) as a factor there.
Replacement SigmoidMinusSquare(const FunctionGraph&, Apply& node) {
  VariablePtr s, a, b, x;
  const VariablePtr out = node.output(0);
  const bool minus_square =
      (m::Sub(m::Any(&s), m::Mul(m::Any(&a), m::Any(&b))).Match(out) ||
       m::Add(m::Any(&s), m::Neg(m::Mul(m::Any(&a), m::Any(&b)))).Match(out)) &&
      m::Sigmoid(m::Any(&x)).Match(s);
  // The three sigmoids may be twins of one another that merge has not joined yet.
  const auto same_sigmoid = [&](const VariablePtr& v) {
    return ElemwiseKind(*v) == K::kSigmoid && v->owner()->inputs()[0] == x;
  };
  if (!minus_square || !same_sigmoid(a) || !same_sigmoid(b)) return std::nullopt;
  return ReplaceWith(Var(s) * sigmoid(Negate(Var(x))), node);
}

// log(sigmoid(x)) -> -softplus(-x); log(softmax(x)) -> log_softmax(x);
// log(erfc(x)) -> log(erfcx(x)) - x^2 for x > 0 (finite far into the tail), log1p(-erf(x)) else.
Replacement LogRules(const FunctionGraph&, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kLog) return std::nullopt;
  const VariablePtr& arg = node.inputs()[0];
  VariablePtr x;
  if (m::Sigmoid(m::Any(&x)).Match(arg)) return ReplaceWith(-softplus(Negate(Var(x))), node);
  if (m::Erfc(m::Any(&x)).Match(arg)) {
    const Var v(x);
    const DType d = v.dtype();
    return ReplaceWith(switch_(v > scalar_constant(0.0, d), log(erfcx(v)) - v * v, log1p(-erf(v))),
                       node);
  }
  if (arg->owner() != nullptr && arg->owner()->op().kind() == OpKind::kSoftmax) {
    const auto& op = static_cast<const AxisOp&>(arg->owner()->op());
    return ReplaceWith(log_softmax(Var(arg->owner()->inputs()[0]), op.axis()), node);
  }
  // log(sum(exp(x))) -> m + log(sum(exp(x - m))) with m = max(x) over the same axes, unless x
  // is already shifted by such a maximum.
  if (arg->owner() != nullptr && arg->owner()->op().kind() == OpKind::kCAReduce) {
    const auto& reduce = static_cast<const CAReduce&>(arg->owner()->op());
    const VariablePtr& e = arg->owner()->inputs()[0];
    if (reduce.reduce() != ReduceKind::kSum || ElemwiseKind(*e) != K::kExp) return std::nullopt;
    const VariablePtr& inner = e->owner()->inputs()[0];
    if (ElemwiseKind(*inner) == K::kSub) {
      const Variable& shift = *inner->owner()->inputs()[1];
      const Apply* s = shift.owner();
      if (s != nullptr && s->op().kind() == OpKind::kDimShuffle) s = s->inputs()[0]->owner();
      if (s != nullptr && s->op().kind() == OpKind::kCAReduce) return std::nullopt;
    }
    // (As in Aesara, the max makes a reduction over an empty axis an error where the plain sum
    // gave -inf.)
    const Var xv(inner);
    const Axes axes = reduce.axis() ? Axes(*reduce.axis()) : Axes();
    const Var mx = max(xv, axes);
    // Where the maximum is infinite the sum is dominated by it (or empty of finite terms).
    return ReplaceWith(
        switch_(isinf(mx), mx, log(sum(exp(xv - max(xv, axes, /*keepdims=*/true)), axes)) + mx),
        node);
  }
  return std::nullopt;
}

RewriteRule Rule(std::string name, std::function<Replacement(const FunctionGraph&, Apply&)> f) {
  return PhaseRule(std::move(name), "stabilize", {OpKind::kElemwise}, std::move(f));
}

}  // namespace

std::vector<RewriteRule> StabilizeRules() {
  std::vector<RewriteRule> rules = {Rule("local_log1p", Log1p),
                                    Rule("local_expm1_and_sigmoid_complement", SubRules),
                                    Rule("local_log_stable", LogRules),
                                    Rule("local_sigmoid_minus_square", SigmoidMinusSquare)};
  for (RewriteRule& r : SigmoidRules()) rules.push_back(std::move(r));
  for (RewriteRule& r : LogErfRules()) rules.push_back(std::move(r));
  // The mul/div canonizer again, so that the sigmoids the rules above make cancel as the
  // exponentials they replace would have: sigmoid(-x) * sigmoid(x) / sigmoid(-x) -> sigmoid(x) in
  // the gradient of log(1 - sigmoid) (Aesara gets there with its greedy distributor).
  rules.push_back(MulDivCanonizerRule());
  rules.push_back(GreedyDistributorRule());
  return rules;
}

}  // namespace kiln
