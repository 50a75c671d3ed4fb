// stabilize: Aesara's sigmoid recognition in quotients and products of exponentials, so that
// 1 / (1 + exp(-t)) and its gradient become sigmoids, which stay finite where exp overflows.
#include <cmath>
#include <deque>

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

// A factor of a product with its sign taken out: -exp(t) is {negated, exp(t)}.
struct Factor {
  bool negated = false;
  VariablePtr value;
};

// x for neg(x) or for a product of -1 and x (Aesara's is_neg), else null.
Var Negated(const VariablePtr& v) {
  const std::optional<K> kind = ElemwiseKind(*v);
  if (kind == K::kNeg) return Var(v->owner()->inputs()[0]);
  if (kind != K::kMul || v->owner()->num_inputs() < 2) return Var();
  const std::vector<VariablePtr>& in = v->owner()->inputs();
  for (size_t i = 0; i < in.size(); ++i) {
    if (ScalarConstantValue(*in[i]) != -1.0) continue;
    std::vector<Var> rest;
    for (size_t j = 0; j < in.size(); ++j) {
      if (j != i) rest.emplace_back(in[j]);
    }
    return rest.size() == 1 ? rest[0] : ApplyOp(Elemwise::Make(K::kMul), rest);
  }
  return Var();
}

Factor SignAndValue(const VariablePtr& v) {
  if (Var x = Negated(v); x.ok()) return {true, x.ptr()};
  return {false, v};
}

// True when node's product is only a factor of a larger product (through negations): the rule
// acts once, at the root, rather than on every subtree (which would be quadratic).
bool InsideProduct(const FunctionGraph& fg, const Apply& node) {
  const Variable* v = node.output_ptr(0);
  while (true) {
    const std::vector<FunctionGraph::Client>& uses = fg.clients(v);
    if (uses.size() != 1 || uses[0].node == nullptr) return false;
    v = uses[0].node->output_ptr(0);
    const std::optional<K> kind = ElemwiseKind(*v);
    if (kind == K::kMul) return true;
    if (kind != K::kNeg) return false;
  }
}

// The leaves of the product tree at v (nested products and negations used only inside it
// flattened, the negations taken out as signs toggled into *negated). Iterative: trees may be deep.
std::vector<VariablePtr> ProductLeaves(const FunctionGraph& fg, const VariablePtr& v,
                                       bool* negated) {
  std::vector<VariablePtr> leaves, stack = {v};
  while (!stack.empty()) {
    VariablePtr u = std::move(stack.back());
    stack.pop_back();
    const bool inner = u == v || fg.clients(u.get()).size() == 1;
    const std::optional<K> kind = inner ? ElemwiseKind(*u) : std::nullopt;
    if (kind == K::kMul) {
      const std::vector<VariablePtr>& in = u->owner()->inputs();
      stack.insert(stack.end(), in.rbegin(), in.rend());  // left to right
    } else if (kind == K::kNeg) {
      *negated = !*negated;
      stack.push_back(u->owner()->inputs()[0]);
    } else {
      leaves.push_back(std::move(u));
    }
  }
  return leaves;
}

// The factors of v (its inputs when a product), each with its sign taken out.
std::vector<Factor> Factors(const VariablePtr& v) {
  std::vector<Factor> out;
  if (ElemwiseKind(*v) == K::kMul) {
    for (const VariablePtr& in : v->owner()->inputs()) out.push_back(SignAndValue(in));
  } else {
    out.push_back(SignAndValue(v));
  }
  return out;
}

// t for exp(t), else null.
const VariablePtr* ExpArg(const VariablePtr& v) {
  return ElemwiseKind(*v) == K::kExp ? &v->owner()->inputs()[0] : nullptr;
}

