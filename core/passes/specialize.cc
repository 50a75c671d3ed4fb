// specialize: general ops replaced by faster special cases. Each rule reads `before -> after`.
#include <algorithm>
#include <cmath>

#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/elemwise.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/passes/advanced_indexing_rules.h"
#include "core/passes/linalg_rules.h"
#include "core/passes/nnet_rules.h"
#include "core/passes/passes.h"
#include "core/passes/rule_util.h"
#include "core/rewrite/pattern.h"

namespace kiln {
namespace {

using K = ScalarOpKind;

// x**n for an integer n > 0 by repeated squaring, as Aesara's local_pow_specialize_device: the
// product of the squares sqr^k(x) for the bits k set in n (x**7 -> x * sqr(x) * sqr(sqr(x))).
Var PowByMultiplication(const Var& x, int64_t n) {
  std::vector<Var> factors;
  Var square = x;
  for (int64_t bits = n; bits != 0; bits >>= 1) {
    if (bits & 1) factors.push_back(square);
    if (bits > 1) square = sqr(square);
  }
  return factors.size() == 1 ? factors[0] : ApplyOp(Elemwise::Make(K::kMul), factors);
}

// x**2 -> sqr(x); x**0.5 -> sqrt(x); x**-1 -> reciprocal(x); x**1 -> x; x**0 -> ones;
// x**-0.5 -> reciprocal(sqrt(x)); x**n for |n| <= 512 -> multiplications (Aesara's
// local_pow_specialize and local_pow_specialize_device).
Replacement PowSpecialize(const FunctionGraph&, Apply& node) {
  VariablePtr x;
  double p = 0;
  if (!m::Pow(m::Any(&x), m::AnyConst(&p)).Match(node.output(0))) return std::nullopt;
  const DType out_dtype = node.output_ptr(0)->tensor_type()->dtype();
  if (!IsFloat(out_dtype)) return std::nullopt;
  // Computed in the result's dtype (sqr of an int32 would wrap).
  const Var xv = x->tensor_type()->dtype() == out_dtype ? Var(x) : cast(Var(x), out_dtype);
  if (p == 0.5) return ReplaceWith(sqrt(xv), node);
  if (p == -0.5) return ReplaceWith(reciprocal(sqrt(xv)), node);
  if (p == 0) return ReplaceWith(ones_like(xv), node);
  if (p != std::trunc(p) || std::fabs(p) > 512) return std::nullopt;
  const Var positive = PowByMultiplication(xv, static_cast<int64_t>(std::fabs(p)));
  return ReplaceWith(p < 0 ? reciprocal(positive) : positive, node);
}

// -1 * x -> -x; 1 * x * y -> x * y; (-x) * y -> -(x * y) (Aesara's local_mul_specialize, for
// constants +-1 and negated factors; the negation then meets the others: -(-(x)) -> x).
Replacement MulSpecialize(const FunctionGraph&, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kMul) return std::nullopt;
  bool negate = false, changed = false;
  std::vector<Var> rest;
  for (VariablePtr in : node.inputs()) {
    const std::optional<double> c = in->is_constant() ? ScalarConstantValue(*in) : std::nullopt;
    if (c == 1.0 || c == -1.0) {
      negate ^= *c < 0;
      changed = true;
      continue;
    }
    // Only float factors: an integer -x may wrap where the product's negation would not.
    while (ElemwiseKind(*in) == K::kNeg && IsFloat(in->tensor_type()->dtype()) &&
           in->tensor_type()->dtype() == node.output_ptr(0)->tensor_type()->dtype()) {
      negate ^= true;
      changed = true;
      in = in->owner()->inputs()[0];
    }
    rest.emplace_back(in);
  }
  if (rest.empty() || !changed) return std::nullopt;
  const Var product = rest.size() == 1 ? rest[0] : ApplyOp(Elemwise::Make(K::kMul), rest);
  return ReplaceWith(negate ? -product : product, node);
}

// -(-a / b) -> a / b; -(c / b) -> (-c) / b for a constant c of one value (folded), when the
// quotient has no other use (Aesara's local_neg_div_neg).
Replacement NegDivNeg(const FunctionGraph& fg, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kNeg) return std::nullopt;
  const VariablePtr& frac = node.inputs()[0];
  if (ElemwiseKind(*frac) != K::kTrueDiv || fg.clients(frac.get()).size() != 1) return std::nullopt;
  const VariablePtr& num = frac->owner()->inputs()[0];
  const Var denom(frac->owner()->inputs()[1]);
  if (ElemwiseKind(*num) == K::kNeg) {
    return ReplaceWith(true_div(Var(num->owner()->inputs()[0]), denom), node);
  }
  const std::vector<bool>& bc = num->tensor_type()->broadcastable();
  if (num->is_constant() && std::all_of(bc.begin(), bc.end(), [](bool b) { return b; })) {
    return ReplaceWith(true_div(-Var(num), denom), node);
  }
  return std::nullopt;
}

