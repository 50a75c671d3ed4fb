// ONNX's reductions (Reduce*, ArgMax, ArgMin, CumSum) and the softmax family, as Kiln's CAReduce,
// Argmax, CumOp and Softmax ops. Axes given as inputs may be computed at run time
// (proto/onnx/run_time_axes.h).
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/ifelse.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "proto/onnx/import_node.h"
#include "proto/onnx/run_time_axes.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

// The reduction's axes (attribute before `input_from`, else input 1), normalized; nullopt:
// every axis. An empty list reduces nothing when noop_with_empty_axes is set.
absl::StatusOr<std::optional<std::vector<int>>> ReduceAxes(const ImportNode& n, const Var& x,
                                                           int64_t input_from) {
  std::vector<int64_t> axes;
  if (n.opset() < input_from) {
    axes = n.Ints("axes");
  } else if (n.has(1)) {
    absl::StatusOr<std::vector<int64_t>> given = n.ConstantInts(1, "axes");
    if (!given.ok()) return given.status();
    axes = *given;
  }
  if (axes.empty()) {
    if (n.Int("noop_with_empty_axes", 0) != 0)
      return std::optional<std::vector<int>>(std::vector<int>{});
    return std::optional<std::vector<int>>();
  }
  std::vector<int> out;
  for (int64_t a : axes) {
    absl::StatusOr<int> axis = NormalizeAxis(n, a, x.ndim());
    if (!axis.ok()) return axis.status();
    out.push_back(*axis);
  }
  return std::optional<std::vector<int>>(out);
}

// A reduction over axes computed at run time (their count known): one axis at a time, each
// reduced (keeping its dim) only when named, then the named dims dropped unless keepdims. Every
// reduction ONNX has composes so: a sum of sums, a max of maxes, a mean of means.
template <Var (*F)(const Var&, Axes, bool), Var (*Pre)(const Var&), Var (*Post)(const Var&)>
Outs ReduceAtRunTime(const ImportNode& n, const Var& x) {
  absl::StatusOr<std::vector<Var>> given = IntsAtRunTime(n, 1, "axes");
  if (!given.ok()) return given.status();
  const bool keepdims = n.Int("keepdims", 1) != 0;
  if (given->empty()) {  // none named: nothing reduced, or everything
    if (n.Int("noop_with_empty_axes", 0) != 0) return std::vector<Var>{x};
    return std::vector<Var>{Post(F(Pre(x), Axes(), keepdims))};
  }
  const std::vector<Var> named = AxisMask(AxesAtRunTime(n, *given, x.ndim()), x.ndim());
  Var y = Pre(x);
  for (int d = 0; d < x.ndim(); ++d) y = ifelse(named[d], F(y, Axes({d}), true), y);
  if (!keepdims) y = DropDims(y, named, x.ndim() - static_cast<int>(given->size()));
  return std::vector<Var>{Post(y)};
}

// Reduce{Sum,Mean,...}: `f` over the axes, keepdims by default (ONNX's).
template <Var (*F)(const Var&, Axes, bool), int64_t kAxesInputFrom, Var (*Pre)(const Var&),
          Var (*Post)(const Var&)>
Outs Reduce(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (n.opset() >= kAxesInputFrom && n.has(1) && !n.constant(1).has_value()) {
    return ReduceAtRunTime<F, Pre, Post>(n, x);
  }
  absl::StatusOr<std::optional<std::vector<int>>> axes = ReduceAxes(n, x, kAxesInputFrom);
  if (!axes.ok()) return axes.status();
  if (axes->has_value() && (*axes)->empty()) return std::vector<Var>{x};
  const bool keepdims = n.Int("keepdims", 1) != 0;
  const Axes a = axes->has_value() ? Axes(**axes) : Axes();
  return std::vector<Var>{Post(F(Pre(x), a, keepdims))};
}

Var Same(const Var& x) { return x; }
Var Square(const Var& x) { return x * x; }
Var LogSumExpOf(const Var& x, Axes axes, bool keepdims) { return logsumexp(x, axes, keepdims); }

// The ONNX opset from which each reduction takes its axes as an input (ReduceSum's 13; the
// rest's 18, past the newest opset supported).
constexpr int64_t kSumAxesInput = 13, kOtherAxesInput = 18;

// x flipped along `axis`.
Var Flip(const Var& x, int axis) {
  std::vector<Index> idx(axis, Index(Slice{}));
  idx.push_back(Index(Slice{std::nullopt, std::nullopt, -1}));
  return subtensor(x, idx);
}

template <bool kMax>
Outs ArgExtreme(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", 0), x.ndim());
  if (!axis.ok()) return axis.status();
  const bool keepdims = n.Int("keepdims", 1) != 0;
  if (n.Int("select_last_index", 0) == 0) {
    return std::vector<Var>{kMax ? argmax(x, *axis, keepdims) : argmin(x, *axis, keepdims)};
  }
  const Var flipped = Flip(x, *axis);
  const Var i = kMax ? argmax(flipped, *axis, keepdims) : argmin(flipped, *axis, keepdims);
  return std::vector<Var>{(shape_i(x, *axis) - scalar_constant(int64_t{1}, DType::kInt64)) - i};
}

