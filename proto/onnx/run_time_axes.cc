#include "proto/onnx/run_time_axes.h"

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/assert_op.h"
#include "core/ops/ifelse.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"

namespace kiln::onnx {
namespace {

Var Int64(int64_t v) { return Var(ConstDim(v)); }

}  // namespace

absl::StatusOr<std::vector<Var>> IntsAtRunTime(const ImportNode& n, int i, absl::string_view what) {
  std::vector<Var> out;
  if (n.constant(i).has_value()) {
    absl::StatusOr<std::vector<int64_t>> values = n.ConstantInts(i, what);
    if (!values.ok()) return values.status();
    for (int64_t v : *values) out.push_back(Int64(v));
    return out;
  }
  const Var v = n.in(i);
  if (!v.ok()) return v.status();
  if (!IsInteger(v.dtype())) return n.Invalid(absl::StrCat(what, " must be integers"));
  if (v.ndim() == 0) return std::vector<Var>{cast(v, DType::kInt64)};
  if (v.ndim() != 1 || !v.type().shape()[0].has_value()) {
    return n.Unimplemented(
        absl::StrCat(what, " (input ", i, ") computed at run time, of a length not known statically"));
  }
  for (int64_t k = 0; k < *v.type().shape()[0]; ++k) {
    out.push_back(cast(subtensor(v, {Index(k)}), DType::kInt64));
  }
  return out;
}

std::vector<Var> AxesAtRunTime(const ImportNode& n, const std::vector<Var>& axes, int rank) {
  std::vector<Var> out;
  const std::string msg = absl::StrCat(n.Describe(), ": an axis is outside [", -rank, ", ", rank, ")");
  for (const Var& a : axes) {
    const Var inside = and_(ge(a, Int64(-rank)), lt(a, Int64(rank)));
    out.push_back(assert_op(switch_(lt(a, Int64(0)), a + Int64(rank), a), {inside}, msg));
  }
  return out;
}

std::vector<Var> AxisMask(const std::vector<Var>& axes, int rank) {
  std::vector<Var> mask;
  for (int d = 0; d < rank; ++d) {
    Var named = scalar_constant(0.0, DType::kBool);
    for (const Var& a : axes) named = or_(named, eq(a, Int64(d)));
    mask.push_back(named);
  }
  return mask;
}

Var DropDims(const Var& x, const std::vector<Var>& drop, int out_rank) {
  // Output dim j is the input dim d kept with j kept dims before it.
  std::vector<Var> dims(out_rank, Int64(0));
  Var kept_before = Int64(0);
  for (int d = 0; d < x.ndim(); ++d) {
    const Var keep = invert(drop[d]);
    for (int j = 0; j < out_rank; ++j) {
      dims[j] = dims[j] + switch_(and_(keep, eq(kept_before, Int64(j))), DimOf(x.ptr(), d), Int64(0));
    }
    kept_before = kept_before + cast(keep, DType::kInt64);
  }
  return reshape(x, make_vector(dims));
}

Var AddDims(const Var& x, const std::vector<Var>& added) {
  // Output dim j is 1 where a dim is added, else input dim j - (dims added before j).
  std::vector<Var> dims;
  Var added_before = Int64(0);
  const Var in_shape = shape(x);
  for (size_t j = 0; j < added.size(); ++j) {
    const Var from = clip(Int64(static_cast<int64_t>(j)) - added_before, Int64(0),
                          Int64(std::max(x.ndim() - 1, 0)));
    dims.push_back(x.ndim() == 0 ? Int64(1)
                                 : switch_(added[j], Int64(1), subtensor(in_shape, {Index(from)})));
    added_before = added_before + cast(added[j], DType::kInt64);
  }
  return reshape(x, make_vector(dims));
}

Var PickDim(const Var& axis, int d, const Var& then_value, const Var& else_value) {
  return ifelse(eq(axis, Int64(d)), then_value, else_value);
}

}  // namespace kiln::onnx
