// ONNX's operators that map each output position along an axis to input positions: Pad
// (constant, edge, reflect; negative pads crop) and Resize/Upsample (nearest, linear and cubic
// interpolation under every coordinate transformation ONNX defines). Each axis becomes a gather
// of the positions (Kiln's AdvancedSubtensor) and, to interpolate, a weighted sum of gathers;
// pads, scales, sizes and the region of interest may be computed at run time.
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/alloc.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "proto/onnx/import_node.h"
#include "proto/onnx/run_time_axes.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

Var Int64(int64_t v) { return Var(ConstDim(v)); }
Var F64(double v) { return scalar_constant(v, DType::kFloat64); }

// A vector laid along `axis` of a rank-`rank` tensor (broadcast on the others).
Var Along(const Var& v, int axis, int rank) {
  std::vector<int> order(rank, -1);
  order[axis] = 0;
  return dimshuffle(v, order);
}

// ---- Pad ----

// The output's positions along one axis, as input positions (-before ... size + after - 1).
Var PaddedPositions(const Var& size, const Var& before, const Var& after) {
  return arange(Int64(0) - before, size + after, Int64(1), DType::kInt64);
}

// The input position each padded position reads in edge and reflect modes.
Var EdgeSource(const Var& pos, const Var& size) { return clip(pos, Int64(0), size - Int64(1)); }
Var ReflectSource(const Var& pos, const Var& size) {
  const Var period = maximum(Int64(2) * (size - Int64(1)), Int64(1));
  const Var m = mod(pos, period);  // NumPy's mod: non-negative for a positive period
  return switch_(ge(m, size), period - m, m);
}

Outs Pad(const ImportNode& n) {
  Var x = n.in(0);
  if (!x.ok()) return x.status();
  const std::string mode = n.String("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") {
    return n.Unimplemented(absl::StrCat("mode '", mode, "'"));
  }
  std::vector<Var> pads;
  std::vector<int64_t> known;  // the pads' values, when known at import
  Var value = ScalarLike(x, 0.0);
  if (n.opset() < 11) {
    known = n.Ints("pads");
    for (int64_t p : known) pads.push_back(Int64(p));
    value = ScalarLike(x, n.Float("value", 0.0f));
  } else {
    absl::StatusOr<std::vector<Var>> given = IntsAtRunTime(n, 1, "pads");
    if (!given.ok()) return given.status();
    pads = *std::move(given);
    if (n.constant(1).has_value()) known = *n.ConstantInts(1, "pads");
    if (n.has(2)) value = cast(n.in(2), x.dtype());
  }
  const int rank = x.ndim();
  if (static_cast<int>(pads.size()) != 2 * rank) {
    return n.Invalid(absl::StrCat("pads has ", pads.size(), " entries, not ", 2 * rank));
  }
  for (int d = 0; d < rank; ++d) {
    if (!known.empty() && known[d] == 0 && known[rank + d] == 0) continue;  // left alone
    const Var size = DimOf(x.ptr(), d);
    const Var pos = PaddedPositions(size, pads[d], pads[rank + d]);
    if (mode == "constant") {
      const Var inside = Along(and_(ge(pos, Int64(0)), lt(pos, size)), d, rank);
      x = switch_(inside, TakeAlong(x, d, EdgeSource(pos, size)), value);
    } else {
      x = TakeAlong(x, d, mode == "edge" ? EdgeSource(pos, size) : ReflectSource(pos, size));
    }
  }
  return std::vector<Var>{x};
}

// ---- Resize ----

