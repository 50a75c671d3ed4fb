// NumPy's reading of a slice over one axis, shared by Subtensor's views and the advanced
// indexing kernels.
#ifndef KILN_CORE_OPS_SLICE_BOUNDS_H_
#define KILN_CORE_OPS_SLICE_BOUNDS_H_

#include <cstdint>
#include <limits>
#include <optional>

#include "absl/status/statusor.h"
#include "core/ops/op_util.h"

namespace kiln {

// The positions a slice selects: the first one and how many, each step apart.
struct SliceSpan {
  int64_t first = 0;
  int64_t count = 0;
};

// The span of x[start:stop:step] over an axis of length len (a bound is nullopt when the slice
// leaves it out), bounds clipped into range as NumPy clips them; a zero step is op's error.
inline absl::StatusOr<SliceSpan> ClipSlice(const Op& op, int64_t len,
                                           std::optional<int64_t> start,
                                           std::optional<int64_t> stop, int64_t step) {
  if (step == 0) return Invalid(op, "slice step cannot be zero");
  if (step == std::numeric_limits<int64_t>::min()) return Invalid(op, "slice step is out of range");
  auto clip = [&](std::optional<int64_t> b, int64_t absent) {
    if (!b) return absent;
    if (*b < 0) return *b < -len ? (step < 0 ? int64_t{-1} : int64_t{0}) : *b + len;
    return *b >= len ? (step < 0 ? len - 1 : len) : *b;
  };
  const int64_t lo = clip(start, step < 0 ? len - 1 : 0);
  const int64_t hi = clip(stop, step < 0 ? -1 : len);
  SliceSpan span{lo, 0};
  if (step > 0 && lo < hi) span.count = (hi - lo - 1) / step + 1;
  if (step < 0 && hi < lo) span.count = (lo - hi - 1) / (-step) + 1;
  return span;
}

}  // namespace kiln

#endif  // KILN_CORE_OPS_SLICE_BOUNDS_H_