// t for c + exp(t) with constants c summing to 1 (Aesara's is_1pexp), else null.
const VariablePtr* OnePlusExpArg(const VariablePtr& v) {
  if (ElemwiseKind(*v) != K::kAdd) return nullptr;
  double constants = 0;
  int found = 0;
  const VariablePtr* arg = nullptr;
  for (const VariablePtr& in : v->owner()->inputs()) {
    if (std::optional<double> c = ScalarConstantValue(*in); c && in->is_constant()) {
      constants += *c;
      ++found;
    } else if (arg != nullptr || (arg = ExpArg(in)) == nullptr) {
      return nullptr;  // a second non-constant, or one that is not exp
    }
  }
  return arg != nullptr && found > 0 && std::abs(constants - 1) < 1e-8 ? arg : nullptr;
}

Var Product(const std::vector<Var>& factors, bool negated) {
  Var p = factors.size() == 1 ? factors[0] : ApplyOp(Elemwise::Make(K::kMul), factors);
  return negated ? -p : p;
}

// exp(t) / (1 + exp(t)) -> sigmoid(t); c / (1 + exp(t)) -> c * sigmoid(-t). Each factor 1 + exp(t)
// of the denominator becomes sigmoid(t) when exp(t) is a factor of the numerator (consumed),
// else sigmoid(-t); a constant factor 1 left in the numerator is dropped.
Replacement ExpOver1PlusExp(const FunctionGraph&, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kTrueDiv) return std::nullopt;
  bool negated = false;
  std::vector<Factor> num = Factors(node.inputs()[0]);
  // The numerator's factors exp(t), by t (the earliest first).
  absl::flat_hash_map<const Variable*, std::deque<size_t>> exps;
  for (size_t i = 0; i < num.size(); ++i) {
    if (const VariablePtr* a = ExpArg(num[i].value)) exps[a->get()].push_back(i);
  }
  std::vector<bool> consumed(num.size(), false);
  std::vector<Var> sigmoids, rest_den;
  for (const Factor& f : Factors(node.inputs()[1])) {
    const VariablePtr* t = OnePlusExpArg(f.value);
    negated ^= f.negated;
    if (t == nullptr) {
      rest_den.emplace_back(f.value);
      continue;
    }
    auto e = exps.find(t->get());
    if (e != exps.end() && !e->second.empty()) {
      const size_t i = e->second.front();
      e->second.pop_front();
      consumed[i] = true;
      negated ^= num[i].negated;
      sigmoids.push_back(sigmoid(Var(*t)));
    } else {
      sigmoids.push_back(sigmoid(Negate(Var(*t))));
    }
  }
  if (sigmoids.empty()) return std::nullopt;
  std::vector<Var> new_num = sigmoids;
  for (size_t i = 0; i < num.size(); ++i) {
    if (consumed[i]) continue;
    negated ^= num[i].negated;
    if (ScalarConstantValue(*num[i].value) != 1.0) new_num.emplace_back(num[i].value);
  }
  Var out = Product(new_num, negated);
  if (!rest_den.empty()) out = out / Product(rest_den, false);
  return ReplaceWith(out, node);
}

