// canonicalize: algebraic simplification into a canonical form. Each rule reads
// `before -> after`.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/passes/passes.h"
#include "core/passes/blockwise_rules.h"
#include "core/passes/branches.h"
#include "core/passes/linalg_rules.h"
#include "core/passes/rule_util.h"
#include "core/passes/shape_lift.h"
#include "core/rewrite/pattern.h"

namespace kiln {
namespace {

using K = ScalarOpKind;

// Elemwise{kind} over `inputs` as one n-ary node (add and mul) or a left fold.
Var Combine(K kind, const std::vector<Var>& inputs) {
  if (inputs.size() == 1) return inputs[0];
  return ApplyOp(Elemwise::Make(kind), inputs);
}

// A constant (or a DimShuffle of one) that broadcasts like a scalar: every static dim is 1.
std::optional<double> ScalarLikeConstant(const Variable& v) {
  if (!BroadcastsAsScalar(v)) return std::nullopt;
  return ScalarConstantValue(v);
}

bool FloatOutput(const Apply& node) { return IsFloat(node.output_ptr(0)->tensor_type()->dtype()); }

// x * 1 -> x, x + 0 -> x: the identity elements of an associative op (its table's column) are
// dropped, from any number of operands.
Replacement DropNeutral(const FunctionGraph&, Apply& node) {
  const std::optional<K> kind = ElemwiseKind(*node.output_ptr(0));
  if (!kind) return std::nullopt;
  const ScalarAlgebra& algebra = ScalarOpAlgebra(*kind);
  if (!algebra.associative || !algebra.identity) return std::nullopt;
  const double neutral = *algebra.identity;
  std::vector<Var> kept;
  for (const VariablePtr& in : node.inputs()) {
    if (ScalarConstantValue(*in) != neutral) kept.push_back(in);
  }
  if (kept.size() == static_cast<size_t>(node.num_inputs()) || kept.empty()) return std::nullopt;
  return ReplaceWith(Combine(*kind, kept), node);
}

// x * 0 -> zeros like x, when x alone has the product's shape (floats; NaN * 0 is not kept, as
// in Aesara).
Replacement MulByZero(const FunctionGraph&, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kMul || !FloatOutput(node)) return std::nullopt;
  bool zero = false;
  for (const VariablePtr& in : node.inputs()) zero |= ScalarConstantValue(*in) == 0.0;
  if (!zero) return std::nullopt;
  const TensorType& out = *node.output_ptr(0)->tensor_type();
  for (const VariablePtr& in : node.inputs()) {
    if (in->tensor_type()->shape() == out.shape() && !in->is_constant()) {
      return ReplaceWith(zeros_like(Var(in), out.dtype()), node);
    }
  }
  return std::nullopt;
}

// The factors of a product/quotient tree of one float dtype: x*y/(z*w) -> num {x, y},
// den {z, w}; constants and the signs of negations multiply into *coefficient. Iterative: trees
// may be deep. Products used elsewhere too are flattened only with flatten_shared (as Aesara's
// get_num_denum), and then at most `budget` nodes are visited: a DAG of shared products can be
// exponentially larger as a tree. False when the budget ran out.
bool Factors(const FunctionGraph& fg, const VariablePtr& root, DType dtype, bool flatten_shared,
             size_t budget, std::vector<VariablePtr>& num, std::vector<VariablePtr>& den,
             double& coefficient, int& n_constants) {
  std::vector<std::pair<VariablePtr, bool>> stack = {{root, true}};  // (variable, in numerator)
  for (size_t visited = 0; !stack.empty(); ++visited) {
    if (visited == budget) return false;
    auto [v, numerator] = std::move(stack.back());
    stack.pop_back();
    if (const std::optional<double> c = ScalarLikeConstant(*v)) {
      coefficient = numerator ? coefficient * *c : coefficient / *c;
      ++n_constants;
      continue;
    }
    const std::optional<K> kind = ElemwiseKind(*v);
    const bool inner = v == root || flatten_shared || fg.clients(v.get()).size() == 1;
    const bool same_dtype = inner && v->tensor_type()->dtype() == dtype;
    const std::vector<VariablePtr>* in = v->owner() ? &v->owner()->inputs() : nullptr;
    if (same_dtype && kind == K::kMul) {
      for (auto it = in->rbegin(); it != in->rend(); ++it) stack.emplace_back(*it, numerator);
    } else if (same_dtype && kind == K::kTrueDiv) {
      stack.emplace_back((*in)[1], !numerator);
      stack.emplace_back((*in)[0], numerator);
    } else if (same_dtype && kind == K::kReciprocal) {
      stack.emplace_back((*in)[0], !numerator);
    } else if (same_dtype && kind == K::kNeg) {  // -a is -1 * a (Aesara's canonical form)
      coefficient = -coefficient;
      stack.emplace_back((*in)[0], numerator);
    } else {
      (numerator ? num : den).push_back(v);
    }
  }
  return true;
}

// True for one variable, or for outputs of equal ops on inputs that are the same value, up to
// `depth` levels (what merge makes one): the rules of later phases build such twins, as
// sigmoid(-x) twice, and they cancel like one.
bool SameValue(const VariablePtr& a, const VariablePtr& b, int depth = 3) {
  if (a == b) return true;
  const Apply *x = a->owner(), *y = b->owner();
  if (depth == 0 || x == nullptr || y == nullptr || a->index() != b->index() ||
      !(x->op() == y->op()) || x->num_inputs() != y->num_inputs()) {
    return false;
  }
  for (int i = 0; i < x->num_inputs(); ++i) {
    if (!SameValue(x->inputs()[i], y->inputs()[i], depth - 1)) return false;
  }
  return true;
}

// A hash consistent with SameValue: the op and the inputs' hashes, `depth` levels down.
size_t ValueHash(const VariablePtr& v, int depth = 3) {
  const Apply* a = v->owner();
  if (depth == 0 || a == nullptr) return absl::HashOf(v.get());
  size_t h = absl::HashOf(a->op().Hash(), v->index());
  for (const VariablePtr& in : a->inputs()) h = absl::HashOf(h, ValueHash(in, depth - 1));
  return h;
}

// The sum s = sum(exp(x), axis) behind a divisor d, for d = s broadcast back over the summed
// axis (or all axes), and that axis (nullopt: all); else null.
const Variable* SumOfExpDivisor(const VariablePtr& d, std::optional<int>* axis) {
  const Variable* s = d.get();
  const DimShuffle* ds = nullptr;
  if (s->owner() != nullptr && s->owner()->op().Is<DimShuffle>()) {
    ds = &static_cast<const DimShuffle&>(s->owner()->op());
    s = s->owner()->inputs()[0].get();
  }
  if (s->owner() == nullptr || !s->owner()->op().Is<CAReduce>()) return nullptr;
  const auto& reduce = static_cast<const CAReduce&>(s->owner()->op());
  const Variable& e = *s->owner()->inputs()[0];
  if (reduce.reduce() != ReduceKind::kSum || ElemwiseKind(e) != K::kExp) return nullptr;
  const int n = e.tensor_type()->ndim();
  std::vector<int> order;  // the broadcast that puts the summed axes back
  if (!reduce.axis() || static_cast<int>(reduce.axis()->size()) == n) {
    order.assign(n, kX);
    *axis = n == 1 ? std::optional<int>(0) : std::nullopt;
  } else if (reduce.axis()->size() == 1) {
    const int k = (*reduce.axis())[0];
    for (int i = 0; i < n - 1; ++i) order.push_back(i);
    order.insert(order.begin() + k, kX);
    *axis = k;
  } else {
    return nullptr;
  }
  const bool broadcast_back = ds != nullptr ? ds->new_order() == order : n == 0;
  return broadcast_back ? &e : nullptr;
}

// The canonizer's simplifiers, on the factors left after cancellation (Aesara's
// check_for_x_over_absX and softmax_simplifier): x / abs(x) -> sgn(x);
// exp(x) / sum(exp(x), axis) -> softmax(x, axis). True when one applied.
bool SimplifyQuotient(std::vector<VariablePtr>& num, std::vector<VariablePtr>& den) {
  const bool candidates = std::any_of(den.begin(), den.end(), [](const VariablePtr& d) {
    return ElemwiseKind(*d) == K::kAbs ||
           (d->owner() != nullptr && (d->owner()->op().Is<DimShuffle>() ||
                                      d->owner()->op().Is<CAReduce>()));
  });
  if (!candidates) return false;  // no index of num to build
  absl::flat_hash_map<size_t, std::vector<size_t>> num_by_hash;
  for (size_t i = 0; i < num.size(); ++i) num_by_hash[ValueHash(num[i])].push_back(i);
  // The factor of num equal to v, taken out of the index so that it is used once; or null.
  auto take_from_num = [&](const VariablePtr& v) -> VariablePtr* {
    auto it = num_by_hash.find(ValueHash(v));
    if (it == num_by_hash.end()) return nullptr;
    std::vector<size_t>& candidates = it->second;
    for (size_t k = 0; k < candidates.size(); ++k) {
      if (!SameValue(num[candidates[k]], v)) continue;
      VariablePtr* found = &num[candidates[k]];
      candidates.erase(candidates.begin() + k);
      return found;
    }
    return nullptr;
  };
  bool simplified = false;
  std::vector<VariablePtr> den_kept;
  for (VariablePtr& d : den) {
    std::optional<int> axis;
    VariablePtr* n = nullptr;
    if (ElemwiseKind(*d) == K::kAbs) {
      const VariablePtr& x = d->owner()->inputs()[0];
      if (!IsComplex(x->tensor_type()->dtype()) && (n = take_from_num(x)) != nullptr) {
        *n = sgn(Var(*n)).ptr();
      }
    } else if (const Variable* e = SumOfExpDivisor(d, &axis); e != nullptr) {
      // The very exp that is summed (Aesara asks for the same variable).
      if ((n = take_from_num(e->owner()->output(0))) != nullptr && n->get() != e) n = nullptr;
      if (n != nullptr) *n = softmax(Var(e->owner()->inputs()[0]), axis).ptr();
    }
    if (n == nullptr) {
      den_kept.push_back(std::move(d));
      continue;
    }
    simplified = true;
  }
  den = std::move(den_kept);
  return simplified;
}

// Nodes the canonizer visits through shared products before it keeps them whole: small, because
// every root of a chain of shared products may walk that far (64 keeps compiles linear).
constexpr size_t kSharedFlattenBudget = 64;

// The mul/div canonizer: x*y/y -> x; (2*x)/(4*y) -> (0.5*x)/y; equal factors above and below
// the line cancel and constants fold into one coefficient.
Replacement MulDivCanonizer(const FunctionGraph& fg, Apply& node) {
  const std::optional<K> kind = ElemwiseKind(*node.output_ptr(0));
  if ((kind != K::kMul && kind != K::kTrueDiv && kind != K::kNeg) || !FloatOutput(node)) {
    return std::nullopt;
  }
  const DType dtype = node.output_ptr(0)->tensor_type()->dtype();
  if (InsideTree(fg, node, {K::kMul, K::kTrueDiv, K::kReciprocal, K::kNeg})) return std::nullopt;
  std::vector<VariablePtr> num, den;
  double coefficient = 1;
  int n_constants = 0;
  if (!Factors(fg, node.output(0), dtype, /*flatten_shared=*/true, kSharedFlattenBudget, num, den,
               coefficient, n_constants)) {
    num.clear(), den.clear(), coefficient = 1, n_constants = 0;
    Factors(fg, node.output(0), dtype, /*flatten_shared=*/false, SIZE_MAX, num, den, coefficient,
            n_constants);
  }
  // Equal factors above and below the line cancel, found through a hash of their values (a
  // product of 100,000 factors is linear, not quadratic).
  absl::flat_hash_map<size_t, std::vector<size_t>> den_by_hash;
  for (size_t i = 0; i < den.size(); ++i) den_by_hash[ValueHash(den[i])].push_back(i);
  std::vector<bool> den_gone(den.size(), false);
  bool cancelled = false;
  std::vector<VariablePtr> kept;
  for (VariablePtr& n : num) {
    bool gone = false;
    if (auto it = den_by_hash.find(ValueHash(n)); it != den_by_hash.end()) {
      for (size_t i : it->second) {
        if (!den_gone[i] && SameValue(den[i], n)) {
          den_gone[i] = gone = cancelled = true;
          break;
        }
      }
    }
    if (!gone) kept.push_back(std::move(n));
  }
  num = std::move(kept);
  std::vector<VariablePtr> den_kept;
  for (size_t i = 0; i < den.size(); ++i) {
    if (!den_gone[i]) den_kept.push_back(den[i]);
  }
  den = std::move(den_kept);
  const bool simplified = SimplifyQuotient(num, den);
  // x / 1 and x * 1 (after broadcasting): the one constant is dropped.
  const bool unit_constant = n_constants == 1 && coefficient == 1 && !num.empty();
  if (!cancelled && !simplified && n_constants < 2 && !unit_constant) return std::nullopt;
  std::vector<Var> top;
  if (coefficient != 1 || num.empty()) top.push_back(scalar_constant(coefficient, dtype));
  top.insert(top.end(), num.begin(), num.end());
  Var result = Combine(K::kMul, top);
  if (!den.empty()) {
    result = true_div(result, Combine(K::kMul, std::vector<Var>(den.begin(), den.end())));
  }
  return ReplaceFilled(result, node);  // x / x -> second(x, 1)
}

// (a / x - b) * x -> a - b * x; (a / x + b) * x -> a + b * x: x distributed over a sum in which
// it cancels a divisor (Aesara's local_greedy_distributor, in its simplest case). The gradient of
// log(softmax(x)) becomes g - sum(g) * softmax(x), finite where softmax(x) is 0.
Replacement DistributeIntoQuotient(const FunctionGraph& fg, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kMul || node.num_inputs() != 2 ||
      !FloatOutput(node)) {
    return std::nullopt;
  }
  for (int i = 0; i < 2; ++i) {
    const VariablePtr &s = node.inputs()[i], &x = node.inputs()[1 - i];
    const std::optional<K> kind = ElemwiseKind(*s);
    if ((kind != K::kAdd && kind != K::kSub) || fg.clients(s.get()).size() != 1) continue;
    const auto divides_by_x = [&](const VariablePtr& t) {
      return ElemwiseKind(*t) == K::kTrueDiv && t->owner()->inputs()[1] == x;
    };
    const std::vector<VariablePtr>& terms = s->owner()->inputs();
    if (std::none_of(terms.begin(), terms.end(), divides_by_x)) continue;
    std::vector<Var> distributed;
    for (const VariablePtr& t : terms) {
      distributed.push_back(divides_by_x(t) ? Var(t->owner()->inputs()[0]) : Var(t) * Var(x));
    }
    return ReplaceWith(kind == K::kSub ? distributed[0] - distributed[1]
                                       : ApplyOp(Elemwise::Make(K::kAdd), distributed),
                       node);
  }
  return std::nullopt;
}

