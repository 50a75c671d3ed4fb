// ONNX's operators that move data without arithmetic: Transpose, Reshape, Flatten, Squeeze,
// Unsqueeze, Concat, Split, Slice, Gather, Shape, Size, Expand, ConstantOfShape, Range, Tile, as
// Kiln's DimShuffle, Reshape, Join, Split, Subtensor, AdvancedSubtensor, Shape and Alloc.
#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/alloc.h"
#include "core/ops/assert_op.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "proto/onnx/import_node.h"
#include "proto/onnx/onnx_tensor.h"
#include "proto/onnx/run_time_axes.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

Var Int64(int64_t v) { return ConstDim(v); }

// An attribute before opset `input_from`, else input `input` (a constant), as integers; empty
// when neither is given.
absl::StatusOr<std::vector<int64_t>> IntsFrom(const ImportNode& n, absl::string_view name,
                                              int64_t input_from, int input) {
  if (n.opset() < input_from) return n.Ints(name);
  if (!n.has(input)) return std::vector<int64_t>{};
  return n.ConstantInts(input, name);
}

// Each of `axes` normalized for rank `rank`, sorted.
absl::StatusOr<std::vector<int>> NormalizeAxes(const ImportNode& n,
                                               const std::vector<int64_t>& axes, int rank) {
  std::vector<int> out;
  for (int64_t a : axes) {
    absl::StatusOr<int> axis = NormalizeAxis(n, a, rank);
    if (!axis.ok()) return axis.status();
    out.push_back(*axis);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Outs Transpose(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  std::vector<int64_t> perm = n.Ints("perm");
  if (perm.empty()) {
    for (int d = x.ndim() - 1; d >= 0; --d) perm.push_back(d);
  }
  return std::vector<Var>{dimshuffle(x, std::vector<int>(perm.begin(), perm.end()))};
}

// The dims a shape input gives, as int64 scalars (its length must be known statically, or
// given by ONNX's shape inference of output `output`).
absl::StatusOr<std::vector<Var>> DimsOf(const ImportNode& n, int input, int output = 0) {
  if (n.constant(input).has_value()) {
    absl::StatusOr<std::vector<int64_t>> dims = n.ConstantInts(input, "shape");
    if (!dims.ok()) return dims.status();
    std::vector<Var> out;
    for (int64_t d : *dims) out.push_back(Int64(d));
    return out;
  }
  Var s = n.in(input);
  if (!s.ok()) return s.status();
  if (s.ndim() != 1) return n.Invalid("a shape must be a vector");
  if (!s.type().shape()[0].has_value()) {
    const std::optional<StaticShape> out_shape = n.OutputShape(output);
    if (!out_shape.has_value()) {
      return n.Unimplemented("a shape whose length is not known statically");
    }
    s = specify_shape(s, {static_cast<int64_t>(out_shape->size())});
  }
  std::vector<Var> out;
  for (int64_t d = 0; d < *s.type().shape()[0]; ++d) out.push_back(subtensor(s, {Index(d)}));
  return out;
}

// Reshape to a shape computed at run time: each 0 copies the input's dim unless allowzero.
Outs ReshapeAtRunTime(const ImportNode& n, const Var& x, bool allow_zero) {
  absl::StatusOr<std::vector<Var>> dims = DimsOf(n, 1);
  if (!dims.ok()) return dims.status();
  if (!allow_zero) {
    for (size_t d = 0; d < dims->size(); ++d) {
      const Var same = static_cast<int>(d) < x.ndim() ? shape_i(x, static_cast<int>(d)) : Int64(0);
      (*dims)[d] = switch_(eq((*dims)[d], Int64(0)), same, (*dims)[d]);
    }
  }
  return std::vector<Var>{reshape(x, make_vector(*dims))};
}

Outs Reshape(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  const bool allow_zero = n.Int("allowzero", 0) != 0;
  if (!n.constant(1).has_value()) return ReshapeAtRunTime(n, x, allow_zero);
  absl::StatusOr<std::vector<int64_t>> dims = n.ConstantInts(1, "shape");
  if (!dims.ok()) return dims.status();
  // A 0 copies the input's dim (unless allowzero): its static size, or its size at run time.
  std::vector<Var> symbolic;
  bool all_static = true;
  for (size_t d = 0; d < dims->size(); ++d) {
    int64_t v = (*dims)[d];
    if (v == 0 && !allow_zero) {
      if (static_cast<int>(d) >= x.ndim()) return n.Invalid("a 0 past the input's rank");
      if (x.type().shape()[d].has_value()) {
        v = (*dims)[d] = *x.type().shape()[d];
      } else {
        all_static = false;
        symbolic.push_back(shape_i(x, static_cast<int>(d)));
        continue;
      }
    }
    symbolic.push_back(Int64(v));
  }
  if (all_static) return std::vector<Var>{reshape(x, *dims)};
  return std::vector<Var>{reshape(x, make_vector(symbolic))};
}

// The product of x's dims [begin, end), as an int64 scalar.
Var DimsProduct(const Var& x, int begin, int end) {
  Var p = Int64(1);
  for (int d = begin; d < end; ++d) {
    p = p * DimOf(x.ptr(), d);
  }
  return p;
}

Outs Flatten(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  int64_t axis = n.Int("axis", 1);
  if (axis < 0) axis += x.ndim();
  if (axis < 0 || axis > x.ndim()) return n.Invalid(absl::StrCat("axis ", axis, " out of range"));
  const int a = static_cast<int>(axis);
  return std::vector<Var>{
      reshape(x, make_vector({DimsProduct(x, 0, a), DimsProduct(x, a, x.ndim())}))};
}

Outs Squeeze(const ImportNode& n) {
  Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (n.opset() >= 13 && n.has(1) && !n.constant(1).has_value()) {  // axes known at run time
    absl::StatusOr<std::vector<Var>> given = IntsAtRunTime(n, 1, "axes");
    if (!given.ok()) return given.status();
    const int out_rank = x.ndim() - static_cast<int>(given->size());
    if (out_rank < 0) return n.Invalid("more axes than dims");
    return std::vector<Var>{
        DropDims(x, AxisMask(AxesAtRunTime(n, *given, x.ndim()), x.ndim()), out_rank)};
  }
  absl::StatusOr<std::vector<int64_t>> given = IntsFrom(n, "axes", 13, 1);
  if (!given.ok()) return given.status();
  std::vector<int> axes;
  if (given->empty()) {
    for (int d = 0; d < x.ndim(); ++d) {
      if (x.type().shape()[d] == 1) axes.push_back(d);
    }
  } else {
    absl::StatusOr<std::vector<int>> normalized = NormalizeAxes(n, *given, x.ndim());
    if (!normalized.ok()) return normalized.status();
    axes = *normalized;
    // Kiln squeezes dims known to be 1: a dim not known is said to be (checked at run time).
    StaticShape s = x.type().shape();
    bool unknown = false;
    for (int a : axes) {
      if (!s[a].has_value()) {
        s[a] = 1;
        unknown = true;
      }
    }
    if (unknown) x = specify_shape(x, s);
  }
  return std::vector<Var>{squeeze(x, axes)};
}

Outs Unsqueeze(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (n.opset() >= 13 && n.has(1) && !n.constant(1).has_value()) {  // axes known at run time
    absl::StatusOr<std::vector<Var>> given = IntsAtRunTime(n, 1, "axes");
    if (!given.ok()) return given.status();
    const int rank = x.ndim() + static_cast<int>(given->size());
    return std::vector<Var>{AddDims(x, AxisMask(AxesAtRunTime(n, *given, rank), rank))};
  }
  absl::StatusOr<std::vector<int64_t>> given = IntsFrom(n, "axes", 13, 1);
  if (!given.ok()) return given.status();
  const int rank = x.ndim() + static_cast<int>(given->size());
  absl::StatusOr<std::vector<int>> axes = NormalizeAxes(n, *given, rank);
  if (!axes.ok()) return axes.status();
  std::vector<int> order;
  for (int d = 0, next = 0; d < rank; ++d) {
    order.push_back(std::binary_search(axes->begin(), axes->end(), d) ? -1 : next++);
  }
  return std::vector<Var>{dimshuffle(x, order)};
}

Outs Concat(const ImportNode& n) {
  std::vector<Var> parts;
  for (int i = 0; i < n.num_inputs(); ++i) parts.push_back(n.in(i));
  if (!parts[0].ok()) return parts[0].status();
  absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", 0), parts[0].ndim());
  if (!axis.ok()) return axis.status();
  return std::vector<Var>{concatenate(parts, *axis)};
}

// Split by sizes computed at run time: a slice per part, the parts checked to cover the dim.
Outs SplitAtRunTime(const ImportNode& n, const Var& x, int axis) {
  absl::StatusOr<std::vector<Var>> sizes = IntsAtRunTime(n, 1, "split");
  if (!sizes.ok()) return sizes.status();
  if (static_cast<int>(sizes->size()) != n.proto().output_size()) {
    return n.Invalid("split must hold one size per output");
  }
  std::vector<Var> parts;
  Var start = Int64(0);
  for (const Var& size : *sizes) {
    std::vector<Index> idx(axis, Index(kiln::Slice{}));
    idx.push_back(Index(kiln::Slice{start, start + size}));
    parts.push_back(subtensor(x, idx));
    start = start + size;
  }
  const Var covered = eq(start, DimOf(x.ptr(), axis));
  parts.back() = assert_op(parts.back(), {covered},
                           absl::StrCat(n.Describe(), ": the sizes do not add up to the dim"));
  return parts;
}

Outs Split(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", 0), x.ndim());
  if (!axis.ok()) return axis.status();
  if (n.opset() >= 13 && n.has(1) && !n.constant(1).has_value()) return SplitAtRunTime(n, x, *axis);
  absl::StatusOr<std::vector<int64_t>> sizes = IntsFrom(n, "split", 13, 1);
  if (!sizes.ok()) return sizes.status();
  const int64_t parts = n.proto().output_size();
  if (sizes->empty()) {
    const auto& dim = x.type().shape()[*axis];
    if (!dim.has_value()) return n.Unimplemented("an equal split of a dim not known statically");
    const int64_t each = (*dim + parts - 1) / parts;  // the last part may be smaller (opset 18)
    for (int64_t k = 0, left = *dim; k < parts; ++k, left -= each) {
      sizes->push_back(std::min(each, left));
    }
  }
  return split(x, *sizes, *axis);
}

// A Slice bound list: before opset 10 the attribute, from 10 input `input`, constant or computed
// at run time (then one int64 scalar per entry: its length must be known statically).
absl::StatusOr<std::vector<Bound>> Bounds(const ImportNode& n, absl::string_view name, int input) {
  std::vector<Bound> out;
  if (n.opset() >= 10 && n.has(input) && !n.constant(input).has_value()) {
    const Var v = n.in(input);
    if (v.ndim() != 1 || !v.type().shape()[0].has_value()) {
      return n.Unimplemented(absl::StrCat(name, " of a length not known statically"));
    }
    for (int64_t k = 0; k < *v.type().shape()[0]; ++k) {
      out.push_back(Bound(cast(subtensor(v, {Index(k)}), DType::kInt64)));
    }
    return out;
  }
  absl::StatusOr<std::vector<int64_t>> values = IntsFrom(n, name, 10, input);
  if (!values.ok()) return values.status();
  for (int64_t v : *values) out.push_back(Bound(v));
  return out;
}

// Slice whose axes are computed at run time: each dim takes the start, end and step of the axis
// that names it (0, its size and 1 when none does).
Outs SliceAtRunTime(const ImportNode& n, const Var& x) {
  absl::StatusOr<std::vector<Var>> starts = IntsAtRunTime(n, 1, "starts");
  absl::StatusOr<std::vector<Var>> ends = IntsAtRunTime(n, 2, "ends");
  absl::StatusOr<std::vector<Var>> axes = IntsAtRunTime(n, 3, "axes");
  if (!starts.ok()) return starts.status();
  if (!ends.ok()) return ends.status();
  if (!axes.ok()) return axes.status();
  std::vector<Var> steps(starts->size(), Int64(1));
  if (n.has(4)) {
    absl::StatusOr<std::vector<Var>> given = IntsAtRunTime(n, 4, "steps");
    if (!given.ok()) return given.status();
    steps = *given;
  }
  if (ends->size() != starts->size() || axes->size() != starts->size() ||
      steps.size() != starts->size()) {
    return n.Invalid("starts, ends, axes and steps differ in length");
  }
  const std::vector<Var> named = AxesAtRunTime(n, *axes, x.ndim());
  std::vector<Index> idx;
  for (int d = 0; d < x.ndim(); ++d) {
    Var start = Int64(0), end = DimOf(x.ptr(), d), step = Int64(1);
    for (size_t k = 0; k < named.size(); ++k) {
      const Var here = eq(named[k], Int64(d));
      start = switch_(here, (*starts)[k], start);
      end = switch_(here, (*ends)[k], end);
      step = switch_(here, steps[k], step);
    }
    idx.push_back(Index(kiln::Slice{start, end, step}));
  }
  return std::vector<Var>{subtensor(x, idx)};
}

Outs Slice(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<Bound>> starts = Bounds(n, "starts", 1);
  absl::StatusOr<std::vector<Bound>> ends = Bounds(n, "ends", 2);
  if (n.opset() >= 10 && n.has(3) && !n.constant(3).has_value()) return SliceAtRunTime(n, x);
  absl::StatusOr<std::vector<int64_t>> axes = IntsFrom(n, "axes", 10, 3);
  absl::StatusOr<std::vector<Bound>> steps = Bounds(n, "steps", 4);
  if (!starts.ok()) return starts.status();
  if (!ends.ok()) return ends.status();
  if (!axes.ok()) return axes.status();
  if (!steps.ok()) return steps.status();
  if (starts->size() != ends->size()) return n.Invalid("starts and ends differ in length");
  if (axes->empty()) {
    for (size_t k = 0; k < starts->size(); ++k) axes->push_back(static_cast<int64_t>(k));
  }
  if (steps->empty()) steps->assign(starts->size(), Bound(int64_t{1}));
  if (axes->size() != starts->size() || steps->size() != starts->size()) {
    return n.Invalid("starts, ends, axes and steps differ in length");
  }
  std::vector<Index> idx(x.ndim(), Index(kiln::Slice{}));
  for (size_t k = 0; k < starts->size(); ++k) {
    absl::StatusOr<int> axis = NormalizeAxis(n, (*axes)[k], x.ndim());
    if (!axis.ok()) return axis.status();
    idx[*axis] = Index(kiln::Slice{(*starts)[k], (*ends)[k], (*steps)[k]});
  }
  return std::vector<Var>{subtensor(x, idx)};
}

Outs Gather(const ImportNode& n) {
  const Var x = n.in(0), indices = n.in(1);
  if (!x.ok()) return x.status();
  absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", 0), x.ndim());
  if (!axis.ok()) return axis.status();
  std::vector<AdvIndex> idx(*axis, AdvIndex::FullSlice());
  idx.push_back(AdvIndex(indices));
  return std::vector<Var>{advanced_subtensor(x, idx)};
}

Outs ShapeOf(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  Var s = shape(x);
  if (n.has_attr("start") || n.has_attr("end")) {
    s = subtensor(
        s, {Index(kiln::Slice{n.Int("start", 0),
                              n.has_attr("end") ? Bound(n.Int("end", 0)) : Bound(std::nullopt)})});
  }
  return std::vector<Var>{s};
}

Outs Size(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  return std::vector<Var>{DimsProduct(x, 0, x.ndim())};
}

// ONNX's Expand broadcasts both ways (a dim of 1 in the shape keeps the input's).
Outs Expand(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<Var>> dims = DimsOf(n, 1);
  if (!dims.ok()) return dims.status();
  // The output's dims: the larger of the shape's and x's (padded with 1s on the left).
  const int rank = std::max<int>(x.ndim(), static_cast<int>(dims->size()));
  std::vector<Var> out(rank);
  for (int d = 0; d < rank; ++d) {
    const int xd = d - (rank - x.ndim()), sd = d - (rank - static_cast<int>(dims->size()));
    const Var xs = xd < 0 ? Int64(1) : Var(DimOf(x.ptr(), xd));
    out[d] = sd < 0 ? xs : maximum(xs, (*dims)[sd]);
  }
  return std::vector<Var>{alloc(x, out)};
}

Outs ConstantOfShape(const ImportNode& n) {
  absl::StatusOr<std::optional<Tensor>> value = n.TensorAttr("value");
  if (!value.ok()) return value.status();
  Var fill = scalar_constant(0.0, DType::kFloat32);
  if (value->has_value()) {
    const Tensor v = (*value)->Contiguous();
    if (v.size() != 1) return n.Invalid("value must hold one element");
    absl::StatusOr<Tensor> scalar = Tensor::FromBytes(
        v.dtype(), {}, std::string_view(static_cast<const char*>(v.raw_data()), v.nbytes()));
    if (!scalar.ok()) return scalar.status();
    fill = constant(*scalar);
  }
  absl::StatusOr<std::vector<Var>> dims = DimsOf(n, 0);
  if (!dims.ok()) return dims.status();
  return std::vector<Var>{alloc(fill, *dims)};
}

Outs Range(const ImportNode& n) {
  const Var start = n.in(0);
  if (!start.ok()) return start.status();
  return std::vector<Var>{arange(start, n.in(1), n.in(2), start.dtype())};
}

// Tile: the input with a new dim of each repeat count before each of its dims, broadcast, and
// the pairs merged.
Outs Tile(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  absl::StatusOr<std::vector<Var>> repeats = IntsAtRunTime(n, 1, "repeats");
  if (!repeats.ok()) return repeats.status();
  if (static_cast<int>(repeats->size()) != x.ndim()) {
    return n.Invalid("repeats must hold one count per dim");
  }
  std::vector<int> order;
  std::vector<Var> wide, merged;
  for (int d = 0; d < x.ndim(); ++d) {
    order.push_back(-1);
    order.push_back(d);
    const Var dim = DimOf(x.ptr(), d);
    wide.push_back((*repeats)[d]);
    wide.push_back(dim);
    merged.push_back((*repeats)[d] * dim);
  }
  return std::vector<Var>{reshape(alloc(dimshuffle(x, order), wide), make_vector(merged))};
}

// out[i][j][k] = data[indices[i][j][k]][j][k] (for axis 0): an advanced index of the indices on
// `axis` and of each position elsewhere.
Outs GatherElements(const ImportNode& n) {
  const Var data = n.in(0), indices = n.in(1);
  if (!data.ok() || !indices.ok()) return data.ok() ? indices.status() : data.status();
  if (data.ndim() != indices.ndim()) return n.Invalid("data and indices differ in rank");
  absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", 0), data.ndim());
  if (!axis.ok()) return axis.status();
  return std::vector<Var>{GatherAlongAxis(data, indices, *axis)};
}

// The upper (or lower) triangle of the last two dims from the k-th diagonal, zeros elsewhere.
Outs Trilu(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (x.ndim() < 2) return n.Invalid("the input must have at least 2 dims");
  const Var k = n.has(1) ? Var(cast(n.in(1), DType::kInt64)) : Int64(0);
  const Var rows = PositionsAlong(x, x.ndim() - 2, 0, 2);
  const Var cols = PositionsAlong(x, x.ndim() - 1, 1, 2);
  const Var offset = cols - rows;
  const Var keep = n.Int("upper", 1) != 0 ? ge(offset, k) : le(offset, k);
  return std::vector<Var>{switch_(keep, x, zeros_like(x))};
}

}  // namespace

void AddShapeImporters(OpTable& t) {
  t["GatherElements"] = GatherElements;
  t["Trilu"] = Trilu;
  t["Transpose"] = Transpose;
  t["Reshape"] = Reshape;
  t["Flatten"] = Flatten;
  t["Squeeze"] = Squeeze;
  t["Unsqueeze"] = Unsqueeze;
  t["Concat"] = Concat;
  t["Split"] = Split;
  t["Slice"] = Slice;
  t["Gather"] = Gather;
  t["Shape"] = ShapeOf;
  t["Size"] = Size;
  t["Expand"] = Expand;
  t["ConstantOfShape"] = ConstantOfShape;
  t["Range"] = Range;
  t["Tile"] = Tile;
}

}  // namespace kiln::onnx
