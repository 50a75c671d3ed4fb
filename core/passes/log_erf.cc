// stabilize (and log_diff_exp, specialize): Aesara's rules for log1p of negated sigmoids and
// exponentials, log of sums and differences of exponentials, and the erf/erfc complements. Each
// rule reads `before -> after`.
#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
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
  if (const VariablePtr* x = UnaryArg(*negated, K::kExp))
    return ReplaceWith(log1mexp(Var(*x)), node);
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

// z for v = sqr(z), z**2 or z * z; else null.
VariablePtr SquareArg(const VariablePtr& v) {
  VariablePtr z;
  if (m::Sqr(m::Any(&z)).Match(v) || m::Pow(m::Any(&z), m::Const(2)).Match(v)) return z;
  if (ElemwiseKind(*v) == K::kMul && v->owner()->num_inputs() == 2 &&
      v->owner()->inputs()[0] == v->owner()->inputs()[1]) {
    return v->owner()->inputs()[0];
  }
  return nullptr;
}

// z for e = -z**2 in the forms gradients and users write: -sqr(z), -(z * z), (-z) * z,
// -1 * sqr(z), -1 * z * z; else null. z itself may be any expression (2 * x).
VariablePtr NegSquareArg(const VariablePtr& e) {
  if (const VariablePtr* s = UnaryArg(e, K::kNeg)) return SquareArg(*s);
  if (ElemwiseKind(*e) != K::kMul) return nullptr;
  const std::vector<VariablePtr>& in = e->owner()->inputs();
  const auto minus_one = [](const VariablePtr& v) { return ScalarConstantValue(*v) == -1.0; };
  if (in.size() == 2) {
    for (int i = 0; i < 2; ++i) {
      const VariablePtr* n = UnaryArg(in[i], K::kNeg);
      if (n != nullptr && *n == in[1 - i]) return in[1 - i];
      if (minus_one(in[i])) return SquareArg(in[1 - i]);
    }
  } else if (in.size() == 3) {
    for (int i = 0; i < 3; ++i) {
      const VariablePtr &a = in[(i + 1) % 3], &b = in[(i + 2) % 3];
      if (minus_one(in[i]) && a == b) return a;
    }
  }
  return nullptr;
}

// The factors of a product (sorted, sqr(u) and u**2 counted as u twice) and its coefficient, or
// nullopt past 64 nodes (an exponent of a gradient is small).
std::optional<std::pair<double, std::vector<const Variable*>>> SortedFactors(const VariablePtr& v) {
  std::optional<FlatProduct> p = FlattenProduct(v, 64);
  if (!p) return std::nullopt;
  std::vector<const Variable*> factors;
  for (const VariablePtr& f : p->factors) {
    if (VariablePtr z = SquareArg(f)) {
      factors.insert(factors.end(), {z.get(), z.get()});
    } else {
      factors.push_back(f.get());
    }
  }
  std::sort(factors.begin(), factors.end());
  return std::make_pair(p->coefficient, std::move(factors));
}

// True when e = -z**2 once both are flattened: -4 * x * x for z = 2 * x (the canonizer's form).
bool IsNegSquareOf(const VariablePtr& e, const VariablePtr& z) {
  const auto fe = SortedFactors(e), fz = SortedFactors(z);
  if (!fe || !fz || fe->first != -fz->first * fz->first) return false;
  std::vector<const Variable*> twice;
  for (const Variable* f : fz->second) twice.insert(twice.end(), {f, f});
  return fe->second == twice;  // both sorted
}

// A product/quotient tree's leaves above and below the line, and the parity of its negations.
struct Quotient {
  std::vector<VariablePtr> num, den;
  bool negated = false;
};