// The terms of a sum/difference tree of one dtype, with their signs; constants add into *sum.
// Iterative: sums may be deep.
void Terms(const FunctionGraph& fg, const VariablePtr& root, DType dtype,
           std::vector<VariablePtr>& plus, std::vector<VariablePtr>& minus, double& constant_sum,
           int& n_constants) {
  std::vector<std::pair<VariablePtr, bool>> stack = {{root, true}};  // (variable, positive)
  while (!stack.empty()) {
    auto [v, positive] = std::move(stack.back());
    stack.pop_back();
    if (const std::optional<double> c = ScalarLikeConstant(*v)) {
      constant_sum += positive ? *c : -*c;
      ++n_constants;
      continue;
    }
    const std::optional<K> kind = ElemwiseKind(*v);
    const bool inner = v == root || fg.clients(v.get()).size() == 1;
    const bool same_dtype = inner && v->tensor_type()->dtype() == dtype;
    const std::vector<VariablePtr>* in = v->owner() ? &v->owner()->inputs() : nullptr;
    if (same_dtype && kind == K::kAdd) {
      for (auto it = in->rbegin(); it != in->rend(); ++it) stack.emplace_back(*it, positive);
    } else if (same_dtype && kind == K::kSub) {
      stack.emplace_back((*in)[1], !positive);
      stack.emplace_back((*in)[0], positive);
    } else if (same_dtype && kind == K::kNeg) {
      stack.emplace_back((*in)[0], !positive);
    } else {
      (positive ? plus : minus).push_back(std::move(v));
    }
  }
}