// True when a and b compute the same: one variable, or one op applied to the same inputs.
bool SameComputation(const VariablePtr& a, const VariablePtr& b) {
  if (a == b) return true;
  const Apply *p = a->owner(), *q = b->owner();
  return p != nullptr && q != nullptr && a->index() == b->index() && p->inputs() == q->inputs() &&
         p->op().Key() == q->op().Key();
}

// maximum(a, a) -> a, minimum(a, a) -> a (Kiln's own: the count of x[arange(len(y)), y] is the
// maximum of two copies of len(y)).
Replacement UselessMaximum(const FunctionGraph&, Apply& node) {
  const std::optional<K> kind = ElemwiseKind(*node.output_ptr(0));
  if ((kind != K::kMaximum && kind != K::kMinimum) || node.num_inputs() != 2 ||
      !SameComputation(node.inputs()[0], node.inputs()[1])) {
    return std::nullopt;
  }
  return ReplaceWith(Var(node.inputs()[0]), node);
}

bool FloatMatrix(const Variable& v) {
  const TensorType* t = v.tensor_type();
  return t->ndim() == 2 && (t->dtype() == DType::kFloat64 || t->dtype() == DType::kFloat32);
}

// dot(matrix, matrix) -> Dot22 (float32/float64).
Replacement DotToDot22(const FunctionGraph&, Apply& node) {
  if (!node.op().Is<Dot>()) return std::nullopt;
  const VariablePtr &x = node.inputs()[0], &y = node.inputs()[1];
  if (!FloatMatrix(*x) || !FloatMatrix(*y) ||
      x->tensor_type()->dtype() != y->tensor_type()->dtype()) {
    return std::nullopt;
  }
  return ReplaceWith(dot22(Var(x), Var(y)), node);
}

// z + a * Dot22(x, y) -> Gemm(z, a, x, y, 1); z + dot(A, v) -> Gemv(z, 1, A, v, 1), when z has
// the product's shape and dtype and the product has no other use.
Replacement AddToGemm(const FunctionGraph& fg, Apply& node) {
  if (ElemwiseKind(*node.output_ptr(0)) != K::kAdd || node.num_inputs() != 2) return std::nullopt;
  const TensorType& out = *node.output_ptr(0)->tensor_type();
  for (int i = 0; i < 2; ++i) {
    const VariablePtr& z = node.inputs()[1 - i];
    VariablePtr product = node.inputs()[i];
    Var alpha = scalar_constant(1.0, out.dtype());
    VariablePtr a, b;
    double c = 0;
    if (m::Mul(m::AnyConst(&c), m::Any(&b)).Match(product) &&
        product->tensor_type()->dtype() == out.dtype() && fg.clients(product.get()).size() == 1) {
      alpha = scalar_constant(c, out.dtype());
      product = b;
    }
    const Apply* p = product->owner();
    // z and the product both have the sum's type: no broadcasting happens in the add.
    if (p == nullptr || fg.clients(product.get()).size() != 1 ||
        !z->type()->Equals(*node.output_ptr(0)->type()) ||
        !product->type()->Equals(*node.output_ptr(0)->type())) {
      continue;
    }
    const Var one = scalar_constant(1.0, out.dtype());
    if (p->op().Is<Dot22>()) {
      return ReplaceWith(gemm(Var(z), alpha, Var(p->inputs()[0]), Var(p->inputs()[1]), one), node);
    }
    if (p->op().Is<Dot>() && p->inputs()[0]->tensor_type()->ndim() == 2 &&
        p->inputs()[1]->tensor_type()->ndim() == 1 && IsFloat(out.dtype())) {
      return ReplaceWith(gemv(Var(z), alpha, Var(p->inputs()[0]), Var(p->inputs()[1]), one), node);
    }
  }
  return std::nullopt;
}

// Shape_i(x) of a statically known dim -> constant; Shape(x) of a known shape -> constant.
Replacement KnownShape(const FunctionGraph&, Apply& node) {
  const TensorType& t = *node.inputs()[0]->tensor_type();
  if (node.op().Is<ShapeI>()) {
    const StaticDim d = t.shape()[static_cast<const ShapeI&>(node.op()).i()];
    if (!d) return std::nullopt;
    return ReplaceWith(scalar_constant(*d, DType::kInt64), node);
  }
  std::vector<int64_t> dims;
  for (const StaticDim& d : t.shape()) {
    if (!d) return std::nullopt;
    dims.push_back(*d);
  }
  const int64_t n = static_cast<int64_t>(dims.size());
  return ReplaceWith(constant(*Tensor::FromValues<int64_t>(DType::kInt64, {n}, dims)), node);
}