// The leaves of the product/quotient tree rooted at node (nullopt unless node is the root of
// one: rules on whole trees act once there, not on every subtree). Inner nodes used only inside
// the tree are flattened; with shared_budget > 0 shared ones too, giving up (nullopt) after that
// many nodes.
std::optional<Quotient> QuotientAtRoot(const FunctionGraph& fg, const Apply& node,
                                       int shared_budget = 0) {
  static constexpr std::initializer_list<K> kTree = {K::kMul, K::kTrueDiv, K::kReciprocal, K::kNeg};
  const std::optional<K> root_kind = ElemwiseKind(*node.output_ptr(0));
  if (!root_kind || std::find(kTree.begin(), kTree.end(), *root_kind) == kTree.end() ||
      InsideTree(fg, node, kTree)) {
    return std::nullopt;
  }
  Quotient q;
  std::vector<std::pair<VariablePtr, bool>> stack = {{node.output(0), true}};
  for (int visited = 0; !stack.empty(); ++visited) {
    if (shared_budget > 0 && visited == shared_budget) return std::nullopt;
    auto [v, above] = std::move(stack.back());
    stack.pop_back();
    const bool inner =
        v.get() == node.output_ptr(0) || shared_budget > 0 || fg.clients(v.get()).size() == 1;
    const std::optional<K> kind = inner ? ElemwiseKind(*v) : std::nullopt;
    const Apply* a = v->owner();
    if (kind == K::kMul) {
      for (const VariablePtr& in : a->inputs()) stack.emplace_back(in, above);
    } else if (kind == K::kTrueDiv) {
      stack.emplace_back(a->inputs()[0], above);
      stack.emplace_back(a->inputs()[1], !above);
    } else if (kind == K::kReciprocal) {
      stack.emplace_back(a->inputs()[0], !above);
    } else if (kind == K::kNeg) {
      q.negated = !q.negated;
      stack.emplace_back(a->inputs()[0], above);
    } else {
      (above ? q.num : q.den).push_back(std::move(v));
    }
  }
  return q;
}

// The product of factors (1 when there are none).
Var ProductOf(const std::vector<VariablePtr>& factors, DType dtype) {
  if (factors.empty()) return scalar_constant(1.0, dtype);
  if (factors.size() == 1) return Var(factors[0]);
  return ApplyOp(Elemwise::Make(K::kMul), std::vector<Var>(factors.begin(), factors.end()));
}

// y * exp(-x**2) / (w * erfc(x)) -> y / (w * erfcx(x)) anywhere in a product tree: the gradient
// of log(erfc(x)), whose quotient is 0 / 0 from x = 27 on (Aesara's local_grad_log_erfc_neg,
// which switches to an asymptotic series there; erfcx(x) = exp(x**2) * erfc(x) is exact).
Replacement GradLogErfc(const FunctionGraph& fg, Apply& node) {
  std::optional<Quotient> q = QuotientAtRoot(fg, node);
  if (!q) return std::nullopt;
  auto& [num, den, negated] = *q;
  absl::flat_hash_map<const Variable*, size_t> erfc_of;  // x -> position of erfc(x) in den
  for (size_t j = 0; j < den.size(); ++j) {
    if (const VariablePtr* x = UnaryArg(den[j], K::kErfc)) erfc_of.try_emplace(x->get(), j);
  }
  for (size_t i = 0; i < num.size() && !erfc_of.empty(); ++i) {
    const VariablePtr* e = UnaryArg(num[i], K::kExp);
    if (e == nullptr) continue;
    const VariablePtr z = NegSquareArg(*e);
    auto it = z != nullptr ? erfc_of.find(z.get()) : erfc_of.end();
    if (it == erfc_of.end() && erfc_of.size() <= 8) {  // -4 * x * x against erfc(2 * x)
      for (it = erfc_of.begin(); it != erfc_of.end(); ++it) {
        if (IsNegSquareOf(*e, den[it->second]->owner()->inputs()[0])) break;
      }
    }
    if (it == erfc_of.end()) continue;
    const VariablePtr x = den[it->second]->owner()->inputs()[0];
    den[it->second] = erfcx(Var(x)).ptr();
    num.erase(num.begin() + static_cast<std::ptrdiff_t>(i));
    const DType dtype = node.output_ptr(0)->tensor_type()->dtype();
    const Var q = true_div(ProductOf(num, dtype), ProductOf(den, dtype));
    return ReplaceWith(negated ? -q : q, node);
  }
  return std::nullopt;
}