// The add/sub canonizer: x + y - y -> x; x - x -> 0; (x + 1) + 2 -> x + 3.
Replacement AddSubCanonizer(const FunctionGraph& fg, Apply& node) {
  const std::optional<K> kind = ElemwiseKind(*node.output_ptr(0));
  if ((kind != K::kAdd && kind != K::kSub) || !FloatOutput(node)) return std::nullopt;
  const DType dtype = node.output_ptr(0)->tensor_type()->dtype();
  if (InsideTree(fg, node, {K::kAdd, K::kSub, K::kNeg})) return std::nullopt;
  std::vector<VariablePtr> plus, minus;
  double constant_sum = 0;
  int n_constants = 0;
  Terms(fg, node.output(0), dtype, plus, minus, constant_sum, n_constants);
  // Equal terms of opposite signs cancel, found through counts (a sum of 100,000 terms is
  // linear, not quadratic).
  absl::flat_hash_map<const Variable*, int> available;  // subtracted terms not yet cancelled
  for (const VariablePtr& m : minus) ++available[m.get()];
  absl::flat_hash_map<const Variable*, int> cancelled_of;  // pairs cancelled, per term
  std::vector<VariablePtr> plus_kept;
  for (VariablePtr& p : plus) {
    auto it = available.find(p.get());
    if (it != available.end() && it->second > 0) {
      --it->second;
      ++cancelled_of[p.get()];
    } else {
      plus_kept.push_back(std::move(p));
    }
  }
  plus = std::move(plus_kept);
  const bool cancelled = !cancelled_of.empty();
  std::vector<VariablePtr> minus_kept;
  for (VariablePtr& m : minus) {
    auto it = cancelled_of.find(m.get());
    if (it != cancelled_of.end() && it->second > 0) {
      --it->second;
    } else {
      minus_kept.push_back(std::move(m));
    }
  }
  minus = std::move(minus_kept);
  // x - 0 and x + 0 (after broadcasting): the one constant is dropped.
  const bool zero_constant =
      n_constants == 1 && constant_sum == 0 && !(plus.empty() && minus.empty());
  if (!cancelled && n_constants < 2 && !zero_constant) return std::nullopt;
  std::vector<Var> pos(plus.begin(), plus.end());
  if (constant_sum != 0 || (plus.empty() && minus.empty())) {
    pos.push_back(scalar_constant(constant_sum, dtype));
  }
  Var result = pos.empty() ? Var() : Combine(K::kAdd, pos);
  if (!minus.empty()) {
    const Var neg_part = Combine(K::kAdd, std::vector<Var>(minus.begin(), minus.end()));
    result = result.ok() ? result - neg_part : -neg_part;
  }
  // x - x of a shape only x knows: zeros like x.
  if (plus.empty() && minus.empty() && cancelled) {
    const TensorType& out = *node.output_ptr(0)->tensor_type();
    for (const VariablePtr& in : node.inputs()) {
      if (in->tensor_type()->shape() == out.shape()) {
        return ReplaceWith(second(Var(in), result), node);
      }
    }
  }
  return ReplaceWith(result, node);
}

