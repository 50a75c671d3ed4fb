// ONNX's operators that pick entries by their values: TopK (a stable argsort, so that ties keep
// the lower index first, as ONNX asks), Unique (Kiln's Unique, reordered by first occurrence
// when unsorted), NonZero, Compress, ReverseSequence and NonMaxSuppression.
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/alloc.h"
#include "core/ops/assert_op.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/non_max_suppression.h"
#include "core/ops/nonzero.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/ops/unique.h"
#include "proto/onnx/import_node.h"
#include "proto/onnx/run_time_axes.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

// x's first `count` entries along `axis`.
Var Leading(const Var& x, int axis, const Var& count) {
  std::vector<Index> idx(axis, Index(kiln::Slice{}));
  idx.push_back(Index(kiln::Slice{Var(ConstDim(0)), count}));
  return subtensor(x, idx);
}

Outs TopK(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", -1), x.ndim());
  if (!axis.ok()) return axis.status();
  Var k;
  if (n.opset() < 10) {
    k = Var(ConstDim(n.Int("k", 0)));
  } else {
    absl::StatusOr<std::vector<Var>> given = IntsAtRunTime(n, 1, "K");
    if (!given.ok()) return given.status();
    if (given->size() != 1) return n.Invalid("K must hold one value");
    k = (*given)[0];
  }
  // Largest first: ascending order of the negated values (in float64: exact for every dtype
  // but int64 past 2^53, and no unsigned wrap-around).
  const bool largest = n.Int("largest", 1) != 0;
  const Var key = largest ? neg(cast(x, DType::kFloat64)) : x;
  const Var indices = Leading(argsort(key, *axis), *axis, k);
  return std::vector<Var>{GatherAlongAxis(x, indices, *axis), indices};
}

// Unique: Y, indices (first occurrences), inverse_indices and counts; `sorted` 0 orders them by
// first occurrence.
Outs Unique(const ImportNode& n) {
  Var x = n.in(0);
  if (!x.ok()) return x.status();
  std::optional<int> axis;
  if (n.has_attr("axis")) {
    absl::StatusOr<int> a = NormalizeAxis(n, n.Int("axis", 0), x.ndim());
    if (!a.ok()) return a.status();
    axis = *a;
  }
  std::vector<Var> out = unique(x, true, true, true, axis);
  if (out.size() != 4) return out.empty() ? Outs(n.Invalid("Unique failed")) : Outs(out);
  if (n.Int("sorted", 1) == 0) {
    const Var order = argsort(out[1], 0);  // by first occurrence
    const Var rank_of = argsort(order, 0);  // the new place of each sorted entry
    out[0] = TakeAlong(out[0], axis.value_or(0), order);
    out[1] = TakeAlong(out[1], 0, order);
    out[2] = TakeAlong(rank_of, 0, out[2]);
    out[3] = TakeAlong(out[3], 0, order);
  }
  return out;
}

Outs NonZero(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (x.ndim() == 0) return n.Unimplemented("NonZero of a scalar");
  return std::vector<Var>{stack(nonzero(x), 0)};
}

// Compress: the slices along `axis` (of x flattened when absent) where the condition holds; a
// condition shorter than the dim leaves the rest out.
Outs Compress(const ImportNode& n) {
  Var x = n.in(0);
  const Var condition = n.in(1);
  if (!x.ok() || !condition.ok()) return x.ok() ? condition.status() : x.status();
  if (condition.ndim() != 1) return n.Invalid("the condition must be a vector");
  int axis = 0;
  if (n.has_attr("axis")) {
    absl::StatusOr<int> a = NormalizeAxis(n, n.Int("axis", 0), x.ndim());
    if (!a.ok()) return a.status();
    axis = *a;
  } else {
    x = flatten(x, 1);
  }
  const Var taken = nonzero(condition)[0];
  const Var inside = assert_op(taken, {le(shape_i(condition, 0), DimOf(x.ptr(), axis))},
                               absl::StrCat(n.Describe(), ": the condition is longer than the dim"));
  return std::vector<Var>{TakeAlong(x, axis, inside)};
}

// ReverseSequence: along time_axis, each batch entry's first sequence_lens[b] steps reversed.
Outs ReverseSequence(const ImportNode& n) {
  const Var x = n.in(0), lens = n.in(1);
  if (!x.ok() || !lens.ok()) return x.ok() ? lens.status() : x.status();
  if (x.ndim() < 2) return n.Invalid("the input must have at least 2 dims");
  const int batch_axis = static_cast<int>(n.Int("batch_axis", 1));
  const int time_axis = static_cast<int>(n.Int("time_axis", 0));
  if (batch_axis + time_axis != 1 || batch_axis < 0 || time_axis < 0) {
    return n.Invalid("batch_axis and time_axis must be 0 and 1");
  }
  const Var t = PositionsAlong(x, time_axis, time_axis, 2);     // t along time
  const Var b = PositionsAlong(x, batch_axis, batch_axis, 2);   // b along batch
  std::vector<int> order(2, -1);
  order[batch_axis] = 0;
  const Var len = dimshuffle(cast(lens, DType::kInt64), order);  // len[b] along batch
  const Var source = switch_(lt(t, len), len - Var(ConstDim(1)) - t, t);
  std::vector<AdvIndex> idx(2, AdvIndex(b));
  idx[time_axis] = AdvIndex(source);
  return std::vector<Var>{advanced_subtensor(x, idx)};
}

// NonMaxSuppression: Kiln's op, the absent inputs given ONNX's defaults (no box kept, an IoU
// threshold of 0, no score threshold).
Outs NonMaxSuppressionOf(const ImportNode& n) {
  auto given = [&](int i, const Var& fallback) { return n.has(i) ? n.in(i) : fallback; };
  return std::vector<Var>{non_max_suppression(
      n.in(0), n.in(1), given(2, scalar_constant(int64_t{0}, DType::kInt64)),
      given(3, scalar_constant(0.0, DType::kFloat32)),
      given(4, scalar_constant(-std::numeric_limits<double>::infinity(), DType::kFloat32)),
      n.Int("center_point_box", 0) != 0)};
}

}  // namespace

void AddSelectImporters(OpTable& t) {
  t["NonMaxSuppression"] = NonMaxSuppressionOf;
  t["TopK"] = TopK;
  t["Unique"] = Unique;
  t["NonZero"] = NonZero;
  t["Compress"] = Compress;
  t["ReverseSequence"] = ReverseSequence;
}

}  // namespace kiln::onnx
