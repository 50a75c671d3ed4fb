// canonicalize and specialize: the rules that use the lengths constant slices give (issue 40's
// radon graph): a SpecifyShape the graph already proves lifted and removed, slices that tile a
// vector made one Split (specialize), and the sum of a MakeVector made a sum of its elements
// (canonicalize). Each rule reads `before -> after`.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/graph/constructors.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/passes/passes.h"
#include "core/passes/rule_util.h"
#include "core/rewrite/pattern.h"

namespace kiln {
namespace {

// How far KnownLength looks: levels below the variable, and nodes in all.
constexpr int kLengthDepth = 12;
constexpr int kLengthBudget = 64;
// Bounds and sizes past this (2^62) are clamped to it: no length is that large.
constexpr double kHugeBound = 4611686018427387904.0;

std::optional<int64_t> KnownLength(const VariablePtr& v, int axis, int depth, int& budget);

// The [start, stop) a slice with constant bounds (and no step) takes of a dim of length n, as
// Python clips it; nullopt for a slice whose bounds are not constants. `bounds` are the slice's
// scalar inputs, start then stop, as present.
std::optional<std::pair<int64_t, int64_t>> ClippedSlice(const IndexEntry& e,
                                                        const VariablePtr* bounds, int64_t n) {
  if (!e.is_slice || e.has_step) return std::nullopt;
  int64_t range[2] = {0, n};
  int next = 0;
  for (int k = 0; k < 2; ++k) {
    if (!(k == 0 ? e.has_start : e.has_stop)) continue;
    const std::optional<double> b = ScalarConstantValue(*bounds[next++]);
    if (!b || std::isnan(*b)) return std::nullopt;
    // Clamped before the conversion, which a bound past int64 would overflow.
    int64_t value = static_cast<int64_t>(std::clamp(*b, -kHugeBound, kHugeBound));
    if (value < 0) value += n;
    range[k] = std::clamp<int64_t>(value, 0, n);
  }
  return std::pair<int64_t, int64_t>{range[0], std::max(range[0], range[1])};
}

// The length along `axis` of a Subtensor's output, from its input's.
std::optional<int64_t> SubtensorLength(const Apply& node, int axis, int depth, int& budget) {
  const auto& op = static_cast<const Subtensor&>(node.op());
  int out_axis = 0, in_axis = 0;
  size_t scalar = 1;  // the next index scalar among node's inputs
  for (const IndexEntry& e : op.idx()) {
    const int scalars = e.is_slice ? e.has_start + e.has_stop + e.has_step : 1;
    if (e.is_slice && out_axis == axis) {
      const std::optional<int64_t> n = KnownLength(node.inputs()[0], in_axis, depth, budget);
      if (!n || scalar + scalars > node.inputs().size()) return std::nullopt;
      const auto range = ClippedSlice(e, &node.inputs()[scalar], *n);
      if (!range) return std::nullopt;
      return range->second - range->first;
    }
    out_axis += e.is_slice;
    ++in_axis;
    scalar += scalars;
  }
  // A dim past the index list: the input's.
  return KnownLength(node.inputs()[0], in_axis + (axis - out_axis), depth, budget);
}

// The length of v along `axis` when the graph proves it: v's static dim, or what constant slices,
// joins, splits, broadcasts, increments, dimshuffles, allocs and SpecifyShape make of the dims
// below, at most kLengthDepth levels and kLengthBudget nodes down (budget counts them).
std::optional<int64_t> KnownLength(const VariablePtr& v, int axis, int depth, int& budget) {
  const TensorType* t = v->tensor_type();
  if (t == nullptr || axis < 0 || axis >= t->ndim()) return std::nullopt;
  if (t->shape()[axis]) return *t->shape()[axis];
  const Apply* node = v->owner();
  if (node == nullptr || depth == 0 || --budget < 0) return std::nullopt;
  const Op& op = node->op();
  const std::vector<VariablePtr>& in = node->inputs();
  if (op.Is<Elemwise>()) {
    // A dim other than 1 among the inputs is the output's; all 1 makes 1.
    bool unknown = false;
    for (const VariablePtr& x : in) {
      if (x->tensor_type() == nullptr || x->tensor_type()->ndim() != t->ndim()) return std::nullopt;
      const std::optional<int64_t> n = KnownLength(x, axis, depth - 1, budget);
      if (!n) {
        unknown = true;
      } else if (*n != 1) {
        return n;
      }
    }
    return unknown ? std::nullopt : std::optional<int64_t>(1);
  }
  if (op.Is<Subtensor>()) return SubtensorLength(*node, axis, depth - 1, budget);
  if (op.Is<IncSubtensor>() || op.Is<AdvancedIncSubtensor1>() || op.Is<AdvancedIncSubtensor>()) {
    return KnownLength(in[0], axis, depth - 1, budget);  // x with some entries changed
  }
  if (op.Is<DimShuffle>()) {
    const int from = static_cast<const DimShuffle&>(op).new_order()[axis];
    return from == kX ? std::optional<int64_t>(1) : KnownLength(in[0], from, depth - 1, budget);
  }
  if (op.Is<SpecifyShape>() || op.Is<Alloc>()) {
    // SpecifyShape(x, *dims) and Alloc(value, *dims): one dim input per output dim, last.
    const size_t i = in.size() - t->ndim() + axis;
    const std::optional<int64_t> d = ConstantInt(in[i]);
    if (d && *d >= 0) return d;
    return op.Is<SpecifyShape>() ? KnownLength(in[0], axis, depth - 1, budget) : std::nullopt;
  }
  if (op.Is<Split>()) {
    // Piece k of Split(x, axis, sizes): sizes[k] along the axis, x's length along the others.
    const std::optional<int64_t> split_axis = ConstantInt(in[1]);
    if (!split_axis || !in[2]->is_constant()) return std::nullopt;
    if (*split_axis != axis) return KnownLength(in[0], axis, depth - 1, budget);
    const Tensor& sizes = static_cast<const Constant&>(*in[2]).data();
    if (sizes.ndim() != 1 || v->index() >= sizes.size()) return std::nullopt;
    const double size = sizes.ElementAsDouble(v->index());
    if (!(size >= 0 && size <= kHugeBound)) return std::nullopt;
    return static_cast<int64_t>(size);
  }
  if (op.Is<Join>()) {
    const std::optional<int64_t> join_axis = ConstantInt(in[0]);
    if (!join_axis) return std::nullopt;
    if ((*join_axis < 0 ? *join_axis + t->ndim() : *join_axis) != axis) {
      for (size_t i = 1; i < in.size(); ++i) {
        if (std::optional<int64_t> n = KnownLength(in[i], axis, depth - 1, budget)) return n;
      }
      return std::nullopt;
    }
    int64_t total = 0;
    for (size_t i = 1; i < in.size(); ++i) {
      const std::optional<int64_t> n = KnownLength(in[i], axis, depth - 1, budget);
      if (!n) return std::nullopt;
      total += *n;
    }
    return total;
  }
  return std::nullopt;
}

std::optional<int64_t> KnownLength(const VariablePtr& v, int axis) {
  int budget = kLengthBudget;
  return KnownLength(v, axis, kLengthDepth, budget);
}

// The dims SpecifyShape(x, *dims) asks for (nullopt: unchecked), when x's lengths prove them
// all (the constant slices, joins and broadcasts below); else nullopt.
std::optional<StaticShape> ProvenSpecifiedShape(const Apply& node) {
  const VariablePtr& x = node.inputs()[0];
  const TensorType* t = x->tensor_type();
  if (t == nullptr || static_cast<int>(node.inputs().size()) != 1 + t->ndim()) return std::nullopt;
  StaticShape dims(t->ndim());
  for (int d = 0; d < t->ndim(); ++d) {
    const std::optional<int64_t> want = ConstantInt(node.inputs()[1 + d]);
    if (!want) return std::nullopt;
    if (*want < 0) continue;  // unchecked
    const std::optional<int64_t> have = KnownLength(x, d);
    if (!have || *have != *want) return std::nullopt;
    dims[d] = *want;
  }
  return dims;
}

// specify_shape(x, s) -> x when x's type has the static shape s (PyTensor's
// local_useless_specify_shape); specify_shape(y[a:b], s) -> y[a:b] of static shape s when the
// constant bounds and y's proven length give s (the length PyTensor's static shape inference of
// slices gives, which Kiln's Subtensor types do not carry: the slice's new node carries it). The
// slice's every reader must be such a SpecifyShape: merge then makes their typed slices one, and
// never meets the untyped slice beside a typed one.
Replacement SpecifyShapeProven(const FunctionGraph& fg, Apply& node) {
  if (!ProvenSpecifiedShape(node)) return std::nullopt;
  const VariablePtr& x = node.inputs()[0];
  const TypePtr& specified = node.output_ptr(0)->type();
  if (x->type()->Equals(*specified)) return ReplaceWith(Var(x), node);
  const Apply* slice = x->owner();
  if (slice == nullptr || !slice->op().Is<Subtensor>()) return std::nullopt;
  // A static 1 decides how a value broadcasts, and a type must be one the slice's op infers again
  // when the graph travels (a proto, the disk cache): a length 1 keeps its SpecifyShape.
  const std::vector<StaticDim>& inferred = x->tensor_type()->shape();
  const std::vector<StaticDim>& wanted = node.output_ptr(0)->tensor_type()->shape();
  for (size_t d = 0; d < wanted.size(); ++d) {
    if (!inferred[d] && wanted[d] == StaticDim(1)) return std::nullopt;
  }
  for (const FunctionGraph::Client& c : fg.clients(x.get())) {
    if (c.node == nullptr || !c.node->op().Is<SpecifyShape>() ||
        !c.node->output_ptr(0)->type()->Equals(*specified)) {
      return std::nullopt;
    }
  }
  const ApplyPtr typed = Apply::Make(slice->op_ptr(), slice->inputs(), {specified});
  return ReplaceWith(Var(typed->output(0)), node);
}

// specify_shape(f(a, b), s) -> f(specify_shape(a, s_a), b) for an Elemwise f whose output's
// dims s are proven: each input gets the dims it must have (s where it is not broadcast, 1 where
// s is 1), down to the slices that local_useless_specify_shape types (PyTensor's
// local_specify_shape_lift, for the broadcasting inputs too). f's output must have no other
// reader, and f made again must have the specified type.
Replacement SpecifyShapeLift(const FunctionGraph& fg, Apply& node) {
  const std::optional<StaticShape> dims = ProvenSpecifiedShape(node);
  const VariablePtr& x = node.inputs()[0];
  const Apply* f = x->owner();
  if (!dims || f == nullptr || !f->op().Is<Elemwise>() || f->num_outputs() != 1 ||
      fg.clients(x.get()).size() != 1 || x->type()->Equals(*node.output_ptr(0)->type())) {
    return std::nullopt;
  }
  std::vector<Var> inputs;
  for (const VariablePtr& a : f->inputs()) {
    const TensorType* at = a->tensor_type();
    if (at == nullptr || at->ndim() != static_cast<int>(dims->size())) return std::nullopt;
    StaticShape want(at->ndim());
    bool specify = false;
    for (int d = 0; d < at->ndim(); ++d) {
      if (!(*dims)[d] || at->shape()[d]) continue;  // unchecked, or static already
      if (*(*dims)[d] == 1) {
        want[d] = 1;  // an output of length 1 has inputs of length 1
      } else {
        const std::optional<int64_t> n = KnownLength(a, d);
        if (!n) return std::nullopt;
        if (*n == 1) continue;  // broadcast
        want[d] = *n;
      }
      specify = true;
    }
    inputs.push_back(specify ? specify_shape(Var(a), want) : Var(a));
  }
  // With no input specified f is only made again: its inputs became static after f was made.
  const Var lifted_f = ApplyOp(f->op_ptr(), inputs);
  if (!lifted_f.ok() || !lifted_f->type()->Equals(*node.output_ptr(0)->type())) return std::nullopt;
  return ReplaceWith(lifted_f, node);
}

// A slice x[a:b] of x's first axis with constant bounds: its [a, b) in x of length n.
std::optional<std::pair<int64_t, int64_t>> FirstAxisSlice(const Apply& node, int64_t n) {
  if (!node.op().Is<Subtensor>()) return std::nullopt;
  const auto& op = static_cast<const Subtensor&>(node.op());
  if (op.idx().size() != 1) return std::nullopt;
  const IndexEntry& e = op.idx()[0];
  if (!e.is_slice || static_cast<int>(node.inputs().size()) != 1 + e.has_start + e.has_stop) {
    return std::nullopt;
  }
  return ClippedSlice(e, &node.inputs()[1], n);
}

// The pieces an existing Split{k}(x, 0, constant sizes) makes, as [start, stop) ranges.
std::optional<std::vector<std::pair<int64_t, int64_t>>> SplitRanges(const Apply& split) {
  const std::optional<int64_t> axis = ConstantInt(split.inputs()[1]);
  const Variable& sizes = *split.inputs()[2];
  if (!axis || *axis != 0 || !sizes.is_constant()) return std::nullopt;
  const Tensor& s = static_cast<const Constant&>(sizes).data();
  if (s.ndim() != 1) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int64_t start = 0;
  for (int64_t i = 0; i < s.size(); ++i) {
    const double size = s.ElementAsDouble(i);
    if (!(size >= 0 && size <= kHugeBound - static_cast<double>(start))) return std::nullopt;
    ranges.push_back({start, start + static_cast<int64_t>(size)});
    start += static_cast<int64_t>(size);
  }
  return ranges;
}

// x[0:a], x[a:b], ..., x[k:n] -> Split(x, 0, (a, b - a, ..., n - k)), when these slices with
// constant bounds of x's first axis, of proven length n, are all of x's slices and tile it (the
// pieces Aesara's and PyTensor's Join.grad make, which Kiln's makes as slices): one node for all.
Replacement SlicesToSplit(const FunctionGraph& fg, Apply& node) {
  const VariablePtr& x = node.inputs()[0];
  if (x->tensor_type() == nullptr || x->tensor_type()->ndim() == 0) return std::nullopt;
  const std::optional<int64_t> n = KnownLength(x, 0);
  if (!n) return std::nullopt;
  const std::optional<std::pair<int64_t, int64_t>> mine = FirstAxisSlice(node, *n);
  if (!mine) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const FunctionGraph::Client& c : fg.clients(x.get())) {
    if (c.node == nullptr || c.index != 0) continue;
    if (c.node->op().Is<Split>()) {
      // A Split of x made for a sibling slice: this slice takes its piece.
      const auto pieces = SplitRanges(*c.node);
      if (!pieces) continue;
      const auto it = std::find(pieces->begin(), pieces->end(), *mine);
      if (it != pieces->end()) {
        return ReplaceWith(Var(c.node->output(static_cast<int>(it - pieces->begin()))), node);
      }
      continue;
    }
    if (std::optional<std::pair<int64_t, int64_t>> r = FirstAxisSlice(*c.node, *n)) {
      ranges.push_back(*r);
    }
  }
  std::sort(ranges.begin(), ranges.end());
  ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
  if (ranges.size() < 2 || ranges.size() > static_cast<size_t>(SplitAttrs::kMaxSplits)) {
    return std::nullopt;
  }
  std::vector<int64_t> sizes;
  int64_t at = 0;
  for (const auto& [start, stop] : ranges) {
    if (start != at) return std::nullopt;  // a gap or an overlap
    sizes.push_back(stop - start);
    at = stop;
  }
  if (at != *n) return std::nullopt;
  const std::vector<Var> pieces = split(Var(x), sizes, 0);
  if (!pieces[0].ok()) return std::nullopt;
  // The pieces typed with their lengths (Split's own inference leaves the axis unknown), but for
  // a length 1: a static 1 decides how a value broadcasts, and must be one that the graph's ops
  // infer again when it travels (a SpecifyShape keeps it).
  const Apply& made = *pieces[0]->owner();
  std::vector<TypePtr> types;
  for (int64_t size : sizes) {
    StaticShape shape = x->tensor_type()->shape();
    shape[0] = size == 1 ? StaticDim() : StaticDim(size);
    types.push_back(TensorType::Make(x->tensor_type()->dtype(), std::move(shape)));
  }
  const ApplyPtr typed = Apply::Make(made.op_ptr(), made.inputs(), types);
  const auto k = std::find(ranges.begin(), ranges.end(), *mine) - ranges.begin();
  return ReplaceWith(Var(typed->output(static_cast<int>(k))), node);
}

// sum(MakeVector(a, b, ...)) -> a + b + ... in the sum's accumulator dtype (PyTensor's
// local_sum_make_vector): the scalars' elementwise chain then fuses with what made them.
Replacement SumOfMakeVector(const FunctionGraph&, Apply& node) {
  const auto& op = static_cast<const CAReduce&>(node.op());
  const Apply* mv = node.inputs()[0]->owner();
  if (op.reduce() != ReduceKind::kSum || mv == nullptr || !mv->op().Is<MakeVector>() ||
      mv->num_inputs() == 0 || node.output_ptr(0)->tensor_type()->ndim() != 0) {
    return std::nullopt;
  }
  const DType acc = op.acc_dtype().value_or(node.output_ptr(0)->tensor_type()->dtype());
  std::vector<Var> terms;
  for (const VariablePtr& a : mv->inputs()) {
    terms.push_back(a->tensor_type()->dtype() == acc ? Var(a) : cast(Var(a), acc));
  }
  return ReplaceWith(terms.size() == 1 ? terms[0] : ApplyOp(Elemwise::Make(ScalarOpKind::kAdd), terms),
                     node);
}

}  // namespace

std::vector<RewriteRule> SplitShapeRules(const std::string& phase) {
  const std::vector<OpClassId> specify = {OpClassIdOf<SpecifyShape>()};
  std::vector<RewriteRule> rules = {
      PhaseRule("local_useless_specify_shape", phase, specify, SpecifyShapeProven),
      PhaseRule("local_specify_shape_lift", phase, specify, SpecifyShapeLift)};
  if (phase == "canonicalize") {
    rules.push_back(
        PhaseRule("local_sum_make_vector", phase, {OpClassIdOf<CAReduce>()}, SumOfMakeVector));
  } else {
    // After canonicalize, whose rules make one-element slices indexes (and would otherwise
    // meet pieces of a Split).
    rules.push_back(PhaseRule("local_subtensor_slices_to_split", phase,
                              {OpClassIdOf<Subtensor>()}, SlicesToSplit));
  }
  return rules;
}

}  // namespace kiln