// cast(x, t) with x already of dtype t -> x; cast(cast(x, t1), t2) -> cast(x, t2) when t1 holds
// every value of x's dtype.
Replacement CastCast(const FunctionGraph&, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kCast) return std::nullopt;
  const VariablePtr& x = node.inputs()[0];
  const DType to = node.output_ptr(0)->tensor_type()->dtype();
  if (x->tensor_type()->dtype() == to) return ReplaceWith(Var(x), node);
  if (ElemwiseKind(*x) != K::kCast) return std::nullopt;
  const VariablePtr& inner = x->owner()->inputs()[0];
  if (!CanCastSafely(inner->tensor_type()->dtype(), x->tensor_type()->dtype())) {
    return std::nullopt;
  }
  return ReplaceWith(cast(Var(inner), to), node);
}

// switch(constant c, a, b) -> a if c else b.
Replacement SwitchConstantCondition(const FunctionGraph&, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kSwitch) return std::nullopt;
  const std::optional<double> c = ScalarConstantValue(*node.inputs()[0]);
  if (!c) return std::nullopt;
  return ReplaceWith(Var(node.inputs()[*c != 0 ? 1 : 2]), node);
}

// identity(x) -> x; second(x, y) -> y when y already has the result's type.
Replacement UselessElemwise(const FunctionGraph&, Apply& node) {
  const std::optional<K> kind = ElemwiseKind(*node.output_ptr(0));
  if (kind == K::kIdentity) return ReplaceWith(Var(node.inputs()[0]), node);
  if (kind == K::kSecond && node.inputs()[1]->type()->Equals(*node.output_ptr(0)->type())) {
    return ReplaceWith(Var(node.inputs()[1]), node);
  }
  return std::nullopt;
}

