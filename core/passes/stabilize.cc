// stabilize: forms that lose precision or overflow replaced by stable ones. Each rule reads
// `before -> after`.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/graph/constructors.h"
#include "core/ops/elemwise.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/reduce.h"
#include "core/passes/linalg_rules.h"
#include "core/passes/passes.h"
#include "core/passes/rule_util.h"
#include "core/rewrite/pattern.h"
#include "core/ops/dimshuffle.h"

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

// A term of a sum as a signed product: its constant coefficient and its other factors, each
// keyed so that twin sigmoids (sigmoid of one variable, built twice) are equal; sorted.
struct Factor {
  VariablePtr key;  // the variable, or a sigmoid's argument without its negation
  bool sigmoid = false;
  bool negated = false;  // sigmoid(-key): twin negations of one variable compare equal
  VariablePtr minus;     // sigmoid(key - minus): p - q and q - p compare as negations
  VariablePtr arg;       // the sigmoid's argument as written
  auto Tie() const { return std::make_tuple(key.get(), sigmoid, negated, minus.get()); }
  bool operator<(const Factor& o) const { return Tie() < o.Tie(); }
  bool operator==(const Factor& o) const { return Tie() == o.Tie(); }
};
struct SignedProduct {
  double coefficient = 1;
  std::vector<Factor> factors;
};

// v as a signed product, or nullopt past 16 nodes (the rule wants a gradient's small terms).
std::optional<SignedProduct> AsSignedProduct(const VariablePtr& v) {
  const std::optional<FlatProduct> flat = FlattenProduct(v, 16);
  if (!flat) return std::nullopt;
  SignedProduct p{flat->coefficient, {}};
  for (const VariablePtr& u : flat->factors) {
    if (ElemwiseKind(*u) != K::kSigmoid) {
      p.factors.push_back({u, false});
      continue;
    }
    const VariablePtr& arg = u->owner()->inputs()[0];
    const std::optional<K> arg_kind = ElemwiseKind(*arg);
    if (arg_kind == K::kNeg) {
      p.factors.push_back({arg->owner()->inputs()[0], true, true, nullptr, arg});
    } else if (arg_kind == K::kSub) {
      const VariablePtr &a = arg->owner()->inputs()[0], &b = arg->owner()->inputs()[1];
      p.factors.push_back(a.get() < b.get() ? Factor{a, true, false, b, arg}
                                            : Factor{b, true, true, a, arg});
    } else {
      p.factors.push_back({arg, true, false, nullptr, arg});
    }
  }
  std::sort(p.factors.begin(), p.factors.end());
  return p;
}