// max(x, axes) and argmax(x, axes) of one x -> the two outputs of one MaxAndArgmax (the final
// merge joins the two MaxAndArgmax nodes this makes).
Replacement MaxAndArgmaxMerge(const FunctionGraph& fg, Apply& node) {
  const VariablePtr& x = node.inputs()[0];
  std::optional<std::vector<int>> axes;
  if (node.op().Is<CAReduce>()) {
    const auto& op = static_cast<const CAReduce&>(node.op());
    if (op.reduce() != ReduceKind::kMax) return std::nullopt;
    axes = op.axis();
  } else if (node.op().Is<Argmax>()) {
    axes = static_cast<const Argmax&>(node.op()).axis();
  } else {
    return std::nullopt;
  }
  const int ndim = x->tensor_type()->ndim();
  std::vector<int> all;
  for (int d = 0; d < ndim; ++d) all.push_back(d);
  const std::vector<int> want = axes.value_or(all);
  for (const FunctionGraph::Client& c : fg.clients(x.get())) {
    if (c.node == nullptr || c.node == &node) continue;
    if (c.node->op().Is<MaxAndArgmax>() && node.op().Is<Argmax>() &&
        static_cast<const MaxAndArgmax&>(c.node->op()).axis() == want) {
      return ReplaceWith(Var(c.node->output(1)), node);
    }
    std::optional<std::vector<int>> other;
    if (c.node->op().Is<Argmax>() && node.op().Is<CAReduce>()) {
      other = static_cast<const Argmax&>(c.node->op()).axis();
    } else if (c.node->op().Is<CAReduce>() && node.op().Is<Argmax>() &&
               static_cast<const CAReduce&>(c.node->op()).reduce() == ReduceKind::kMax) {
      other = static_cast<const CAReduce&>(c.node->op()).axis().value_or(all);
    }
    if (!other || *other != want) continue;
    const std::vector<Var> both = max_and_argmax(Var(x), Axes(want));
    return ReplaceWith(both[node.op().Is<Argmax>() ? 1 : 0], node);
  }
  return std::nullopt;
}

RewriteRule Rule(std::string name, std::vector<OpClassId> tracks,
                 std::function<Replacement(const FunctionGraph&, Apply&)> f) {
  return PhaseRule(std::move(name), "specialize", std::move(tracks), std::move(f));
}

}  // namespace

std::vector<RewriteRule> SpecializeRules() {
  std::vector<RewriteRule> rules = {
      ElemwiseRule("local_pow_specialize", "specialize", {K::kPow}, PowSpecialize),
      ElemwiseRule("local_mul_specialize", "specialize", {K::kMul}, MulSpecialize),
      // --x -> x (Aesara's local_mul_specialize drops paired negations)
      PatternRule(
          "local_neg_neg", "specialize", [](Bindings& b) { return m::Neg(m::Neg(m::Any(&b.x))); },
          [](const Bindings& b) { return Var(b.x); }),
      ElemwiseRule("local_neg_div_neg", "specialize", {K::kNeg}, NegDivNeg),
      // maximum(a, a) -> a
      ElemwiseRule("local_useless_maximum", "specialize", {K::kMaximum, K::kMinimum},
                   UselessMaximum),
      Rule("local_dot_to_dot22", {OpClassIdOf<Dot>()}, DotToDot22),
      ElemwiseRule("local_add_to_gemm", "specialize", {K::kAdd}, AddToGemm),
      Rule("local_shape_to_constant", {OpClassIdOf<ShapeI>(), OpClassIdOf<ShapeOp>()}, KnownShape),
      Rule("local_max_and_argmax", {OpClassIdOf<CAReduce>(), OpClassIdOf<Argmax>()}, MaxAndArgmaxMerge),
      LogDiffExpRule(),
  };
  for (std::vector<RewriteRule> more :
       {AbsSqrtRules("specialize"), SumProdRules("specialize"), AdvancedIndexingRules(),
        SplitShapeRules("specialize"), LinalgRules("specialize")}) {
    for (RewriteRule& r : more) rules.push_back(std::move(r));
  }
  for (RewriteRule& r : NnetRules()) rules.push_back(std::move(r));
  return rules;
}

}  // namespace kiln
