// canonicalize and specialize: Aesara's rules that take scalar factors and broadcast divisors
// out of sums and products. Each rule reads `before -> after`.
#include <algorithm>
#include <vector>

#include "core/graph/constructors.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/passes/passes.h"
#include "core/passes/rule_util.h"
#include "core/rewrite/pattern.h"

namespace kiln {
namespace {

using K = ScalarOpKind;

// The same reduction (kind, dtype and accumulator) over other axes.
Var Reduce(const CAReduce& op, const Var& x, std::optional<std::vector<int>> axis) {
  return ApplyOp(
      OpPtr(std::make_shared<CAReduce>(op.reduce(), std::move(axis), op.dtype(), op.acc_dtype())),
      {x});
}

// v as a 0-d variable (v has only broadcast dims).
Var AsScalar(const VariablePtr& v) {
  const Apply* ds = v->owner();
  if (v->tensor_type()->ndim() == 0) return Var(v);
  if (ds != nullptr && ds->op().Is<DimShuffle>() &&
      ds->inputs()[0]->tensor_type()->ndim() == 0) {
    return Var(ds->inputs()[0]);
  }
  return reshape(Var(v), std::vector<int64_t>{});
}

// The reduced axes of op over an input of n dims.
std::vector<int> ReducedAxes(const CAReduce& op, int n) {
  if (op.axis()) return *op.axis();
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;
  return all;
}

// v broadcast to ndim dims (built already lifted, as canonicalize would leave it).
Var Broadcast(const Var& v, int ndim) {
  return ndim == 0 ? v : dimshuffle(v, std::vector<int>(ndim, kX));
}

// The number of elements one output element reduces, in dtype, broadcast to ndim dims.
Var CountReduced(const Var& x, const std::vector<int>& axes, DType dtype, int ndim) {
  Var n = Broadcast(axes.empty() ? scalar_constant(int64_t{1}, DType::kInt64) : shape_i(x, axes[0]),
                    ndim);
  for (size_t i = 1; i < axes.size(); ++i) n = n * Broadcast(shape_i(x, axes[i]), ndim);
  return cast(n, dtype);
}

// sum(s * t) -> s * sum(t); prod(s * t) -> s**n * prod(t) (n the elements reduced), for factors
// s with only broadcast dims; sum(-x) -> -sum(x) (Aesara's local_sum_prod_mul_by_scalar; Aesara
// takes n as the whole size of t even when only some axes are reduced, which is not the product).
Replacement SumProdOfScaled(const FunctionGraph&, Apply& node) {
  const auto& op = static_cast<const CAReduce&>(node.op());
  if (op.reduce() != ReduceKind::kSum && op.reduce() != ReduceKind::kProd) return std::nullopt;
  const VariablePtr& in = node.inputs()[0];
  const std::optional<K> kind = ElemwiseKind(*in);
  if (kind == K::kNeg && op.reduce() == ReduceKind::kSum) {
    return ReplaceWith(-ApplyOp(node.op_ptr(), {Var(in->owner()->inputs()[0])}), node);
  }
  if (kind != K::kMul) return std::nullopt;
  std::vector<Var> scalars, rest;
  for (const VariablePtr& f : in->owner()->inputs()) {
    if (BroadcastsAsScalar(*f) && f->tensor_type()->dtype() == in->tensor_type()->dtype()) {
      scalars.push_back(AsScalar(f));
    } else {
      rest.emplace_back(f);
    }
  }
  if (scalars.empty() || rest.empty()) return std::nullopt;
  Var t = rest.size() == 1 ? rest[0] : ApplyOp(Elemwise::Make(K::kMul), rest);
  if (t.type().shape() != in->tensor_type()->shape()) return std::nullopt;  // s broadcast t
  Var result = ApplyOp(node.op_ptr(), {t});
  const int nd = node.output_ptr(0)->tensor_type()->ndim();
  const Var n = op.reduce() == ReduceKind::kProd
                    ? CountReduced(t, ReducedAxes(op, t.ndim()), in->tensor_type()->dtype(), nd)
                    : Var();
  for (const Var& s : scalars) {
    result = result * (n.ok() ? pow(Broadcast(s, nd), n) : Broadcast(s, nd));
  }
  return ReplaceWith(result, node);
}

// sum(a / b', axes) -> sum(a, axes) / b and prod(a / b', axes) -> prod(a, axes) / b**n, where
// b' is b broadcast (a DimShuffle adding dims) along reduced axes; the other reduced axes are
// summed after the division (Aesara's local_sum_prod_div_dimshuffle).
Replacement SumProdOfBroadcastQuotient(const FunctionGraph&, Apply& node) {
  const auto& op = static_cast<const CAReduce&>(node.op());
  if (op.reduce() != ReduceKind::kSum && op.reduce() != ReduceKind::kProd) return std::nullopt;
  const VariablePtr& q = node.inputs()[0];
  if (ElemwiseKind(*q) != K::kTrueDiv) return std::nullopt;
  const VariablePtr &a = q->owner()->inputs()[0], &b = q->owner()->inputs()[1];
  // a not broadcast itself: then the count of terms along the moved axes is a's.
  if (b->owner() == nullptr || !b->owner()->op().Is<DimShuffle>() ||
      a->tensor_type()->shape() != q->tensor_type()->shape()) {
    return std::nullopt;
  }
  const std::vector<int>& order = static_cast<const DimShuffle&>(b->owner()->op()).new_order();
  const std::vector<int> axes = ReducedAxes(op, q->tensor_type()->ndim());
  std::vector<int> moved, remaining;
  for (int k : axes) (order[k] == kX ? moved : remaining).push_back(k);
  if (moved.empty()) return std::nullopt;
  // Once the moved axes are reduced, the remaining ones shift down past them.
  for (int& r : remaining) {
    r -= static_cast<int>(std::count_if(moved.begin(), moved.end(), [&](int k) { return k < r; }));
  }
  std::vector<int> new_order;
  for (int k = 0; k < static_cast<int>(order.size()); ++k) {
    if (std::find(moved.begin(), moved.end(), k) == moved.end()) new_order.push_back(order[k]);
  }
  const Var inner = b->owner()->inputs()[0];
  bool identity = static_cast<int>(new_order.size()) == inner.ndim();
  for (size_t k = 0; identity && k < new_order.size(); ++k) {
    identity = new_order[k] == static_cast<int>(k);
  }
  Var divisor = identity ? inner : dimshuffle(inner, new_order);  // no DimShuffle{} of a scalar
  if (op.reduce() == ReduceKind::kProd) {
    divisor = pow(divisor, CountReduced(Var(a), moved, a->tensor_type()->dtype(), divisor.ndim()));
  }
  Var result = true_div(Reduce(op, Var(a), moved), divisor);
  if (!remaining.empty()) result = Reduce(op, result, remaining);
  return ReplaceWith(result, node);
}

}  // namespace

std::vector<RewriteRule> SumProdRules(const std::string& phase) {
  const std::vector<OpClassId> reduce = {OpClassIdOf<CAReduce>()};
  std::vector<RewriteRule> rules = {
      PhaseRule("local_sum_prod_div_dimshuffle", phase, reduce, SumProdOfBroadcastQuotient)};
  if (phase == "specialize") {
    rules.push_back(PhaseRule("local_sum_prod_mul_by_scalar", phase, reduce, SumProdOfScaled));
  }
  return rules;
}

}  // namespace kiln