// DimShuffle{order}(x) with order the identity -> x; DimShuffle{x}(x) -> x for x of static
// shape (1,) and any order that drops a dim of static size 1 and puts a new one in its place
// (the data and the type are x's).
Replacement IdentityDimShuffle(const FunctionGraph&, Apply& node) {
  const std::vector<int>& order = static_cast<const DimShuffle&>(node.op()).new_order();
  const VariablePtr& x = node.inputs()[0];
  const std::vector<StaticDim>& dims = x->tensor_type()->shape();
  bool identity = order.size() == dims.size();
  for (size_t i = 0; identity && i < order.size(); ++i) {
    identity = order[i] == static_cast<int>(i) || (order[i] == kX && dims[i] == StaticDim(1));
  }
  if (!identity) return std::nullopt;
  return ReplaceWith(Var(x), node);
}

// DimShuffle{a}(DimShuffle{b}(x)) -> DimShuffle{b[a]}(x)   (Aesara's local_dimshuffle_lift,
// its merge part)
Replacement DimShuffleOfDimShuffle(const FunctionGraph&, Apply& node) {
  const std::vector<int>& order = static_cast<const DimShuffle&>(node.op()).new_order();
  const Apply* inner = node.inputs()[0]->owner();
  if (inner == nullptr || !inner->op().Is<DimShuffle>()) return std::nullopt;
  const auto& inner_op = static_cast<const DimShuffle&>(inner->op());
  std::vector<int> combined;
  for (int o : order) combined.push_back(o == kX ? kX : inner_op.new_order()[o]);
  return ReplaceWith(dimshuffle(Var(inner->inputs()[0]), combined), node);
}