struct ResizeSpec {
  std::string mode = "nearest";
  std::string coordinates = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

// The input coordinate (float64) of each output position along an axis of `in` input and `out`
// output positions, under `spec.coordinates`; roi_start/roi_end for tf_crop_and_resize. The
// transformations that divide by the output's length take `out_f`: in * scale unrounded when
// scales are given, as ONNX's reference does.
absl::StatusOr<Var> SourceCoordinates(const ImportNode& n, const ResizeSpec& spec, const Var& in,
                                      const Var& out, const Var& out_f, const Var& scale,
                                      const Var& roi_start, const Var& roi_end) {
  const Var j = cast(arange(out), DType::kFloat64);
  const Var in_f = cast(in, DType::kFloat64);
  const Var several = gt(out_f, F64(1));
  const Var gaps = maximum(out_f - F64(1), F64(1));
  const std::string& c = spec.coordinates;
  if (c == "half_pixel") return (j + F64(0.5)) / scale - F64(0.5);
  if (c == "pytorch_half_pixel") return switch_(several, (j + F64(0.5)) / scale - F64(0.5), j * F64(0));
  if (c == "align_corners") return switch_(several, j * (in_f - F64(1)) / gaps, j * F64(0));
  if (c == "asymmetric") return j / scale;
  if (c == "tf_half_pixel_for_nn") return (j + F64(0.5)) / scale;
  if (c == "tf_crop_and_resize") {
    const Var span = in_f - F64(1);
    return switch_(several, roi_start * span + j * (roi_end - roi_start) * span / gaps,
                   j * F64(0) + F64(0.5) * (roi_start + roi_end) * span);
  }
  return n.Unimplemented(absl::StrCat("coordinate_transformation_mode '", c, "'"));
}

// The nearest input position of each coordinate, rounded as `spec.nearest` says ("simple": the
// rule before opset 11, up when downsampling, else down).
absl::StatusOr<Var> NearestPosition(const ImportNode& n, const ResizeSpec& spec, const Var& x,
                                    const Var& scale) {
  const std::string& r = spec.nearest;
  if (r == "round_prefer_floor") return ceil(x - F64(0.5));
  if (r == "round_prefer_ceil") return floor(x + F64(0.5));
  if (r == "floor") return floor(x);
  if (r == "ceil") return ceil(x);
  if (r == "simple") return switch_(lt(scale, F64(1)), ceil(x), floor(x));
  return n.Unimplemented(absl::StrCat("nearest_mode '", r, "'"));
}

// Keys' cubic convolution weight of a tap at distance t (|t| < 2) with coefficient a.
Var CubicWeight(const Var& t, double a) {
  const Var t2 = t * t, t3 = t2 * t;
  const Var near = F64(a + 2) * t3 - F64(a + 3) * t2 + F64(1);
  const Var far = F64(a) * t3 - F64(5 * a) * t2 + F64(8 * a) * t - F64(4 * a);
  return switch_(le(t, F64(1)), near, far);
}

// y resized along `axis` from `in` to `out` positions.
absl::StatusOr<Var> ResizeAxis(const ImportNode& n, const ResizeSpec& spec, const Var& y, int axis,
                               const Var& in, const Var& out, const Var& out_f, const Var& scale,
                               const Var& roi_start, const Var& roi_end, Var& outside) {
  absl::StatusOr<Var> x = SourceCoordinates(n, spec, in, out, out_f, scale, roi_start, roi_end);
  if (!x.ok()) return x.status();
  const int rank = y.ndim();
  const Var last = in - Int64(1);
  auto position = [&](const Var& p) { return clip(cast(p, DType::kInt64), Int64(0), last); };
  if (spec.coordinates == "tf_crop_and_resize") {
    const Var off = or_(lt(*x, F64(0)), gt(*x, cast(last, DType::kFloat64)));
    outside = or_(outside, Along(off, axis, rank));
  }
  if (spec.mode == "nearest") {
    absl::StatusOr<Var> p = NearestPosition(n, spec, *x, scale);
    if (!p.ok()) return p.status();
    return TakeAlong(y, axis, position(*p));
  }
  const Var base = floor(*x), s = *x - base;
  auto weighted = [&](const Var& p, const Var& w) {
    return TakeAlong(y, axis, position(p)) * Along(cast(w, y.dtype()), axis, rank);
  };
  if (spec.mode == "linear") return weighted(base, F64(1) - s) + weighted(base + F64(1), s);
  // cubic: taps at base - 1 ... base + 2.
  std::vector<Var> taps, weights;
  Var total = F64(0);
  for (int k = -1; k <= 2; ++k) {
    const Var p = base + F64(k);
    Var w = CubicWeight(abs(s - F64(k)), spec.cubic_a);
    if (spec.exclude_outside) {
      w = switch_(and_(ge(p, F64(0)), le(p, cast(last, DType::kFloat64))), w, F64(0));
    }
    taps.push_back(p);
    weights.push_back(w);
    total = total + w;
  }
  auto term = [&](size_t k) {
    return weighted(taps[k], spec.exclude_outside ? weights[k] / total : weights[k]);
  };
  return term(0) + term(1) + term(2) + term(3);
}

// A vector input's entries as float64 scalars (none when it is absent or empty).
absl::StatusOr<std::vector<Var>> FloatsAtRunTime(const ImportNode& n, int i, absl::string_view what) {
  std::vector<Var> out;
  if (!n.has(i)) return out;
  const Var v = n.in(i);
  if (v.ndim() != 1 || !v.type().shape()[0].has_value()) {
    return n.Unimplemented(absl::StrCat(what, " of a length not known statically"));
  }
  for (int64_t k = 0; k < *v.type().shape()[0]; ++k) {
    out.push_back(cast(subtensor(v, {Index(k)}), DType::kFloat64));
  }
  return out;
}

// Resize (opset 10: X, scales; from 11: X, roi, scales, sizes) and Upsample (X, scales; the
// attribute before opset 9).
Outs Resize(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  const int rank = x.ndim();
  const bool upsample = n.op() == "Upsample";
  ResizeSpec spec;
  spec.mode = n.String("mode", "nearest");
  if (upsample || n.opset() < 11) {
    spec.coordinates = "asymmetric";
    spec.nearest = "simple";
    if (spec.mode == "bilinear") spec.mode = "linear";  // Upsample's name before opset 9
  } else {
    spec.coordinates = n.String("coordinate_transformation_mode", "half_pixel");
    spec.nearest = n.String("nearest_mode", "round_prefer_floor");
    spec.cubic_a = n.Float("cubic_coeff_a", -0.75f);
    spec.exclude_outside = n.Int("exclude_outside", 0) != 0;
    spec.extrapolation = n.Float("extrapolation_value", 0.0f);
  }
  if (spec.mode != "nearest" && spec.mode != "linear" && spec.mode != "cubic") {
    return n.Unimplemented(absl::StrCat("mode '", spec.mode, "'"));
  }
  if (spec.mode != "nearest" && !IsFloat(x.dtype())) {
    return n.Unimplemented(absl::StrCat(spec.mode, " interpolation of ", DTypeName(x.dtype())));
  }
  const int scales_input = upsample || n.opset() < 11 ? 1 : 2;
  std::vector<Var> scales, sizes, roi;
  if (upsample && n.opset() < 9) {
    for (float s : n.Floats("scales")) scales.push_back(F64(s));
  } else {
    absl::StatusOr<std::vector<Var>> given = FloatsAtRunTime(n, scales_input, "scales");
    if (!given.ok()) return given.status();
    scales = *std::move(given);
  }
  if (scales.empty() && scales_input == 2 && n.has(3)) {
    absl::StatusOr<std::vector<Var>> given = IntsAtRunTime(n, 3, "sizes");
    if (!given.ok()) return given.status();
    sizes = *std::move(given);
  }
  if (scales.empty() == sizes.empty()) return n.Invalid("give one of scales and sizes");
  if (static_cast<int>(scales.size() + sizes.size()) != rank) {
    return n.Invalid(absl::StrCat("scales or sizes must hold ", rank, " entries"));
  }
  if (spec.coordinates == "tf_crop_and_resize") {
    absl::StatusOr<std::vector<Var>> given = FloatsAtRunTime(n, 1, "roi");
    if (!given.ok()) return given.status();
    roi = *std::move(given);
    if (static_cast<int>(roi.size()) != 2 * rank) {
      return n.Invalid(absl::StrCat("roi must hold ", 2 * rank, " entries"));
    }
  }
  std::vector<double> known;  // the scales' values, when known at import
  if (upsample && n.opset() < 9) {
    for (float f : n.Floats("scales")) known.push_back(f);
  } else if (!scales.empty() && n.constant(scales_input).has_value()) {
    const Tensor t = n.constant(scales_input)->AsType(DType::kFloat64).Contiguous();
    known.assign(t.data<double>(), t.data<double>() + t.size());
  }
  Var y = x;
  Var outside = scalar_constant(0.0, DType::kBool);
  for (int d = 0; d < rank; ++d) {
    // A dim whose scale is known to be 1 stays (unless a region of interest crops it).
    if (!known.empty() && known[d] == 1.0 && roi.empty()) continue;
    const Var in = DimOf(x.ptr(), d);
    Var out, out_f, scale;
    if (!sizes.empty()) {
      out = sizes[d];
      out_f = cast(out, DType::kFloat64);
      scale = out_f / cast(in, DType::kFloat64);
    } else {
      scale = scales[d];
      out_f = cast(in, DType::kFloat64) * scale;
      out = cast(floor(out_f), DType::kInt64);
    }
    const Var start = roi.empty() ? F64(0) : roi[d], end = roi.empty() ? F64(1) : roi[rank + d];
    absl::StatusOr<Var> resized = ResizeAxis(n, spec, y, d, in, out, out_f, scale, start, end, outside);
    if (!resized.ok()) return resized.status();
    y = *resized;
  }
  if (spec.coordinates == "tf_crop_and_resize") {
    y = switch_(outside, ScalarLike(y, spec.extrapolation), y);
  }
  return std::vector<Var>{y};
}

}  // namespace

void AddResampleImporters(OpTable& t) {
  t["Pad"] = Pad;
  t["Resize"] = Resize;
  t["Upsample"] = Resize;
}

}  // namespace kiln::onnx
