// Integer inputs that ONNX lets a model compute at run time (axes, repeats, split sizes) when
// their count is known statically: each value becomes an int64 scalar of the Kiln graph, and the
// dims they pick become bool scalars, so that an importer builds its op for every dim and keeps
// the one picked (IfElse, switch) instead of needing the values at import.
#ifndef KILN_PROTO_ONNX_RUN_TIME_AXES_H_
#define KILN_PROTO_ONNX_RUN_TIME_AXES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph/var.h"
#include "proto/onnx/import_node.h"

namespace kiln::onnx {

// Input i's values as int64 scalars: constants when it is one, else one element each of a
// vector (or the one of a scalar) whose length is known statically; UNIMPLEMENTED naming the
// node otherwise.
absl::StatusOr<std::vector<Var>> IntsAtRunTime(const ImportNode& n, int i, absl::string_view what);

// Each axis of a rank-`rank` tensor made non-negative; a call where one is outside [-rank, rank)
// fails with an error naming the node.
std::vector<Var> AxesAtRunTime(const ImportNode& n, const std::vector<Var>& axes, int rank);

// For each dim of a rank-`rank` tensor, whether one of `axes` (non-negative) names it.
std::vector<Var> AxisMask(const std::vector<Var>& axes, int rank);

// x without the dims `drop` marks (each of size 1), as a rank-`out_rank` tensor.
Var DropDims(const Var& x, const std::vector<Var>& drop, int out_rank);

// x with a new dim of size 1 at each output position `added` marks (of x.ndim() + the count).
Var AddDims(const Var& x, const std::vector<Var>& added);

// ifelse(axis == d, then_value, else_value).
Var PickDim(const Var& axis, int d, const Var& then_value, const Var& else_value);

// `per_dim(d)` for the dim `axis` picks (a non-negative int64 scalar below `rank`), lazily:
// an IfElse chain that runs only the chosen one.
template <typename F>
Var PickAlong(const Var& axis, int rank, F per_dim) {
  Var out = per_dim(rank - 1);
  for (int d = rank - 2; d >= 0; --d) out = PickDim(axis, d, per_dim(d), out);
  return out;
}

}  // namespace kiln::onnx

#endif  // KILN_PROTO_ONNX_RUN_TIME_AXES_H_