// reshape(x, s) where the result's known static shape is x's -> x   (Aesara's
// local_useless_reshape)
Replacement UselessReshape(const FunctionGraph&, Apply& node) {
  const VariablePtr& x = node.inputs()[0];
  const TensorType& out = *node.output_ptr(0)->tensor_type();
  const bool all_known = std::all_of(out.shape().begin(), out.shape().end(),
                                     [](const StaticDim& d) { return d.has_value(); });
  if (!all_known || x->tensor_type()->shape() != out.shape()) return std::nullopt;
  return ReplaceWith(Var(x), node);
}

// reshape(reshape(x, s1), s2) -> reshape(x, s2)   (Aesara's local_reshape_chain)
Replacement ReshapeChain(const FunctionGraph&, Apply& node) {
  const VariablePtr& x = node.inputs()[0];
  if (x->owner() == nullptr || !x->owner()->op().Is<Reshape>()) return std::nullopt;
  return ReplaceWith(reshape(Var(x->owner()->inputs()[0]), Var(node.inputs()[1])), node);
}

// x[:, :] (every entry a full slice) -> x.
Replacement UselessSubtensor(const FunctionGraph&, Apply& node) {
  if (!node.op().Is<Subtensor>()) return std::nullopt;
  const auto& op = static_cast<const Subtensor&>(node.op());
  for (const IndexEntry& e : op.idx()) {
    if (!e.is_slice || e.has_start || e.has_stop || e.has_step) return std::nullopt;
  }
  return ReplaceWith(Var(node.inputs()[0]), node);
}

