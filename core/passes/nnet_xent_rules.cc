// Aesara's local_advanced_indexing_crossentropy_onehot and its _grad ("specialize"): the negative
// log-likelihood written with advanced indexing, as the Theano tutorials write it,
//   -log(softmax(x))[arange(y.shape[0]), y]   or   -log(softmax(x)[arange(y.shape[0]), y]),
// becomes CrossentropySoftmaxArgmax1HotWithBias, and its gradient
// CrossentropySoftmax1HotWithBiasDx.
//
// Kiln's graphs reach "specialize" in other forms than Aesara's, and the rules match those:
// - log(softmax(x)) is LogSoftmax already (Kiln's local_logsoftmax runs in "stabilize");
// - Kiln's softmax gradient is the elementwise (g - sum(g * sm, 1, keepdims)) * sm, not a
//   SoftmaxGrad op, and the canonicalizer has simplified it where g = T / sm (the gradient of
//   log(sm)) to T - sum(T, 1, keepdims) * sm; LogSoftmax's gradient is T - sum(T, 1,
//   keepdims) * exp(LogSoftmax(z)), where softmax(z) stands for sm. (So an explicit
//   log_softmax(x)[arange(n), y], which Aesara leaves alone, is fused too.)
// With T = AdvancedIncSubtensor(zeros, v, arange(len(y)), y) (one entry per row incremented),
// sum(T, 1)[i] = v[i], so both forms equal -v[i] * (sm[i] - onehot(y[i])) = Dx(-v, sm, y).
#include <optional>
#include <utility>
#include <vector>

#include "core/graph/constructors.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/nnet_xent.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/passes/nnet_rules.h"
#include "core/passes/rule_util.h"
#include "core/rewrite/pattern.h"