// a - a * sigmoid(t) -> a * sigmoid(-t) for a product a (s - s * s, y * s - y * s * s, ...): the
// derivative of sigmoid as gradients leave it, 0 where sigmoid(t) rounds to 1 (from t = 17 in
// float32); and c * sigmoid(t) - c * sigmoid(-t) -> c * tanh(t / 2). Kiln's own rules: Aesara's
// graphs keep 1 - sigmoid(t) as a factor there.
Replacement ProductMinusSigmoidMultiple(const FunctionGraph&, Apply& node) {
  const std::optional<K> kind = ElemwiseKind(*node.output_ptr(0));
  if ((kind != K::kAdd && kind != K::kSub) || node.num_inputs() != 2) return std::nullopt;
  std::optional<SignedProduct> terms[2] = {AsSignedProduct(node.inputs()[0]),
                                           AsSignedProduct(node.inputs()[1])};
  if (!terms[0] || !terms[1]) return std::nullopt;
  if (kind == K::kSub) terms[1]->coefficient = -terms[1]->coefficient;
  // c * sigmoid(t) - c * sigmoid(-t) -> c * tanh(t / 2): the difference cancels near t = 0.
  const std::vector<Factor>&f0 = terms[0]->factors, &f1 = terms[1]->factors;
  if (f0.size() == 1 && f1.size() == 1 && f0[0].sigmoid && f1[0].sigmoid &&
      f0[0].key == f1[0].key && f0[0].minus == f1[0].minus && f0[0].negated != f1[0].negated &&
      terms[0]->coefficient == -terms[1]->coefficient) {
    // c * (sigmoid(t) - sigmoid(-t)) with t the first term's argument as written.
    const DType dtype = node.output_ptr(0)->tensor_type()->dtype();
    return ReplaceWith(scalar_constant(terms[0]->coefficient, dtype) * tanh(Var(f0[0].arg) * 0.5),
                       node);
  }
  for (int i = 0; i < 2; ++i) {
    const SignedProduct &a = *terms[i], &b = *terms[1 - i];
    if (b.coefficient != -a.coefficient || b.factors.size() != a.factors.size() + 1) continue;
    // b's factors are a's and one sigmoid(t): find it where the sorted lists first differ.
    size_t k = 0;
    while (k < a.factors.size() && a.factors[k] == b.factors[k]) ++k;
    if (!b.factors[k].sigmoid ||
        !std::equal(a.factors.begin() + k, a.factors.end(), b.factors.begin() + k + 1)) {
      continue;
    }
    const VariablePtr& term = node.inputs()[i];  // a itself, with its sign in the sum
    const Var a_signed = kind == K::kSub && i == 1 ? -Var(term) : Var(term);
    const Factor& f = b.factors[k];  // sigmoid(t): a * sigmoid(-t)
    return ReplaceWith(a_signed * sigmoid(Negate(Var(f.arg))), node);
  }
  return std::nullopt;
}

// The argument of a log node; null for any other node.
const VariablePtr* LogArgument(const Apply& node) {
  return ElemwiseKind(*node.output_ptr(0)) == K::kLog ? &node.inputs()[0] : nullptr;
}

// log(erfc(x)) -> switch(x > 0, log(erfcx(x)) - x^2, log1p(-erf(x)))   (finite far into the
// tail, where Aesara's local_log_erfc switches to an asymptotic series)
Replacement LogErfc(const FunctionGraph&, Apply& node) {
  const VariablePtr* arg = LogArgument(node);
  VariablePtr x;
  if (arg == nullptr || !m::Erfc(m::Any(&x)).Match(*arg)) return std::nullopt;
  const Var v(x);
  const DType d = v.dtype();
  return ReplaceWith(switch_(v > scalar_constant(0.0, d), log(erfcx(v)) - v * v, log1p(-erf(v))),
                     node);
}

// The node computing a log's argument when its op is a T; null otherwise.
template <typename T>
const Apply* LogArgumentBy(const Apply& node) {
  const VariablePtr* arg = LogArgument(node);
  if (arg == nullptr || (*arg)->owner() == nullptr) return nullptr;
  return (*arg)->owner()->op().Is<T>() ? (*arg)->owner() : nullptr;
}

