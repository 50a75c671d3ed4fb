#include "core/passes/nnet_rules.h"

#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/nnet_xent.h"
#include "core/ops/reduce.h"
#include "core/passes/rule_util.h"

namespace kiln {
namespace {

using K = ScalarOpKind;

// The scalar op of an Elemwise node, or nullopt.
std::optional<K> ScalarKindOf(const Apply& node) {
  if (!node.op().Is<Elemwise>()) return std::nullopt;
  return static_cast<const Elemwise&>(node.op()).scalar_op().kind;
}

// True for a Softmax along the last axis of a matrix (Aesara's softmax_legacy on a matrix).
bool IsRowSoftmax(const Apply& node) {
  if (!node.op().Is<Softmax>() || node.output(0)->tensor_type()->ndim() != 2) return false;
  const std::optional<int>& axis = node.op().As<Softmax>()->axis();
  return axis && *axis == 1;
}

// The type (dtype, broadcast pattern) of a and b agree.
bool SameType(const VariablePtr& a, const VariablePtr& b) {
  const TensorType* ta = a->tensor_type();
  const TensorType* tb = b->tensor_type();
  return ta && tb && ta->dtype() == tb->dtype() && ta->broadcastable() == tb->broadcastable();
}

// softmax(m1 + v1 + m2 + ...) along the rows of a matrix -> SoftmaxWithBias(m1 + m2 + ...,
// v1 + ...) where the v are row vectors (a broadcast vector's DimShuffle is cut out).
Replacement SoftmaxWithBiasRule(const FunctionGraph&, Apply& node) {
  if (!IsRowSoftmax(node)) return std::nullopt;
  const std::optional<std::pair<Var, Var>> split = SplitSoftmaxBias(node.inputs()[0]);
  if (!split) return std::nullopt;
  const Var sm = softmax_with_bias(split->first, split->second);
  if (!sm.ok() || !SameType(sm.ptr(), node.output(0))) return std::nullopt;
  return std::vector<VariablePtr>{sm.ptr()};
}

// CrossentropyCategorical1Hot(softmax(x), y) -> CrossentropySoftmaxArgmax1HotWithBias(x,
// zeros_like(x[0]), y)[0]; CrossentropyCategorical1Hot(SoftmaxWithBias(x, b), y) ->
// CrossentropySoftmaxArgmax1HotWithBias(x, b, y)[0].
Replacement CrossentropyWithSoftmaxRule(const FunctionGraph&, Apply& node) {
  if (!node.op().Is<CrossentropyCategorical1Hot>()) return std::nullopt;
  const Apply* sm = node.inputs()[0]->owner();
  if (sm == nullptr) return std::nullopt;
  const Var y(node.inputs()[1]);
  std::vector<Var> out;
  if (IsRowSoftmax(*sm)) {
    const Var x(sm->inputs()[0]);
    out = crossentropy_softmax_argmax_1hot_with_bias(x, zeros_like(subtensor(x, {0})), y);
  } else if (sm->op().Is<SoftmaxWithBias>()) {
    out = crossentropy_softmax_argmax_1hot_with_bias(Var(sm->inputs()[0]), Var(sm->inputs()[1]), y);
  } else {
    return std::nullopt;
  }
  return ReplaceWith(out[0], node);
}

// SoftmaxWithBias(x, b) beside CrossentropySoftmaxArgmax1HotWithBias(x, b, y) -> the latter's
// softmax output (Aesara's graph_merge_softmax_with_crossentropy_softmax).
Replacement MergeSoftmaxWithCrossentropyRule(const FunctionGraph& fg, Apply& node) {
  if (!node.op().Is<SoftmaxWithBias>()) return std::nullopt;
  const VariablePtr& x = node.inputs()[0];
  const VariablePtr& b = node.inputs()[1];
  for (const FunctionGraph::Client& c : fg.clients(x.get())) {
    if (c.node == nullptr || !c.node->op().Is<CrossentropySoftmaxArgmax1HotWithBias>() ||
        c.node->inputs()[0] != x || c.node->inputs()[1] != b) {
      continue;
    }
    return ReplaceWith(Var(c.node->output(1)), node);
  }
  return std::nullopt;
}

// The Elemwise{kind} owner of v with two inputs, or nullptr.
const Apply* BinaryOwner(const VariablePtr& v, K kind) {
  const Apply* owner = v->owner();
  if (owner == nullptr || ScalarKindOf(*owner) != kind || owner->inputs().size() != 2) {
    return nullptr;
  }
  return owner;
}

// True when d is DimShuffle{0,x}(Sum{axis=[1]}(g * sm)) (the keepdims row sum of g * sm).
bool IsRowSumOfProduct(const VariablePtr& d, const VariablePtr& g, const VariablePtr& sm) {
  const Apply* shuffle = d->owner();
  if (shuffle == nullptr || !shuffle->op().Is<DimShuffle>() ||
      static_cast<const DimShuffle&>(shuffle->op()).new_order() != std::vector<int>{0, kX}) {
    return false;
  }
  const Apply* total = shuffle->inputs()[0]->owner();
  if (total == nullptr || !total->op().Is<CAReduce>()) return false;
  const auto& reduce = static_cast<const CAReduce&>(total->op());
  if (reduce.reduce() != ReduceKind::kSum || reduce.axis() != std::vector<int>{1}) return false;
  const Apply* product = BinaryOwner(total->inputs()[0], K::kMul);
  if (product == nullptr) return false;
  const auto& in = product->inputs();
  return (in[0] == g && in[1] == sm) || (in[0] == sm && in[1] == g);
}

// The softmax gradient (g - sum(g * sm, 1, keepdims)) * sm of g = CrossentropyCategorical1HotGrad(
// dy, sm, y) -> CrossentropySoftmax1HotWithBiasDx(dy, sm, y), which it equals for any sm
// (Aesara's local_softmax_grad_to_crossentropy_with_softmax_grad, on Kiln's softmax gradient).
Replacement SoftmaxGradToDxRule(const FunctionGraph&, Apply& node) {
  if (node.inputs().size() != 2) return std::nullopt;
  for (int side : {0, 1}) {
    const VariablePtr& sm = node.inputs()[1 - side];
    const Apply* diff = BinaryOwner(node.inputs()[side], K::kSub);
    if (diff == nullptr) continue;
    const VariablePtr& g = diff->inputs()[0];
    const Apply* xent_grad = g->owner();
    if (xent_grad == nullptr || !xent_grad->op().Is<CrossentropyCategorical1HotGrad>() ||
        xent_grad->inputs()[1] != sm || !IsRowSumOfProduct(diff->inputs()[1], g, sm)) {
      continue;
    }
    return ReplaceWith(crossentropy_softmax_1hot_with_bias_dx(
                           Var(xent_grad->inputs()[0]), Var(sm), Var(xent_grad->inputs()[2])),
                       node);
  }
  return std::nullopt;
}

// CrossentropySoftmax1HotWithBiasDx(fill(nll, v), sm, y) with v of one entry and nll the
// cross-entropy whose softmax is sm (so one entry per row of sm) -> Dx(v, sm, y): the op
// broadcasts v itself (Aesara's local_useless_crossentropy_softmax_1hot_with_bias_dx_alloc,
// which sees an Alloc where Kiln's gradient has the fill).
Replacement UselessDxFillRule(const FunctionGraph&, Apply& node) {
  if (!node.op().Is<CrossentropySoftmax1HotWithBiasDx>()) return std::nullopt;
  const VariablePtr& dy = node.inputs()[0];
  const VariablePtr& sm = node.inputs()[1];
  const Apply* fill = BinaryOwner(dy, K::kSecond);
  if (fill == nullptr || dy->tensor_type()->ndim() != 1) return std::nullopt;
  const VariablePtr& model = fill->inputs()[0];
  const VariablePtr& value = fill->inputs()[1];
  const Apply* xent = model->owner();
  if (xent == nullptr || !xent->op().Is<CrossentropySoftmaxArgmax1HotWithBias>() ||
      xent->output(0) != model || xent->output(1) != sm ||
      value->tensor_type()->broadcastable() != std::vector<bool>{true}) {
    return std::nullopt;
  }
  return ReplaceWith(
      crossentropy_softmax_1hot_with_bias_dx(Var(value), Var(sm), Var(node.inputs()[2])), node);
}

// The axes an argmax node reduces, sorted.
std::vector<int> ArgmaxAxes(const Apply& node) {
  if (node.op().Is<Argmax>()) return node.op().As<Argmax>()->axis();
  return node.op().As<MaxAndArgmax>()->axis();
}

// argmax(f(x)) -> argmax(x) for f increasing (exp, log, tanh, sigmoid, softplus, and softmax or
// SoftmaxWithBias along exactly the reduced axis); a MaxAndArgmax only when its maximum is not
// used. (Aesara's local_argmax_pushdown, which also requires the axes to agree for softmax here.)
Replacement ArgmaxPushdownRule(const FunctionGraph& fg, Apply& node) {
  const bool pair = node.op().Is<MaxAndArgmax>();
  if (!pair && !node.op().Is<Argmax>()) return std::nullopt;
  if (pair && !fg.clients(node.output(0).get()).empty()) return std::nullopt;
  const VariablePtr& x = node.inputs()[0];
  const Apply* f = x->owner();
  if (f == nullptr) return std::nullopt;
  const std::vector<int> axes = ArgmaxAxes(node);
  Var pre_x;
  const std::optional<K> kind = ScalarKindOf(*f);
  if (kind && (*kind == K::kExp || *kind == K::kLog || *kind == K::kTanh || *kind == K::kSigmoid ||
               *kind == K::kSoftplus)) {
    pre_x = Var(f->inputs()[0]);
  } else if (f->op().Is<Softmax>()) {
    const std::optional<int>& along = f->op().As<Softmax>()->axis();
    const int ndim = x->tensor_type()->ndim();
    const bool same =
        along ? axes == std::vector<int>{*along} : static_cast<int>(axes.size()) == ndim;
    if (!same) return std::nullopt;
    pre_x = Var(f->inputs()[0]);
  } else if (f->op().Is<SoftmaxWithBias>()) {
    if (axes != std::vector<int>{1}) return std::nullopt;
    pre_x = Var(f->inputs()[0]) + dimshuffle(Var(f->inputs()[1]), {kX, 0});
  } else {
    return std::nullopt;
  }
  if (!pre_x.ok() || pre_x.ndim() != x->tensor_type()->ndim()) return std::nullopt;
  if (!pair) return ReplaceWith(argmax(pre_x, Axes(axes)), node);
  // The unused maximum is replaced too (its value changes, as in Aesara): same types needed.
  const std::vector<Var> both = max_and_argmax(pre_x, Axes(axes));
  if (!both[0].ok() || !both[1].ok() || !SameType(both[0].ptr(), node.output(0)) ||
      !SameType(both[1].ptr(), node.output(1))) {
    return std::nullopt;
  }
  return std::vector<VariablePtr>{both[0].ptr(), both[1].ptr()};
}

}  // namespace

std::optional<std::pair<Var, Var>> SplitSoftmaxBias(const VariablePtr& x) {
  if (x->owner() == nullptr || ScalarKindOf(*x->owner()) != K::kAdd) return std::nullopt;
  if (x->tensor_type() == nullptr || x->tensor_type()->ndim() != 2) return std::nullopt;
  std::vector<Var> vectors, non_vectors;
  for (const VariablePtr& in : x->owner()->inputs()) {
    const TensorType* t = in->tensor_type();
    if (t->broadcastable() != std::vector<bool>{true, false}) {
      non_vectors.push_back(Var(in));
      continue;
    }
    const Apply* owner = in->owner();
    if (owner != nullptr && owner->op().Is<DimShuffle>() &&
        owner->inputs()[0]->tensor_type()->broadcastable() == std::vector<bool>{false}) {
      vectors.push_back(Var(owner->inputs()[0]));
    } else {
      vectors.push_back(dimshuffle(Var(in), {1}));
    }
  }
  if (vectors.empty()) return std::nullopt;
  if (non_vectors.empty()) {  // all vectors: one of them broadcast as the matrix
    non_vectors.push_back(dimshuffle(vectors.back(), {kX, 0}));
    vectors.pop_back();
    if (vectors.empty()) return std::nullopt;
  }
  auto total = [](const std::vector<Var>& terms) {
    Var r = terms[0];
    for (size_t i = 1; i < terms.size(); ++i) r = add(r, terms[i]);
    return r;
  };
  Var m = total(non_vectors), b = total(vectors);
  if (!m.ok() || !b.ok()) return std::nullopt;
  return std::pair<Var, Var>{std::move(m), std::move(b)};
}

std::vector<RewriteRule> NnetRules() {
  std::vector<RewriteRule> rules = {
      // softmax(x + b) -> SoftmaxWithBias(x, b)   (Aesara's local_softmax_with_bias)
      PhaseRule("local_softmax_with_bias", "specialize", {OpClassIdOf<Softmax>()},
                SoftmaxWithBiasRule),
      // CrossentropyCategorical1Hot(softmax(x), y) -> CrossentropySoftmaxArgmax1HotWithBias
      PhaseRule("crossentropy_to_crossentropy_with_softmax", "specialize",
                {OpClassIdOf<CrossentropyCategorical1Hot>()}, CrossentropyWithSoftmaxRule),
      // SoftmaxWithBias(x, b) -> CrossentropySoftmaxArgmax1HotWithBias(x, b, y)[1] when the
      // latter is computed anyway
      PhaseRule("graph_merge_softmax_with_crossentropy_softmax", "specialize",
                {OpClassIdOf<SoftmaxWithBias>()}, MergeSoftmaxWithCrossentropyRule),
      // softmax's gradient of CrossentropyCategorical1HotGrad -> CrossentropySoftmax1HotWithBiasDx
      ElemwiseRule("local_softmax_grad_to_crossentropy_with_softmax_grad", "specialize",
                   {K::kMul}, SoftmaxGradToDxRule),
      // CrossentropySoftmax1HotWithBiasDx(fill(nll, v), sm, y) -> Dx(v, sm, y)
      PhaseRule("local_useless_crossentropy_softmax_1hot_with_bias_dx_alloc", "specialize",
                {OpClassIdOf<CrossentropySoftmax1HotWithBiasDx>()}, UselessDxFillRule),
      // argmax(exp(x)) -> argmax(x)   (Aesara's local_argmax_pushdown)
      PhaseRule("local_argmax_pushdown", "specialize",
                {OpClassIdOf<Argmax>(), OpClassIdOf<MaxAndArgmax>()}, ArgmaxPushdownRule),
  };
  for (RewriteRule& r : NnetAdvancedIndexingRules()) rules.push_back(std::move(r));
  return rules;
}

}  // namespace kiln