// alloc(x, dims) where x already has the result's shape -> x.
Replacement UselessAlloc(const FunctionGraph&, Apply& node) {
  const VariablePtr& x = node.inputs()[0];
  if (!x->type()->Equals(*node.output_ptr(0)->type())) return std::nullopt;
  return ReplaceWith(Var(x), node);
}

// sum(x, axis=[]) -> x (in the sum's dtype); sum(s) -> s for a 0-d s, and any reduction whose
// result has x's type (PyTensor's local_useless_reduce).
Replacement UselessReduce(const FunctionGraph&, Apply& node) {
  const auto& op = static_cast<const CAReduce&>(node.op());
  const VariablePtr& x = node.inputs()[0];
  if ((!op.axis() || !op.axis()->empty()) && !x->type()->Equals(*node.output_ptr(0)->type())) {
    return std::nullopt;
  }
  return ReplaceWith(Var(x), node);
}

// DimShuffle(f(x, y)) -> f(DimShuffle(x), DimShuffle(y)) for an Elemwise f used only here: the
// dimshuffles move toward the inputs, where they merge or fold into constants, and the
// elementwise chain above stays in one piece for fusion.
Replacement DimShuffleLift(const FunctionGraph& fg, Apply& node) {
  const auto& op = static_cast<const DimShuffle&>(node.op());
  const VariablePtr& x = node.inputs()[0];
  const Apply* inner = x->owner();
  if (inner == nullptr || !inner->op().Is<Elemwise>() || inner->num_outputs() != 1 ||
      fg.clients(x.get()).size() != 1) {
    return std::nullopt;
  }
  const auto& elemwise = static_cast<const Elemwise&>(inner->op());
  if (!elemwise.inplace_pattern().empty()) return std::nullopt;
  std::vector<Var> moved;
  for (const VariablePtr& in : inner->inputs())
    moved.push_back(dimshuffle(Var(in), op.new_order()));
  return ReplaceWith(ApplyOp(Elemwise::Make(elemwise.scalar_op()), moved), node);
}

// f(second(a, b), y) -> second(a, f(b, y)) for an Elemwise f (Aesara's fill sinking): the fill
// moves out so that f sees the value b, and a later rule may drop the fill.
Replacement FillSink(const FunctionGraph& fg, Apply& node) {
  const auto& op = static_cast<const Elemwise&>(node.op());
  if (!op.inplace_pattern().empty() || node.num_outputs() != 1 ||
      op.scalar_op().kind == K::kSecond || op.scalar_op().kind == K::kComposite) {
    return std::nullopt;
  }
  for (int i = 0; i < node.num_inputs(); ++i) {
    const VariablePtr& in = node.inputs()[i];
    if (ElemwiseKind(*in) != K::kSecond || fg.clients(in.get()).size() != 1) continue;
    std::vector<Var> args(node.inputs().begin(), node.inputs().end());
    args[i] = Var(in->owner()->inputs()[1]);
    const Var inner = ApplyOp(node.op_ptr(), args);
    if (!inner.ok()) return std::nullopt;
    return ReplaceWith(second(Var(in->owner()->inputs()[0]), inner), node);
  }
  return std::nullopt;
}

RewriteRule Rule(std::string name, std::vector<OpClassId> tracks,
                 std::function<Replacement(const FunctionGraph&, Apply&)> apply) {
  return PhaseRule(std::move(name), "canonicalize", std::move(tracks), std::move(apply));
}

RewriteRule Rule(std::string name, std::vector<K> scalar_ops,
                 std::function<Replacement(const FunctionGraph&, Apply&)> apply) {
  return ElemwiseRule(std::move(name), "canonicalize", std::move(scalar_ops), std::move(apply));
}