// x's running sums along `axis`, exclusive (each sum without its own term) and reversed as asked.
Var CumSumAlong(const Var& x, int axis, bool exclusive, bool reverse) {
  Var y = reverse ? Flip(x, axis) : x;
  Var c = cumsum(y, axis);
  if (exclusive) c = c - y;
  return reverse ? Flip(c, axis) : c;
}

// CumSum: the axis may be computed at run time (then every axis's sums are built, one runs).
Outs CumSum(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (x.ndim() == 0) return n.Invalid("the input must have at least 1 dim");
  const bool reverse = n.Int("reverse", 0) != 0, exclusive = n.Int("exclusive", 0) != 0;
  if (!n.constant(1).has_value()) {
    absl::StatusOr<std::vector<Var>> given = IntsAtRunTime(n, 1, "axis");
    if (!given.ok()) return given.status();
    if (given->size() != 1) return n.Invalid("axis must hold one value");
    const Var axis = AxesAtRunTime(n, *given, x.ndim())[0];
    return std::vector<Var>{PickAlong(axis, x.ndim(), [&](int d) {
      return CumSumAlong(x, d, exclusive, reverse);
    })};
  }
  absl::StatusOr<std::vector<int64_t>> axis_value = n.ConstantInts(1, "axis");
  if (!axis_value.ok()) return axis_value.status();
  if (axis_value->size() != 1) return n.Invalid("axis must hold one value");
  absl::StatusOr<int> axis = NormalizeAxis(n, (*axis_value)[0], x.ndim());
  if (!axis.ok()) return axis.status();
  return std::vector<Var>{CumSumAlong(x, *axis, exclusive, reverse)};
}

// Softmax, LogSoftmax and Hardmax: before opset 13 over the input flattened to 2-d at `axis`
// (default 1), from 13 along `axis` (default -1).
template <Var (*F)(const Var&, int)>
Outs SoftmaxFamily(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (n.opset() >= 13) {
    absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", -1), x.ndim());
    if (!axis.ok()) return axis.status();
    return std::vector<Var>{F(x, *axis)};
  }
  absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", 1), std::max(x.ndim(), 1));
  if (!axis.ok()) return axis.status();
  int64_t inner = 1;
  for (int d = *axis; d < x.ndim(); ++d) {
    if (!x.type().shape()[d].has_value()) {
      return n.Unimplemented("flattening an input whose trailing dims are not known");
    }
    inner *= *x.type().shape()[d];
  }
  const Var flat = reshape(x, std::vector<int64_t>{-1, inner});
  return std::vector<Var>{reshape(F(flat, 1), shape(x))};
}

Var SoftmaxAt(const Var& x, int axis) { return softmax(x, axis); }
Var LogSoftmaxAt(const Var& x, int axis) { return log_softmax(x, axis); }
Var HardmaxAt(const Var& x, int axis) {
  const Var i = argmax(x, axis, /*keepdims=*/true);
  return cast(eq(PositionsAlong(x, axis, axis, x.ndim()), i), x.dtype());
}

}  // namespace

void AddReduceImporters(OpTable& t) {
  t["ReduceSum"] = Reduce<sum, kSumAxesInput, Same, Same>;
  t["ReduceMean"] = Reduce<mean, kOtherAxesInput, Same, Same>;
  t["ReduceMax"] = Reduce<max, kOtherAxesInput, Same, Same>;
  t["ReduceMin"] = Reduce<min, kOtherAxesInput, Same, Same>;
  t["ReduceProd"] = Reduce<prod, kOtherAxesInput, Same, Same>;
  t["ReduceL1"] = Reduce<sum, kOtherAxesInput, kiln::abs, Same>;
  t["ReduceL2"] = Reduce<sum, kOtherAxesInput, Square, kiln::sqrt>;
  t["ReduceSumSquare"] = Reduce<sum, kOtherAxesInput, Square, Same>;
  t["ReduceLogSum"] = Reduce<sum, kOtherAxesInput, Same, kiln::log>;
  t["ReduceLogSumExp"] = Reduce<LogSumExpOf, kOtherAxesInput, Same, Same>;
  t["ArgMax"] = ArgExtreme<true>;
  t["ArgMin"] = ArgExtreme<false>;
  t["CumSum"] = CumSum;
  t["Softmax"] = SoftmaxFamily<SoftmaxAt>;
  t["LogSoftmax"] = SoftmaxFamily<LogSoftmaxAt>;
  t["Hardmax"] = SoftmaxFamily<HardmaxAt>;
}

}  // namespace kiln::onnx