// log(sum(exp(x))) -> m + log(sum(exp(x - m))) with m = max(x) over the same axes, unless x is
// already shifted by such a maximum   (Aesara's local_log_sum_exp)
Replacement LogSumExp(const FunctionGraph&, Apply& node) {
  const Apply* sum_node = LogArgumentBy<CAReduce>(node);
  if (sum_node == nullptr) return std::nullopt;
  const auto& reduce = static_cast<const CAReduce&>(sum_node->op());
  const VariablePtr& e = sum_node->inputs()[0];
  if (reduce.reduce() != ReduceKind::kSum || ElemwiseKind(*e) != K::kExp) return std::nullopt;
  const VariablePtr& inner = e->owner()->inputs()[0];
  if (ElemwiseKind(*inner) == K::kSub) {
    const Variable& shift = *inner->owner()->inputs()[1];
    const Apply* s = shift.owner();
    if (s != nullptr && s->op().Is<DimShuffle>()) s = s->inputs()[0]->owner();
    if (s != nullptr && s->op().Is<CAReduce>()) return std::nullopt;
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

RewriteRule Rule(std::string name, std::vector<K> scalar_ops,
                 std::function<Replacement(const FunctionGraph&, Apply&)> f) {
  return ElemwiseRule(std::move(name), "stabilize", std::move(scalar_ops), std::move(f));
}

}  // namespace

std::vector<RewriteRule> StabilizeRules() {
  const std::string phase = "stabilize";
  std::vector<RewriteRule> rules = {
      Rule("local_log1p", {K::kLog, K::kLog1p}, Log1p),
      // exp(x) - 1 -> expm1(x)   (Aesara's local_expm1)
      PatternRule(
          "local_expm1", phase, [](Bindings& b) { return m::Sub(m::Exp(m::Any(&b.x)), m::Const(1)); },
          [](const Bindings& b) { return expm1(Var(b.x)); }),
      // 1 - exp(x), 1 + -exp(x) -> -expm1(x)   (Kiln's own)
      PatternRule(
          "local_one_minus_exp", phase,
          [](Bindings& b) {
            return m::AnyOf(m::Sub(m::Const(1), m::Exp(m::Any(&b.x))),
                            m::Add(m::Const(1), m::Neg(m::Exp(m::Any(&b.x)))));
          },
          [](const Bindings& b) { return -expm1(Var(b.x)); }),
      // 1 - sigmoid(x), 1 + -sigmoid(x) -> sigmoid(-x)   (Aesara's local_1msigmoid)
      PatternRule(
          "local_1msigmoid", phase,
          [](Bindings& b) {
            return m::AnyOf(m::Sub(m::Const(1), m::Sigmoid(m::Any(&b.x))),
                            m::Add(m::Const(1), m::Neg(m::Sigmoid(m::Any(&b.x)))));
          },
          [](const Bindings& b) { return sigmoid(Negate(Var(b.x))); }),
      // log(sigmoid(x)) -> -softplus(-x)   (Aesara's logsigm_to_softplus)
      PatternRule(
          "logsigm_to_softplus", phase, [](Bindings& b) { return m::Log(m::Sigmoid(m::Any(&b.x))); },
          [](const Bindings& b) { return -softplus(Negate(Var(b.x))); }),
      // log(-expm1(x)) -> log1mexp(x)   (Kiln's own)
      PatternRule(
          "local_log1mexp", phase, [](Bindings& b) { return m::Log(m::Neg(m::Expm1(m::Any(&b.x)))); },
          [](const Bindings& b) { return log1mexp(Var(b.x)); }),
      Rule("local_log_erfc", {K::kLog}, LogErfc),
      // log(softmax(x)) -> log_softmax(x)   (Aesara's local_logsoftmax)
      PatternRule(
          "local_logsoftmax", phase,
          [](Bindings& b) { return m::Log(m::Op<Softmax>(&b.node, m::Any(&b.x))); },
          [](const Bindings& b) { return log_softmax(Var(b.x), b.node->op().As<Softmax>()->axis()); }),
      Rule("local_log_sum_exp", {K::kLog}, LogSumExp),
      Rule("local_sigmoid_complement_factor", {K::kAdd, K::kSub}, ProductMinusSigmoidMultiple)};
  for (RewriteRule& r : SigmoidRules()) rules.push_back(std::move(r));
  for (RewriteRule& r : LogErfRules()) rules.push_back(std::move(r));
  for (RewriteRule& r : LinalgRules(phase)) rules.push_back(std::move(r));
  // The mul/div canonizer again, so that the sigmoids the rules above make cancel as the
  // exponentials they replace would have: sigmoid(-x) * sigmoid(x) / sigmoid(-x) -> sigmoid(x) in
  // the gradient of log(1 - sigmoid) (Aesara gets there with its greedy distributor).
  rules.push_back(MulDivCanonizerRule());
  rules.push_back(GreedyDistributorRule());
  return rules;
}

}  // namespace kiln
