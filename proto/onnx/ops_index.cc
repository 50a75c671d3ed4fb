// ONNX's indexing and layout operators beyond the basic ones: GatherND, the scatter family,
// OneHot, EyeLike, DepthToSpace and SpaceToDepth, as Kiln's advanced indexing, Eye, Reshape and
// DimShuffle.
#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "proto/onnx/import_node.h"
#include "proto/onnx/onnx_tensor.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

Var Int64(int64_t v) { return ConstDim(v); }
Var Dim(const Var& x, int d) { return DimOf(x.ptr(), d); }

// The columns of an index array (..., k): indices[..., j] for j < k (k known statically).
absl::StatusOr<std::vector<AdvIndex>> Columns(const ImportNode& n, const Var& indices) {
  if (!indices.ok()) return indices.status();
  const int last = indices.ndim() - 1;
  if (last < 0 || !indices.type().shape()[last].has_value()) {
    return n.Unimplemented("indices whose last dim is not known statically");
  }
  std::vector<AdvIndex> idx;
  for (int64_t j = 0; j < *indices.type().shape()[last]; ++j) {
    std::vector<Index> pick(last, Index(kiln::Slice{}));
    pick.push_back(Index(j));
    idx.push_back(AdvIndex(subtensor(indices, pick)));
  }
  return idx;
}

// GatherND: data at the index tuples of indices' last dim; the first batch_dims dims of both
// are matched, each read at its own position.
Outs GatherND(const ImportNode& n) {
  const Var indices = n.in(1);
  absl::StatusOr<std::vector<AdvIndex>> columns = Columns(n, indices);
  if (!columns.ok()) return columns.status();
  const int64_t batch_dims = n.Int("batch_dims", 0);
  if (batch_dims < 0 || batch_dims >= indices.ndim() || batch_dims > n.in(0).ndim()) {
    return n.Invalid(absl::StrCat("batch_dims ", batch_dims, " out of range"));
  }
  std::vector<AdvIndex> idx;
  for (int d = 0; d < batch_dims; ++d) {
    idx.push_back(AdvIndex(PositionsAlong(indices, d, d, indices.ndim() - 1)));
  }
  idx.insert(idx.end(), columns->begin(), columns->end());
  return std::vector<Var>{advanced_subtensor(n.in(0), idx)};
}

// Whether the reduction writes (none) or adds (add); others are refused.
absl::StatusOr<bool> Sets(const ImportNode& n) {
  const std::string reduction = n.String("reduction", "none");
  if (reduction == "none") return true;
  if (reduction == "add") return false;
  return n.Unimplemented(absl::StrCat("reduction '", reduction, "'"));
}

// ScatterElements (and the older Scatter): data with data[indices[i][j]][j] = updates[i][j]
// (for axis 0), through an advanced index of the indices on `axis` and of each position elsewhere.
Outs ScatterElements(const ImportNode& n) {
  const Var data = n.in(0), indices = n.in(1);
  if (!data.ok() || !indices.ok()) return data.ok() ? indices.status() : data.status();
  absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", 0), data.ndim());
  if (!axis.ok()) return axis.status();
  absl::StatusOr<bool> set = Sets(n);
  if (!set.ok()) return set.status();
  std::vector<AdvIndex> idx;
  for (int d = 0; d < data.ndim(); ++d) {
    idx.push_back(d == *axis ? AdvIndex(indices)
                             : AdvIndex(PositionsAlong(indices, d, d, indices.ndim())));
  }
  return std::vector<Var>{advanced_inc_subtensor(data, n.in(2), idx, *set)};
}

Outs ScatterND(const ImportNode& n) {
  absl::StatusOr<bool> set = Sets(n);
  if (!set.ok()) return set.status();
  absl::StatusOr<std::vector<AdvIndex>> idx = Columns(n, n.in(1));
  if (!idx.ok()) return idx.status();
  return std::vector<Var>{advanced_inc_subtensor(n.in(0), n.in(2), *idx, *set)};
}

