// stabilize (and log_diff_exp, specialize): Aesara's rules for log1p of negated sigmoids and exponentials, log of sums and
// differences of exponentials, and the erf/erfc complements. Each rule reads `before -> after`.
#include <vector>

#include "core/graph/constructors.h"
#include "core/ops/elemwise.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/passes/passes.h"
#include "core/passes/rule_util.h"
#include "core/rewrite/pattern.h"

namespace kiln {
namespace {

using K = ScalarOpKind;

// The single input of the Elemwise{kind} computing v, or null.
const VariablePtr* UnaryArg(const VariablePtr& v, K kind) {
  return ElemwiseKind(*v) == kind ? &v->owner()->inputs()[0] : nullptr;
}

// log(1 - t) -> log1p(-t); log1p(-sigmoid(x)) -> -softplus(x); log1p(-exp(x)) -> log1mexp(x).
Replacement Log1pNeg(const FunctionGraph&, Apply& node) {
  const std::optional<K> kind = ElemwiseKind(*node.output_ptr(0));
  const VariablePtr& arg = node.inputs()[0];
  VariablePtr t;
  if (kind == K::kLog && m::Sub(m::Const(1), m::Any(&t)).Match(arg)) {
    return ReplaceWith(log1p(Negate(Var(t))), node);
  }
  if (kind != K::kLog1p) return std::nullopt;
  const VariablePtr* negated = UnaryArg(arg, K::kNeg);
  if (negated == nullptr) return std::nullopt;
  if (const VariablePtr* x = UnaryArg(*negated, K::kSigmoid)) {
    return ReplaceWith(-softplus(Var(*x)), node);
  }
  if (const VariablePtr* x = UnaryArg(*negated, K::kExp)) return ReplaceWith(log1mexp(Var(*x)), node);
  return std::nullopt;
}

// log(exp(a1) + ... + exp(an)) -> m + log(sum of switch(isinf(m), exp(m), exp(ai - m))) with m the
// largest ai (Aesara's local_log_add_exp): no term overflows, and an infinite m gives m.
Replacement LogAddExp(const FunctionGraph&, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kLog) return std::nullopt;
  const VariablePtr& sum = node.inputs()[0];
  if (ElemwiseKind(*sum) != K::kAdd) return std::nullopt;
  std::vector<Var> args;
  for (const VariablePtr& in : sum->owner()->inputs()) {
    const VariablePtr* a = UnaryArg(in, K::kExp);
    if (a == nullptr) return std::nullopt;
    args.emplace_back(*a);
  }
  Var mx = args[0];
  for (size_t i = 1; i < args.size(); ++i) mx = maximum(mx, args[i]);
  std::vector<Var> terms;
  for (const Var& a : args) terms.push_back(switch_(isinf(mx), exp(mx), exp(a - mx)));
  return ReplaceWith(mx + log(ApplyOp(Elemwise::Make(K::kAdd), terms)), node);
}

// log(exp(a) - exp(b)) -> a + log1mexp(b - a) (Aesara's log_diff_exp).
Replacement LogDiffExp(const FunctionGraph&, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kLog) return std::nullopt;
  VariablePtr a, b;
  if (!m::Sub(m::Exp(m::Any(&a)), m::Exp(m::Any(&b))).Match(node.inputs()[0])) return std::nullopt;
  if (b->owner() == nullptr) return std::nullopt;  // as Aesara: b computed, not an input
  return ReplaceWith(Var(a) + log1mexp(Var(b) - Var(a)), node);
}

// 1 + erf(x) -> erfc(-x); 1 - erf(x) -> erfc(x); erf(x) - 1 -> -erfc(x); 1 - erfc(x) -> erf(x);
// erfc(-x) - 1 -> erf(x). (erf(x) - 1 may have become erf(x) + -1.)
Replacement ErfComplements(const FunctionGraph&, Apply& node) {
  const VariablePtr out = node.output(0);
  const std::optional<K> kind = ElemwiseKind(*out);
  if (kind != K::kAdd && kind != K::kSub) return std::nullopt;
  if (node.num_inputs() != 2) return std::nullopt;
  const VariablePtr &l = node.inputs()[0], &r = node.inputs()[1];
  const std::optional<double> lc = ScalarConstantValue(*l), rc = ScalarConstantValue(*r);
  if (kind == K::kAdd) {
    const VariablePtr& other = lc ? r : l;
    const std::optional<double> c = lc ? lc : rc;
    const VariablePtr* x = UnaryArg(other, K::kErf);
    if (x == nullptr || !c) return std::nullopt;
    if (*c == 1) return ReplaceWith(erfc(Negate(Var(*x))), node);
    if (*c == -1) return ReplaceWith(-erfc(Var(*x)), node);
    return std::nullopt;
  }
  if (lc == 1.0) {
    if (const VariablePtr* x = UnaryArg(r, K::kErf)) return ReplaceWith(erfc(Var(*x)), node);
    if (const VariablePtr* x = UnaryArg(r, K::kErfc)) return ReplaceWith(erf(Var(*x)), node);
  }
  if (rc == 1.0) {
    if (const VariablePtr* x = UnaryArg(l, K::kErf)) return ReplaceWith(-erfc(Var(*x)), node);
    const VariablePtr* e = UnaryArg(l, K::kErfc);
    if (const VariablePtr* x = e ? UnaryArg(*e, K::kNeg) : nullptr) {
      return ReplaceWith(erf(Var(*x)), node);
    }
  }
  return std::nullopt;
}

RewriteRule Rule(std::string name, std::string phase,
                 std::function<Replacement(const FunctionGraph&, Apply&)> f) {
  return PhaseRule(std::move(name), std::move(phase), {OpKind::kElemwise}, std::move(f));
}

}  // namespace

std::vector<RewriteRule> LogErfRules() {
  return {Rule("local_log1p_neg", "stabilize", Log1pNeg),
          Rule("local_log_add_exp", "stabilize", LogAddExp),
          Rule("local_erf_complements", "stabilize", ErfComplements)};
}

RewriteRule LogDiffExpRule() { return Rule("log_diff_exp", "specialize", LogDiffExp); }

}  // namespace kiln