// exp(t) * sigmoid(-t) -> sigmoid(t); exp(-t) * sigmoid(t) -> sigmoid(-t), among the leaves of a
// product tree (Aesara's local_sigm_times_exp; nested products become one): a rewritten sigmoid
// may pair again with a later factor.
Replacement SigmoidTimesExp(const FunctionGraph& fg, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kMul) return std::nullopt;
  if (InsideProduct(fg, node)) return std::nullopt;  // the root does the whole tree
  bool negated = false;
  std::vector<Factor> factors;
  for (VariablePtr& leaf : ProductLeaves(fg, node.output(0), &negated)) {
    factors.push_back(SignAndValue(leaf));
  }
  // Earlier factors waiting for a partner, by the argument t of exp(t), exp(-t), sigmoid(t),
  // sigmoid(-t): a factor index each.
  enum Form { kExp, kExpNeg, kSigm, kSigmNeg };
  absl::flat_hash_map<const Variable*, std::deque<size_t>> waiting[4];
  auto take = [&](Form form, const Variable* t) -> std::optional<size_t> {
    auto it = waiting[form].find(t);
    if (it == waiting[form].end() || it->second.empty()) return std::nullopt;
    const size_t i = it->second.front();  // the earliest waits longest, as in Aesara
    it->second.pop_front();
    return i;
  };
  std::vector<Var> held;  // arguments built by Negated, alive while `waiting` points to them
  bool changed = false;
  for (size_t i = 0; i < factors.size(); ++i) {
    const VariablePtr v = factors[i].value;
    const std::optional<K> kind = ElemwiseKind(*v);
    if (kind != K::kExp && kind != K::kSigmoid) continue;
    const VariablePtr& a = v->owner()->inputs()[0];
    const Var b = Negated(a);
    const bool neg_arg = b.ok();
    if (neg_arg) held.push_back(b);
    const Variable* t = neg_arg ? b.ptr().get() : a.get();
    // The partner of exp(t) is sigmoid(-t), which becomes sigmoid(t); and so on.
    const Form partner =
        kind == K::kExp ? (neg_arg ? kSigm : kSigmNeg) : (neg_arg ? kExp : kExpNeg);
    std::optional<size_t> j = take(partner, t);
    if (!j) {
      waiting[kind == K::kExp ? (neg_arg ? kExpNeg : kExp) : (neg_arg ? kSigmNeg : kSigm)][t]
          .push_back(i);
      continue;
    }
    // The sigmoid of the pair (an earlier factor, or this one) takes the exp's sign of argument.
    const bool sigmoid_of_t = (kind == K::kExp) != neg_arg;
    const Var t_var = neg_arg ? b : Var(a);
    const size_t keep = kind == K::kSigmoid ? i : *j;
    const size_t drop = kind == K::kSigmoid ? *j : i;
    const bool sign = factors[keep].negated != factors[drop].negated;
    factors[keep] = {sign, (sigmoid_of_t ? sigmoid(t_var) : sigmoid(Negate(t_var))).ptr()};
    factors[drop] = {false, nullptr};
    // The new sigmoid may pair again with a later exp.
    const VariablePtr& na = factors[keep].value->owner()->inputs()[0];
    const Var nb = Negated(na);
    if (nb.ok()) held.push_back(nb);
    waiting[nb.ok() ? kSigmNeg : kSigm][nb.ok() ? nb.ptr().get() : na.get()].push_back(keep);
    changed = true;
  }
  if (!changed) return std::nullopt;
  std::vector<Var> rest;
  for (const Factor& f : factors) {
    if (f.value == nullptr) continue;
    negated ^= f.negated;
    rest.emplace_back(f.value);
  }
  if (rest.empty())
    rest.push_back(scalar_constant(1.0, node.output_ptr(0)->tensor_type()->dtype()));
  return ReplaceWith(Product(rest, negated), node);
}

// reciprocal(1 + exp(t)) -> sigmoid(-t) (Aesara's local_reciprocal_1_plus_exp).
Replacement Reciprocal1PlusExp(const FunctionGraph&, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kReciprocal) return std::nullopt;
  const VariablePtr* t = OnePlusExpArg(node.inputs()[0]);
  return t != nullptr ? ReplaceWith(sigmoid(Negate(Var(*t))), node) : std::nullopt;
}

}  // namespace

std::vector<RewriteRule> SigmoidRules() {
  return {ElemwiseRule("local_exp_over_1_plus_exp", "stabilize", {K::kTrueDiv}, ExpOver1PlusExp),
          ElemwiseRule("local_reciprocal_1_plus_exp", "stabilize", {K::kReciprocal},
                       Reciprocal1PlusExp),
          ElemwiseRule("local_sigm_times_exp", "stabilize", {K::kMul}, SigmoidTimesExp)};
}

}  // namespace kiln
