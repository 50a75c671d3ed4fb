// ONNX's GridSample (opset 16, 2-d; PyTorch's grid_sample, whose outputs ONNX's test data are):
// X (N, C, H, W) sampled at the grid (N, Hout, Wout, 2) of (x, y) in [-1, 1], by nearest,
// bilinear or bicubic interpolation, with zeros, border or reflection padding. Each tap is a
// gather of X at integer positions (Kiln's AdvancedSubtensor) weighted elementwise, so the
// gradient reaches X and the grid.
#include <string>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "proto/onnx/import_node.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

struct Sampling {
  std::string mode, padding;
  bool align_corners;
};

// A float64 constant.
Var F(double v) { return scalar_constant(v, DType::kFloat64); }

// `coord` reflected into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates; 0 when
// the range is empty).
Var Reflect(const Var& coord, const Var& twice_low, const Var& twice_high) {
  const Var low = twice_low / F(2), span = (twice_high - twice_low) / F(2);
  const Var from_low = abs(coord - low);
  const Var flips = floor(from_low / span);
  const Var extra = from_low - flips * span;
  const Var even = eq(flips - floor(flips / F(2)) * F(2), F(0));
  return switch_(eq(span, F(0)), F(0), switch_(even, extra + low, span - extra + low));
}

// The padding mode applied to a coordinate along a dim of `size` cells (border: clamped;
// reflection: reflected, then clamped; zeros: as it is).
Var Pad(const Sampling& s, const Var& coord, const Var& size) {
  const Var last = size - F(1);
  if (s.padding == "border") return clip(coord, F(0), last);
  if (s.padding != "reflection") return coord;
  // align_corners reflects about 0 and size - 1, else about -0.5 and size - 0.5.
  const Var reflected = s.align_corners ? Reflect(coord, F(0), F(2) * last)
                                        : Reflect(coord, F(-1), F(2) * size - F(1));
  return clip(reflected, F(0), last);
}

// The pixel coordinate of a grid value in [-1, 1] along a dim of `size` cells.
Var Unnormalize(const Sampling& s, const Var& g, const Var& size) {
  return s.align_corners ? (g + F(1)) / F(2) * (size - F(1)) : ((g + F(1)) * size - F(1)) / F(2);
}

// Keys' cubic weights (A = -0.75, as PyTorch) of the taps at floor - 1 ... floor + 2, for the
// fraction t.
std::vector<Var> CubicWeights(const Var& t) {
  const double a = -0.75;
  auto near = [&](const Var& d) { return (F(a + 2) * d - F(a + 3)) * d * d + F(1); };
  auto far = [&](const Var& d) { return ((F(a) * d - F(5 * a)) * d + F(8 * a)) * d - F(4 * a); };
  return {far(t + F(1)), near(t), near(F(1) - t), far(F(2) - t)};
}

Outs GridSample(const ImportNode& n) {
  const Var x = n.in(0), grid = n.in(1);
  if (!x.ok() || !grid.ok()) return x.ok() ? grid.status() : x.status();
  if (x.ndim() != 4 || grid.ndim() != 4) return n.Unimplemented("GridSample past 2-d");
  const Sampling s{n.String("mode", "bilinear"), n.String("padding_mode", "zeros"),
                   n.Int("align_corners", 0) != 0};
  if (s.mode != "bilinear" && s.mode != "nearest" && s.mode != "bicubic") {
    return n.Invalid(absl::StrCat("mode '", s.mode, "'"));
  }
  if (s.padding != "zeros" && s.padding != "border" && s.padding != "reflection") {
    return n.Invalid(absl::StrCat("padding_mode '", s.padding, "'"));
  }
  const Var h = cast(shape_i(x, 2), DType::kFloat64), w = cast(shape_i(x, 3), DType::kFloat64);
  const Var g = cast(grid, DType::kFloat64);
  const Var gx = subtensor(g, {Index(kiln::Slice{}), Index(kiln::Slice{}), Index(kiln::Slice{}),
                               Index(int64_t{0})});
  const Var gy = subtensor(g, {Index(kiln::Slice{}), Index(kiln::Slice{}), Index(kiln::Slice{}),
                               Index(int64_t{1})});
  Var ix = Unnormalize(s, gx, w), iy = Unnormalize(s, gy, h);
  // The batch index of each grid point, (N, 1, 1).
  const Var batch = dimshuffle(arange(shape_i(x, 0)), {0, kX, kX});
  // X at (row, col) (float64, (N, Hout, Wout)) weighted by `weight`, as (N, Hout, Wout, C); a
  // tap outside X reads 0.
  auto tap = [&](const Var& row, const Var& col, const Var& weight) {
    const Var inside = and_(and_(ge(row, F(0)), le(row, h - F(1))),
                            and_(ge(col, F(0)), le(col, w - F(1))));
    auto index = [](const Var& c, const Var& size) {
      return cast(clip(c, F(0), size - F(1)), DType::kInt64);
    };
    const Var value = advanced_subtensor(
        x, {AdvIndex(batch), AdvIndex::FullSlice(), AdvIndex(index(row, h)), AdvIndex(index(col, w))});
    const Var wt = switch_(inside, weight, F(0));
    return value * dimshuffle(cast(wt, x.dtype()), {0, 1, 2, kX});
  };
  Var sampled;
  if (s.mode == "bicubic") {  // the padding applies to each tap's position
    const Var x0 = floor(ix), y0 = floor(iy);
    const std::vector<Var> wx = CubicWeights(ix - x0), wy = CubicWeights(iy - y0);
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        const Var row = Pad(s, y0 + F(i - 1), h), col = Pad(s, x0 + F(j - 1), w);
        const Var term = tap(row, col, wy[i] * wx[j]);
        sampled = i == 0 && j == 0 ? term : sampled + term;
      }
    }
  } else {
    ix = Pad(s, ix, w);
    iy = Pad(s, iy, h);
    if (s.mode == "nearest") {
      sampled = tap(round_half_to_even(iy), round_half_to_even(ix), F(1));
    } else {
      const Var x0 = floor(ix), y0 = floor(iy), tx = ix - x0, ty = iy - y0;
      sampled = tap(y0, x0, (F(1) - ty) * (F(1) - tx)) + tap(y0, x0 + F(1), (F(1) - ty) * tx) +
                tap(y0 + F(1), x0, ty * (F(1) - tx)) + tap(y0 + F(1), x0 + F(1), ty * tx);
    }
  }
  return std::vector<Var>{dimshuffle(sampled, {0, 3, 1, 2})};
}

}  // namespace

void AddGridSampleImporters(OpTable& t) { t["GridSample"] = GridSample; }

}  // namespace kiln::onnx