// exp(a) / (exp(a) + exp(b)) -> sigmoid(a - b); exp(a) / (exp(a) - exp(b)) -> -1 / expm1(b - a);
// exp(b) / (exp(a) - exp(b)) -> 1 / expm1(a - b), anywhere in a product tree: the gradients of
// log(exp(a) + exp(b)) and log(exp(a) - exp(b)), which are inf / inf where exp overflows (from
// 89 in float32, 710 in float64). Kiln's own rule: Aesara keeps these quotients.
Replacement ExpOverSumOfExps(const FunctionGraph& fg, Apply& node) {
  // Through shared quotients too: a gradient divides both its terms by one shared 1 / S.
  std::optional<Quotient> q = QuotientAtRoot(fg, node, /*shared_budget=*/64);
  if (!q) return std::nullopt;
  auto& [num, den, negated] = *q;
  // For each divisor exp(p) +- exp(q): p and q -> (its position, whether it is p).
  absl::flat_hash_map<const Variable*, std::pair<size_t, bool>> term_of;
  for (size_t j = 0; j < den.size(); ++j) {
    const std::optional<K> k = ElemwiseKind(*den[j]);
    if ((k != K::kAdd && k != K::kSub) || den[j]->owner()->num_inputs() != 2) continue;
    const VariablePtr* p = UnaryArg(den[j]->owner()->inputs()[0], K::kExp);
    const VariablePtr* q = UnaryArg(den[j]->owner()->inputs()[1], K::kExp);
    if (p == nullptr || q == nullptr) continue;
    term_of.try_emplace(p->get(), j, true);
    term_of.try_emplace(q->get(), j, false);
  }
  for (size_t i = 0; i < num.size() && !term_of.empty(); ++i) {
    const VariablePtr* a = UnaryArg(num[i], K::kExp);
    const auto it = a != nullptr ? term_of.find(a->get()) : term_of.end();
    if (it == term_of.end()) continue;
    const auto [j, is_p] = it->second;
    const Apply& d = *den[j]->owner();
    const Var p(d.inputs()[0]->owner()->inputs()[0]), q(d.inputs()[1]->owner()->inputs()[0]);
    num.erase(num.begin() + static_cast<std::ptrdiff_t>(i));
    den.erase(den.begin() + static_cast<std::ptrdiff_t>(j));
    const DType dtype = node.output_ptr(0)->tensor_type()->dtype();
    Var factor;
    if (ElemwiseKind(*d.output_ptr(0)) == K::kAdd) {
      factor = is_p ? sigmoid(p - q) : sigmoid(q - p);
    } else {
      factor = is_p ? -reciprocal(expm1(q - p)) : reciprocal(expm1(p - q));
    }
    num.push_back(factor.ptr());
    const Var quotient = den.empty() ? ProductOf(num, dtype)
                                     : true_div(ProductOf(num, dtype), ProductOf(den, dtype));
    return ReplaceWith(negated ? -quotient : quotient, node);
  }
  return std::nullopt;
}

// The roots QuotientAtRoot accepts.
const std::vector<K> kQuotientRoots = {K::kMul, K::kTrueDiv, K::kReciprocal, K::kNeg};

}  // namespace

std::vector<RewriteRule> LogErfRules() {
  return {
      ElemwiseRule("local_log1p_neg", "stabilize", {K::kLog, K::kLog1p}, Log1pNeg),
      ElemwiseRule("local_log_add_exp", "stabilize", {K::kLog}, LogAddExp),
      ElemwiseRule("local_erf_complements", "stabilize", {K::kAdd, K::kSub}, ErfComplements),
      ElemwiseRule("local_grad_log_erfc_neg", "stabilize", kQuotientRoots, GradLogErfc),
      ElemwiseRule("local_exp_over_sum_of_exps", "stabilize", kQuotientRoots, ExpOverSumOfExps)};
}

RewriteRule LogDiffExpRule() {
  return ElemwiseRule("log_diff_exp", "specialize", {K::kLog}, LogDiffExp);
}

}  // namespace kiln