// The scalar ops DropNeutral looks at: those associative with an identity in the table.
std::vector<K> Monoids() {
  std::vector<K> monoids;
  for (int k = 0; k < NumScalarOps(); ++k) {
    const ScalarAlgebra& algebra = ScalarOpAlgebra(K(k));
    if (algebra.associative && algebra.identity) monoids.push_back(K(k));
  }
  return monoids;
}

}  // namespace

RewriteRule GreedyDistributorRule() {
  return Rule("local_greedy_distributor", {K::kMul}, DistributeIntoQuotient);
}

RewriteRule MulDivCanonizerRule() {
  return Rule("local_mul_canonizer", {K::kMul, K::kTrueDiv, K::kNeg}, MulDivCanonizer);
}

std::vector<RewriteRule> CanonicalizeRules() {
  std::vector<RewriteRule> rules = {
      ConstantFoldingRule(),
      Rule("local_useless_elemwise", {K::kIdentity, K::kSecond}, UselessElemwise),
      Rule("local_neutral_operand", Monoids(), DropNeutral),
      Rule("local_mul_zero", {K::kMul}, MulByZero),
      // --x -> x
      PatternRule(
          "local_neg_neg", "canonicalize", [](Bindings& b) { return m::Neg(m::Neg(m::Any(&b.x))); },
          [](const Bindings& b) { return Var(b.x); }),
      // x - (-y) -> x + y
      PatternRule(
          "local_sub_neg_to_add", "canonicalize",
          [](Bindings& b) { return m::Sub(m::Any(&b.x), m::Neg(m::Any(&b.y))); },
          [](const Bindings& b) { return Var(b.x) + Var(b.y); }),
      MulDivCanonizerRule(),
      GreedyDistributorRule(),
      Rule("local_add_canonizer", {K::kAdd, K::kSub}, AddSubCanonizer),
      Rule("local_cast_cast", {K::kCast}, CastCast),
      Rule("local_useless_switch", {K::kSwitch}, SwitchConstantCondition),
      // log(exp(x)) -> x
      PatternRule(
          "local_exp_log", "canonicalize", [](Bindings& b) { return m::Log(m::Exp(m::Any(&b.x))); },
          [](const Bindings& b) { return Var(b.x); }),
      // exp(log(x)) -> switch(x >= 0, x, nan), for floats
      PatternRule(
          "local_exp_log", "canonicalize", [](Bindings& b) { return m::Exp(m::Log(m::Any(&b.x))); },
          [](const Bindings& b) {
            const DType d = b.x->tensor_type()->dtype();
            if (!IsFloat(d)) return Var();
            return switch_(Var(b.x) >= scalar_constant(0.0, d), Var(b.x),
                           scalar_constant(std::nan(""), d));
          }),
      Rule("local_useless_dimshuffle", {OpClassIdOf<DimShuffle>()}, IdentityDimShuffle),
      Rule("local_dimshuffle_merge", {OpClassIdOf<DimShuffle>()}, DimShuffleOfDimShuffle),
      Rule("local_dimshuffle_lift", {OpClassIdOf<DimShuffle>()}, DimShuffleLift),
      Rule("local_fill_sink", {OpClassIdOf<Elemwise>()}, FillSink),  // every scalar op
      Rule("local_useless_reshape", {OpClassIdOf<Reshape>()}, UselessReshape),
      Rule("local_reshape_chain", {OpClassIdOf<Reshape>()}, ReshapeChain),
      Rule("local_useless_subtensor", {OpClassIdOf<Subtensor>()}, UselessSubtensor),
      Rule("local_useless_alloc", {OpClassIdOf<Alloc>()}, UselessAlloc),
      Rule("local_useless_reduce", {OpClassIdOf<CAReduce>()}, UselessReduce),
  };
  for (std::vector<RewriteRule> more :
       {AbsSqrtRules("canonicalize"), SumProdRules("canonicalize"), ShapeLiftRules(),
        BranchRules(), ReshapeReduceRules(), SplitShapeRules("canonicalize"),
        BlockwiseRules("canonicalize"), LinalgRules("canonicalize")}) {
    for (RewriteRule& r : more) rules.push_back(std::move(r));
  }
  return rules;
}

}  // namespace kiln