// OneHot: values[1] where the (wrapped) index equals the position along the new axis, else
// values[0].
Outs OneHot(const ImportNode& n) {
  const Var indices = n.in(0), values = n.in(2);
  if (!indices.ok() || !values.ok()) return indices.ok() ? values.status() : indices.status();
  const Var depth = cast(subtensor(flatten(n.in(1)), {Index(0)}), DType::kInt64);
  absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", -1), indices.ndim() + 1);
  if (!axis.ok()) return axis.status();
  const Var i = cast(indices, DType::kInt64);
  const Var wrapped = switch_(lt(i, Int64(0)), i + depth, i);
  std::vector<int> around, along(indices.ndim() + 1, -1);
  for (int d = 0, k = 0; d <= indices.ndim(); ++d) around.push_back(d == *axis ? -1 : k++);
  along[*axis] = 0;
  const Var hit = eq(dimshuffle(wrapped, around), dimshuffle(arange(depth), along));
  const Var off = subtensor(values, {Index(0)}), on = subtensor(values, {Index(1)});
  return std::vector<Var>{switch_(hit, on, off)};
}

Outs EyeLike(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (x.ndim() != 2) return n.Invalid("the input must be a matrix");
  DType dtype = x.dtype();
  if (n.has_attr("dtype")) {
    absl::StatusOr<DType> d = DTypeFromOnnx(static_cast<int32_t>(n.Int("dtype", 1)));
    if (!d.ok()) return n.Unimplemented(d.status().message());
    dtype = *d;
  }
  return std::vector<Var>{eye(Dim(x, 0), Dim(x, 1), Int64(n.Int("k", 0)), dtype)};
}

// DepthToSpace: (N, C, H, W) -> (N, C / b^2, H b, W b), the channels read as (b, b, C / b^2)
// (DCR) or (C / b^2, b, b) (CRD).
Outs DepthToSpace(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (x.ndim() != 4) return n.Invalid("the input must be 4-d");
  const int64_t b = n.Int("blocksize", 0);
  if (absl::Status s = CheckSizes(n, "blocksize", {b}, 1, 1); !s.ok()) return s;
  const Var c = int_div(Dim(x, 1), Int64(b * b)), h = Dim(x, 2), w = Dim(x, 3);
  const bool crd = n.String("mode", "DCR") == "CRD";
  const Var split = crd ? reshape(x, make_vector({Dim(x, 0), c, Int64(b), Int64(b), h, w}))
                        : reshape(x, make_vector({Dim(x, 0), Int64(b), Int64(b), c, h, w}));
  const Var moved =
      crd ? dimshuffle(split, {0, 1, 4, 2, 5, 3}) : dimshuffle(split, {0, 3, 4, 1, 5, 2});
  return std::vector<Var>{reshape(moved, make_vector({Dim(x, 0), c, h * Int64(b), w * Int64(b)}))};
}

// SpaceToDepth: (N, C, H, W) -> (N, C b^2, H / b, W / b).
Outs SpaceToDepth(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (x.ndim() != 4) return n.Invalid("the input must be 4-d");
  const int64_t b = n.Int("blocksize", 0);
  if (absl::Status s = CheckSizes(n, "blocksize", {b}, 1, 1); !s.ok()) return s;
  const Var h = int_div(Dim(x, 2), Int64(b)), w = int_div(Dim(x, 3), Int64(b));
  const Var split = reshape(x, make_vector({Dim(x, 0), Dim(x, 1), h, Int64(b), w, Int64(b)}));
  return std::vector<Var>{reshape(dimshuffle(split, {0, 3, 5, 1, 2, 4}),
                                  make_vector({Dim(x, 0), Dim(x, 1) * Int64(b * b), h, w}))};
}

}  // namespace

void AddIndexImporters(OpTable& t) {
  t["GatherND"] = GatherND;
  t["ScatterElements"] = ScatterElements;
  t["Scatter"] = ScatterElements;
  t["ScatterND"] = ScatterND;
  t["OneHot"] = OneHot;
  t["EyeLike"] = EyeLike;
  t["DepthToSpace"] = DepthToSpace;
  t["SpaceToDepth"] = SpaceToDepth;
}

}  // namespace kiln::onnx