namespace kiln {
namespace {

using K = ScalarOpKind;

// The owner of v when it is an Elemwise of scalar op `kind` with `arity` inputs, or nullptr.
const Apply* ElemwiseOwner(const VariablePtr& v, K kind, size_t arity) {
  if (ElemwiseKind(*v) != kind || v->owner()->inputs().size() != arity) return nullptr;
  return v->owner();
}

// True for an op of class T along the rows of a matrix (axis 1).
template <typename T>
bool IsRowOp(const VariablePtr& v) {
  const Apply* node = v->owner();
  if (node == nullptr || !node->op().Is<T>() || v->tensor_type()->ndim() != 2) return false;
  const std::optional<int>& axis = node->op().template As<T>()->axis();
  return axis && *axis == 1;
}

// True when sm is a softmax along the rows of a matrix, as Softmax or SoftmaxWithBias.
bool IsRowSoftmaxVar(const VariablePtr& sm) {
  return IsRowOp<Softmax>(sm) ||
         (sm->owner() != nullptr && sm->owner()->op().Is<SoftmaxWithBias>());
}

// The row softmax sm is, for Dx: sm itself when a Softmax or SoftmaxWithBias, softmax(z) when
// sm is exp(LogSoftmax(z)) (LogSoftmax's gradient has that form); else nullopt.
std::optional<Var> SoftmaxFor(const VariablePtr& sm) {
  if (IsRowSoftmaxVar(sm)) return Var(sm);
  if (const Apply* e = ElemwiseOwner(sm, K::kExp, 1);
      e != nullptr && IsRowOp<LogSoftmax>(e->inputs()[0])) {
    return softmax(Var(e->inputs()[0]->owner()->inputs()[0]), 1);
  }
  return std::nullopt;
}

// The (x, b) whose CrossentropySoftmaxArgmax1HotWithBias computes the softmax of the node
// `softmax` (a Softmax, LogSoftmax or SoftmaxWithBias): SoftmaxWithBias's inputs, x + b split as
// local_softmax_with_bias splits it, or x and zeros of one row (Aesara's zeros_like(x[0]), which
// its rewrites leave as Alloc(0, x.shape[1])).
std::pair<Var, Var> CrossentropyArgs(const Apply& softmax) {
  if (softmax.op().Is<SoftmaxWithBias>()) {
    return {Var(softmax.inputs()[0]), Var(softmax.inputs()[1])};
  }
  if (std::optional<std::pair<Var, Var>> split = SplitSoftmaxBias(softmax.inputs()[0])) {
    return *std::move(split);
  }
  const Var x(softmax.inputs()[0]);
  const Var zero = constant(Tensor::Zeros(x.dtype(), {1}));
  return {x, alloc(zero, {shape_i(x, 1)})};
}

// True when `rows` is arange(len(labels)): ARange(0, Shape_i{0}(labels), 1), ARange(0, L, 1)
// or the constant [0, ..., L - 1] for labels of static length L (Aesara's
// _check_rows_is_arange_len_labels, with Kiln's static shapes for its shape feature).
bool IsArangeOfLength(const VariablePtr& rows, const VariablePtr& labels) {
  const TensorType* rt = rows->tensor_type();
  const TensorType* lt = labels->tensor_type();
  if (rt == nullptr || lt == nullptr || rt->ndim() != 1 || lt->ndim() != 1 ||
      !IsInteger(rt->dtype()) || !IsInteger(lt->dtype())) {
    return false;
  }
  const std::optional<int64_t> length = lt->shape()[0];
  if (rows->is_constant()) {
    const Tensor& t = static_cast<const Constant&>(*rows).data();
    if (!length || t.ndim() != 1 || t.size() != *length) return false;
    for (int64_t i = 0; i < t.size(); ++i) {
      if (t.ElementAsDouble(i) != static_cast<double>(i)) return false;
    }
    return true;
  }
  const Apply* range = rows->owner();
  if (range == nullptr || !range->op().Is<ARange>()) return false;
  const std::vector<VariablePtr>& in = range->inputs();
  if (ScalarConstantValue(*in[0]) != 0.0 || ScalarConstantValue(*in[2]) != 1.0) return false;
  const Apply* stop = in[1]->owner();
  if (stop != nullptr && stop->op().Is<ShapeI>()) {
    return stop->op().As<ShapeI>()->i() == 0 && stop->inputs()[0] == labels;
  }
  const std::optional<double> n = ScalarConstantValue(*in[1]);
  return n && length && *n == static_cast<double>(*length);
}

// The (rows, labels) of x[rows, labels] (an AdvancedSubtensor of two index tensors on a matrix),
// when rows is arange(len(labels)), or nullopt.
std::optional<std::pair<VariablePtr, VariablePtr>> PickedRows(const Apply& index) {
  if (!index.op().Is<AdvancedSubtensor>() || index.inputs().size() != 3) return std::nullopt;
  const std::vector<AdvIndexEntry>& idx = index.op().As<AdvancedSubtensor>()->idx();
  if (idx.size() != 2 || idx[0].kind != AdvIndexEntry::kTensor ||
      idx[1].kind != AdvIndexEntry::kTensor || index.inputs()[0]->tensor_type()->ndim() != 2) {
    return std::nullopt;
  }
  const VariablePtr& rows = index.inputs()[1];
  const VariablePtr& labels = index.inputs()[2];
  if (!IsArangeOfLength(rows, labels)) return std::nullopt;
  return std::pair{rows, labels};
}

// log(softmax(x))[arange(len(y)), y] (log(softmax) being LogSoftmax by now) and
// log(softmax(x)[arange(len(y)), y]) -> -CrossentropySoftmaxArgmax1HotWithBias(x, b, y)[0].
Replacement AdvancedIndexingCrossentropyRule(const FunctionGraph&, Apply& node) {
  const Apply* index = nullptr;
  const Apply* softmax = nullptr;
  if (node.op().Is<AdvancedSubtensor>()) {
    index = &node;
    const VariablePtr& source = node.inputs()[0];
    if (IsRowOp<LogSoftmax>(source)) {
      softmax = source->owner();
    } else if (const Apply* log = ElemwiseOwner(source, K::kLog, 1);
               log != nullptr && IsRowSoftmaxVar(log->inputs()[0])) {
      softmax = log->inputs()[0]->owner();
    }
  } else if (ElemwiseOwner(node.output(0), K::kLog, 1) != nullptr) {
    index = node.inputs()[0]->owner();
    if (index != nullptr && index->op().Is<AdvancedSubtensor>() &&
        IsRowSoftmaxVar(index->inputs()[0])) {
      softmax = index->inputs()[0]->owner();
    }
  }
  if (softmax == nullptr) return std::nullopt;
  const std::optional<std::pair<VariablePtr, VariablePtr>> picked = PickedRows(*index);
  if (!picked) return std::nullopt;
  const auto [x, b] = CrossentropyArgs(*softmax);
  const std::vector<Var> xent =
      crossentropy_softmax_argmax_1hot_with_bias(x, b, Var(picked->second));
  return ReplaceWith(Negate(xent[0]), node);
}

// -v, folding the sign into a constant numerator: -(-1 / d) -> reciprocal(d) (as Aesara's
// canonical form has it), -(c / d) -> (-c) / d (constant-folded), -(-u) -> u.
Var Negated(const Var& v) {
  if (const Apply* div = ElemwiseOwner(v.ptr(), K::kTrueDiv, 2);
      div != nullptr && div->inputs()[0]->is_constant()) {
    const VariablePtr& c = div->inputs()[0];
    const Var d(div->inputs()[1]);
    if (ScalarConstantValue(*c) == -1.0 && c->tensor_type()->ndim() <= d.ndim()) {
      return reciprocal(d);
    }
    return true_div(Negate(Var(c)), d);
  }
  return Negate(v);
}

// The per-row gradient dy for Dx, as one entry per row or one broadcast entry: v = fill(m, c)
// with c of one entry gives c itself (the op broadcasts it); a scalar becomes a 1-vector.
Var PerRow(const Var& v) {
  Var r = v;
  if (const Apply* fill = ElemwiseOwner(v.ptr(), K::kSecond, 2)) {
    const TensorType* c = fill->inputs()[1]->tensor_type();
    const std::vector<bool>& bc = c->broadcastable();
    if (c->ndim() <= 1 && std::all_of(bc.begin(), bc.end(), [](bool b) { return b; })) {
      r = Var(fill->inputs()[1]);
    }
  }
  return r.ok() && r.ndim() == 0 ? dimshuffle(r, {kX}) : r;
}

// The summed variable of DimShuffle{0,x}(Sum{axis=[1]}(v)), or nullptr.
const VariablePtr* RowSumOf(const VariablePtr& d) {
  const Apply* shuffle = d->owner();
  if (shuffle == nullptr || !shuffle->op().Is<DimShuffle>() ||
      static_cast<const DimShuffle&>(shuffle->op()).new_order() != std::vector<int>{0, kX}) {
    return nullptr;
  }
  const Apply* total = shuffle->inputs()[0]->owner();
  if (total == nullptr || !total->op().Is<CAReduce>()) return nullptr;
  const auto& reduce = static_cast<const CAReduce&>(total->op());
  if (reduce.reduce() != ReduceKind::kSum || reduce.axis() != std::vector<int>{1}) return nullptr;
  return &total->inputs()[0];
}

// True when z is zeros: a constant 0 (through fill and DimShuffle) or Alloc of one.
bool IsZeros(const VariablePtr& z) {
  if (ScalarConstantValue(*z) == 0.0) return true;
  const Apply* owner = z->owner();
  return owner != nullptr && owner->op().Is<Alloc>() &&
         ScalarConstantValue(*owner->inputs()[0]) == 0.0;
}

// T = AdvancedIncSubtensor(zeros, v, arange(len(y)), y) incrementing a float matrix: {v, y}.
struct OneHotIncrement {
  VariablePtr increment, labels;
};
std::optional<OneHotIncrement> OneHotIncrementOf(const VariablePtr& t) {
  const Apply* inc = t->owner();
  if (inc == nullptr || !inc->op().Is<AdvancedIncSubtensor>() || inc->inputs().size() != 4) {
    return std::nullopt;
  }
  const auto& attrs = inc->op().As<AdvancedIncSubtensor>()->attrs();
  const std::vector<AdvIndexEntry>& idx = attrs.idx_list;
  if (attrs.set_instead_of_inc || attrs.ignore_duplicates || idx.size() != 2 ||
      idx[0].kind != AdvIndexEntry::kTensor || idx[1].kind != AdvIndexEntry::kTensor ||
      t->tensor_type()->ndim() != 2 || !IsFloat(t->tensor_type()->dtype())) {
    return std::nullopt;
  }
  const std::vector<VariablePtr>& in = inc->inputs();
  if (!IsZeros(in[0]) || in[1]->tensor_type()->ndim() > 1 || !IsArangeOfLength(in[2], in[3])) {
    return std::nullopt;
  }
  return OneHotIncrement{in[1], in[3]};
}

// The gradient of log(sm[rows, y]) carries v = [-](c / (sm[rows, y] * r)) for the cotangent c:
// the per-row gradient -c / r (Aesara's case 1 of the _grad rewrite), or nullopt.
std::optional<Var> CotangentOverPicked(const VariablePtr& v, const VariablePtr& sm,
                                       const VariablePtr& labels) {
  bool negated = false;
  VariablePtr incr = v;
  if (const Apply* neg = ElemwiseOwner(incr, K::kNeg, 1)) {
    negated = true;
    incr = neg->inputs()[0];
  }
  const Apply* div = ElemwiseOwner(incr, K::kTrueDiv, 2);
  if (div == nullptr) return std::nullopt;
  const VariablePtr& num = div->inputs()[0];
  const VariablePtr& denom = div->inputs()[1];
  if (num->tensor_type()->ndim() > 1) return std::nullopt;
  auto is_picked = [&](const VariablePtr& p) {
    const Apply* index = p->owner();
    if (index == nullptr || !index->op().Is<AdvancedSubtensor>() || index->inputs()[0] != sm) {
      return false;
    }
    const std::optional<std::pair<VariablePtr, VariablePtr>> picked = PickedRows(*index);
    return picked && picked->second == labels;
  };
  std::vector<Var> rest;
  if (!is_picked(denom)) {
    if (ElemwiseKind(*denom) != K::kMul) return std::nullopt;
    const Apply* product = denom->owner();
    bool found = false;
    for (const VariablePtr& f : product->inputs()) {
      if (!found && is_picked(f)) {
        found = true;
      } else if (f->tensor_type()->ndim() > 1) {
        return std::nullopt;
      } else {
        rest.push_back(Var(f));
      }
    }
    if (!found) return std::nullopt;
  }
  Var out = PerRow(Var(num));
  if (!negated) out = Negated(out);
  for (const Var& r : rest) out = true_div(out, r);
  return out.ok() && out.ndim() == 0 ? dimshuffle(out, {kX}) : out;
}

// The gradient of the nll through the softmax, as Kiln's canonical graphs have it, ->
// CrossentropySoftmax1HotWithBiasDx(dy, sm, y):
//   T - sum(T, 1, keepdims) * sm              with T = inc(zeros, v, arange(len(y)), y): dy = -v
//   (T - sum(T * sm, 1, keepdims)) * sm       the same T with v = c / sm[arange(len(y)), y]:
//                                             dy = -c
Replacement AdvancedIndexingCrossentropyGradRule(const FunctionGraph&, Apply& node) {
  if (node.inputs().size() != 2) return std::nullopt;
  const std::optional<K> kind = ElemwiseKind(*node.output(0));
  for (int side : {0, 1}) {
    VariablePtr t, sm;
    bool through_product = false;
    if (kind == K::kSub) {  // T - rowsum(T) * sm
      if (side == 1) break;
      t = node.inputs()[0];
      const Apply* product = ElemwiseOwner(node.inputs()[1], K::kMul, 2);
      if (product == nullptr) return std::nullopt;
      for (int p : {0, 1}) {
        const VariablePtr* summed = RowSumOf(product->inputs()[p]);
        if (summed != nullptr && *summed == t) sm = product->inputs()[1 - p];
      }
    } else {  // (T - rowsum(T * sm)) * sm
      sm = node.inputs()[1 - side];
      const Apply* diff = ElemwiseOwner(node.inputs()[side], K::kSub, 2);
      if (diff == nullptr) continue;
      t = diff->inputs()[0];
      const VariablePtr* summed = RowSumOf(diff->inputs()[1]);
      const Apply* product = summed == nullptr ? nullptr : ElemwiseOwner(*summed, K::kMul, 2);
      if (product == nullptr || !((product->inputs()[0] == t && product->inputs()[1] == sm) ||
                                  (product->inputs()[0] == sm && product->inputs()[1] == t))) {
        continue;
      }
      through_product = true;
    }
    if (sm == nullptr) continue;
    const std::optional<Var> softmax_value = SoftmaxFor(sm);
    if (!softmax_value) continue;
    const std::optional<OneHotIncrement> inc = OneHotIncrementOf(t);
    if (!inc) continue;
    Var dy;
    if (through_product) {
      const std::optional<Var> c = CotangentOverPicked(inc->increment, sm, inc->labels);
      if (!c) continue;
      dy = *c;
    } else {
      dy = Negated(PerRow(Var(inc->increment)));
    }
    return ReplaceWith(crossentropy_softmax_1hot_with_bias_dx(dy, *softmax_value, Var(inc->labels)),
                       node);
  }
  return std::nullopt;
}

}  // namespace

std::vector<RewriteRule> NnetAdvancedIndexingRules() {
  return {
      // -log(softmax(x))[arange(len(y)), y] -> CrossentropySoftmaxArgmax1HotWithBias(x, b, y)[0]
      // (LogSoftmax or log of the indexed softmax as well)
      RewriteRule{"local_advanced_indexing_crossentropy_onehot",
                  {"specialize"},
                  {OpClassIdOf<AdvancedSubtensor>(), OpClassIdOf<Elemwise>()},
                  AdvancedIndexingCrossentropyRule,
                  {K::kLog}},
      // its gradient through the softmax -> CrossentropySoftmax1HotWithBiasDx(dy, sm, y)
      ElemwiseRule("local_advanced_indexing_crossentropy_onehot_grad", "specialize",
                   {K::kSub, K::kMul}, AdvancedIndexingCrossentropyGradRule),
  };
}

}  // namespace kiln
