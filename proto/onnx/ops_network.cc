// ONNX's neural-network operators: MatMul, Gemm, Conv, the pools, and the normalizations, as
// Kiln's MatMul, Dot, AbstractConv, Pool and elementwise compositions.
#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/alloc.h"
#include "core/ops/conv.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/indexing.h"
#include "core/ops/linalg.h"
#include "core/ops/math.h"
#include "core/ops/nnet.h"
#include "core/ops/op_util.h"
#include "core/ops/pool.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"
#include "proto/onnx/import_node.h"
#include "proto/onnx/onnx_tensor.h"

namespace kiln::onnx {
namespace {

using Outs = NodeOutputs;

// A per-channel vector (C,) laid along axis 1 of a rank-`rank` tensor: (1, C, 1, ...).
Var AlongChannels(const Var& v, int rank) {
  std::vector<int> order(rank, -1);
  order[1] = 0;
  return dimshuffle(v, order);
}

Outs MatMul(const ImportNode& n) { return std::vector<Var>{matmul(n.in(0), n.in(1))}; }

Outs Gemm(const ImportNode& n) {
  Var a = n.in(0), b = n.in(1);
  if (n.Int("transA", 0) != 0) a = transpose(a);
  if (n.Int("transB", 0) != 0) b = transpose(b);
  Var y = dot(a, b);
  const double alpha = n.Float("alpha", 1.0f), beta = n.Float("beta", 1.0f);
  if (alpha != 1.0) y = y * ScalarLike(y, alpha);
  if (n.has(2) && beta != 0.0) {
    const Var c = n.in(2);
    y = y + (beta == 1.0 ? c : c * ScalarLike(c, beta));
  }
  return std::vector<Var>{y};
}

// The spatial geometry of Conv and the pools: kernel, strides, dilations and (low, high) pads
// per spatial dim, from the attributes (auto_pad's SAME_* from the input's static shape).
struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<std::vector<int64_t>> pads;
};

absl::StatusOr<Window> MakeWindow(const ImportNode& n, const Var& x, std::vector<int64_t> kernel) {
  const int spatial = x.ndim() - 2;
  Window w{std::move(kernel), n.Ints("strides"), n.Ints("dilations"), {}};
  if (w.strides.empty()) w.strides.assign(spatial, 1);
  if (w.dilations.empty()) w.dilations.assign(spatial, 1);
  std::vector<int64_t> pads = n.Ints("pads");
  const std::string auto_pad = n.String("auto_pad", "NOTSET");
  if (pads.empty()) pads.assign(2 * spatial, 0);
  RETURN_IF_ERROR(CheckSizes(n, "kernel_shape", w.kernel, spatial, 1));
  RETURN_IF_ERROR(CheckSizes(n, "strides", w.strides, spatial, 1));
  RETURN_IF_ERROR(CheckSizes(n, "dilations", w.dilations, spatial, 1));
  RETURN_IF_ERROR(CheckSizes(n, "pads", pads, 2 * spatial, 0));
  for (int d = 0; d < spatial; ++d) {
    int64_t lo = pads[d], hi = pads[spatial + d];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const auto& size = x.type().shape()[2 + d];
      if (!size.has_value()) return n.Unimplemented("auto_pad SAME on a dim not known statically");
      RETURN_IF_ERROR(CheckSizes(n, "the input's spatial dim", {*size}, 1, 0));
      const int64_t out = (*size + w.strides[d] - 1) / w.strides[d];
      const int64_t total = std::max<int64_t>(
          (out - 1) * w.strides[d] + (w.kernel[d] - 1) * w.dilations[d] + 1 - *size, 0);
      lo = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      hi = total - lo;
    } else if (auto_pad == "VALID") {
      lo = hi = 0;
    } else if (auto_pad != "NOTSET") {
      return n.Invalid(absl::StrCat("auto_pad '", auto_pad, "'"));
    }
    w.pads.push_back({lo, hi});
  }
  return w;
}

// A 1-d input (N, C, L) as 2-d (N, C, 1, L), and back.
Var To2d(const Var& x) { return dimshuffle(x, {0, 1, -1, 2}); }
Var From2d(const Var& y) {
  if (!y.ok()) return y;
  StaticShape s = y.type().shape();
  s[2] = 1;
  return squeeze(specify_shape(y, s), std::vector<int>{2});
}

// kernel_shape, or the filters' static spatial dims.
absl::StatusOr<std::vector<int64_t>> KernelShape(const ImportNode& n, const Var& w) {
  std::vector<int64_t> kernel = n.Ints("kernel_shape");
  if (!kernel.empty()) return kernel;
  for (int d = 2; d < w.ndim(); ++d) {
    if (!w.type().shape()[d].has_value()) return n.Unimplemented("a kernel of unknown size");
    kernel.push_back(*w.type().shape()[d]);
  }
  return kernel;
}

}  // namespace

absl::StatusOr<Var> ConvolveAsOnnx(const ImportNode& n, Var x, Var w) {
  if (!x.ok() || !w.ok()) return x.ok() ? w.status() : x.status();
  const int spatial = x.ndim() - 2;
  if (spatial < 1 || spatial > 3) return n.Unimplemented(absl::StrCat(spatial, "-d convolution"));
  absl::StatusOr<std::vector<int64_t>> kernel_shape = KernelShape(n, w);
  if (!kernel_shape.ok()) return kernel_shape.status();
  std::vector<int64_t> kernel = *std::move(kernel_shape);
  absl::StatusOr<Window> win = MakeWindow(n, x, kernel);
  if (!win.ok()) return win.status();
  if (spatial == 1) {
    x = To2d(x);
    w = To2d(w);
    win->strides.insert(win->strides.begin(), 1);
    win->dilations.insert(win->dilations.begin(), 1);
    win->pads.insert(win->pads.begin(), {0, 0});
  }
  ConvOptions options;
  options.border_mode = ConvBorderPads(win->pads);
  options.subsample.assign(win->strides.begin(), win->strides.end());
  options.filter_dilation.assign(win->dilations.begin(), win->dilations.end());
  options.filter_flip = false;  // ONNX's Conv is a correlation
  options.num_groups = static_cast<int>(n.Int("group", 1));
  const Var y = spatial == 3 ? conv3d(x, w, options) : conv2d(x, w, options);
  return spatial == 1 ? From2d(y) : y;
}

namespace {

Outs Conv(const ImportNode& n) {
  absl::StatusOr<Var> y = ConvolveAsOnnx(n, n.in(0), n.in(1));
  if (!y.ok()) return y.status();
  if (n.has(2)) return std::vector<Var>{*y + AlongChannels(n.in(2), y->ndim())};
  return std::vector<Var>{*y};
}

// ConvTranspose: the gradient of the forward convolution with the same filters (ONNX's W is
// (C, M / group, k...), the forward filter's layout) wrt its input, of the output's spatial
// shape: strides * (in - 1) + output_padding + (k - 1) * dilations + 1 - pads, or output_shape
// (whose padding then splits as auto_pad says).
Outs ConvTranspose(const ImportNode& n) {
  Var x = n.in(0), w = n.in(1);
  if (!x.ok() || !w.ok()) return x.ok() ? w.status() : x.status();
  const int spatial = x.ndim() - 2;
  if (spatial < 1 || spatial > 3) return n.Unimplemented(absl::StrCat(spatial, "-d ConvTranspose"));
  absl::StatusOr<std::vector<int64_t>> kernel_shape = KernelShape(n, w);
  if (!kernel_shape.ok()) return kernel_shape.status();
  std::vector<int64_t> kernel = *std::move(kernel_shape);
  std::vector<int64_t> strides = n.Ints("strides"), dilations = n.Ints("dilations");
  std::vector<int64_t> pads = n.Ints("pads"), output_padding = n.Ints("output_padding");
  const std::vector<int64_t> output_shape = n.Ints("output_shape");
  if (strides.empty()) strides.assign(spatial, 1);
  if (dilations.empty()) dilations.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (output_padding.empty()) output_padding.assign(spatial, 0);
  RETURN_IF_ERROR(CheckSizes(n, "kernel_shape", kernel, spatial, 1));
  RETURN_IF_ERROR(CheckSizes(n, "strides", strides, spatial, 1));
  RETURN_IF_ERROR(CheckSizes(n, "dilations", dilations, spatial, 1));
  RETURN_IF_ERROR(CheckSizes(n, "pads", pads, 2 * spatial, 0));
  RETURN_IF_ERROR(CheckSizes(n, "output_padding", output_padding, spatial, 0));
  if (!output_shape.empty()) {  // (N, C, spatial...) or the spatial dims alone
    const std::vector<int64_t> last(
        output_shape.end() - std::min<size_t>(output_shape.size(), spatial), output_shape.end());
    RETURN_IF_ERROR(CheckSizes(n, "output_shape's spatial dims", last, spatial, 0));
  }
  const std::string auto_pad = n.String("auto_pad", "NOTSET");
  std::vector<std::vector<int64_t>> border;
  std::vector<int64_t> out;
  for (int d = 0; d < spatial; ++d) {
    const auto& in = x.type().shape()[2 + d];
    if (!in.has_value()) return n.Unimplemented("a spatial dim not known statically");
    RETURN_IF_ERROR(CheckSizes(n, "the input's spatial dim", {*in}, 1, 1));
    const int64_t full =
        strides[d] * (*in - 1) + output_padding[d] + (kernel[d] - 1) * dilations[d] + 1;
    int64_t lo = pads[d], hi = pads[spatial + d];
    int64_t target = full - lo - hi;
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      target =
          output_shape.empty() ? *in * strides[d] : output_shape[output_shape.size() - spatial + d];
      const int64_t total = std::max<int64_t>(full - target, 0);
      lo = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      hi = total - lo;
    }
    border.push_back({lo, hi});
    out.push_back(target);
  }
  if (spatial == 1) {
    x = To2d(x);
    w = To2d(w);
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    border.insert(border.begin(), {0, 0});
    out.insert(out.begin(), 1);
  }
  ConvOptions options;
  options.border_mode = ConvBorderPads(border);
  options.subsample.assign(strides.begin(), strides.end());
  options.filter_dilation.assign(dilations.begin(), dilations.end());
  options.filter_flip = false;
  options.num_groups = static_cast<int>(n.Int("group", 1));
  std::vector<Var> shape;
  for (int64_t v : out) shape.push_back(scalar_constant(v, DType::kInt64));
  Var y = conv_grad_wrt_inputs(std::max(spatial, 2), w, x, make_vector(shape), options);
  if (spatial == 1) y = From2d(y);
  if (n.has(2)) y = y + AlongChannels(n.in(2), spatial + 2);
  return std::vector<Var>{y};
}

// Hann, Hamming and Blackman windows: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) for n below
// size, N = size (periodic) or size - 1.
template <int kWindow>
Outs SignalWindow(const ImportNode& n) {
  static constexpr double kCoefficients[3][3] = {
      {0.5, 0.5, 0.0}, {25.0 / 46, 21.0 / 46, 0.0}, {0.42, 0.5, 0.08}};
  const double* a = kCoefficients[kWindow];
  absl::StatusOr<DType> dtype = DTypeFromOnnx(static_cast<int32_t>(n.Int("output_datatype", 1)));
  if (!dtype.ok()) return n.Unimplemented(dtype.status().message());
  const Var size = cast(n.in(0), DType::kInt64);
  const Var count =
      cast(n.Int("periodic", 1) != 0 ? size : size - scalar_constant(int64_t{1}, DType::kInt64),
           DType::kFloat64);
  const Var phase = cast(arange(size), DType::kFloat64) *
                    scalar_constant(2 * 3.14159265358979323846, DType::kFloat64) / count;
  Var w =
      scalar_constant(a[0], DType::kFloat64) - scalar_constant(a[1], DType::kFloat64) * cos(phase);
  if (a[2] != 0)
    w = w +
        scalar_constant(a[2], DType::kFloat64) * cos(phase * scalar_constant(2.0, DType::kFloat64));
  return std::vector<Var>{cast(w, *dtype)};
}

// An int64 vector constant.
Var Ints(const std::vector<int64_t>& v) {
  absl::StatusOr<Tensor> t = Tensor::FromValues<int64_t>(
      DType::kInt64, {static_cast<int64_t>(v.size())}, std::span<const int64_t>(v));
  return t.ok() ? constant(*t) : Var(t.status());
}

// The least value of an integer dtype (0 for the unsigned ones and bool).
double LowestInteger(DType t) {
  switch (t) {
    case DType::kInt8: return -128.0;
    case DType::kInt16: return -32768.0;
    case DType::kInt32: return -2147483648.0;
    case DType::kInt64: return -9223372036854775808.0;
    default: return 0.0;
  }
}

// The most windows PoolPadded takes as slices (each is a node of the graph).
constexpr int64_t kMostPoolOffsets = 1024;

// Each kernel offset's cells of every window, as the index of a strided slice of the padded
// input (windows starting at 0): one slice per offset, at most kMostPoolOffsets of them.
absl::StatusOr<std::vector<std::vector<Index>>> WindowCells(const ImportNode& n, const Window& w,
                                                            const std::vector<int64_t>& out_len) {
  const int spatial = static_cast<int>(out_len.size());
  int64_t offsets = 1;
  for (int d = 0; d < spatial; ++d) offsets = std::min(offsets * w.kernel[d], kMostPoolOffsets + 1);
  if (offsets > kMostPoolOffsets) {
    return n.Unimplemented(absl::StrCat("pooling by slices (strides not multiples of the "
                                        "dilations, or Indices) of more than ",
                                        kMostPoolOffsets, " cells in a window"));
  }
  std::vector<std::vector<Index>> cells;
  std::vector<int64_t> at(spatial, 0);  // the kernel offset, counted like an odometer
  for (;;) {
    std::vector<Index> idx(2, Index(kiln::Slice{}));
    for (int d = 0; d < spatial; ++d) {
      const int64_t start = at[d] * w.dilations[d];
      idx.push_back(
          Index(kiln::Slice{start, start + (out_len[d] - 1) * w.strides[d] + 1, w.strides[d]}));
    }
    cells.push_back(std::move(idx));
    int d = spatial - 1;
    while (d >= 0 && ++at[d] == w.kernel[d]) at[d--] = 0;
    if (d < 0) return cells;
  }
}

// The max (or sum) over each window of x, already padded, whose windows start at 0: Kiln's Pool
// on x subsampled by the dilations when each stride is a multiple of its dilation (a dilated
// window then reads one subsampled grid), else one strided slice per kernel offset.
absl::StatusOr<Var> PoolWindows(const ImportNode& n, const Var& x, const Window& w, bool max_pool,
                                const std::vector<int64_t>& out_len) {
  const int spatial = x.ndim() - 2;
  bool on_grid = true;
  for (int d = 0; d < spatial; ++d) on_grid &= w.strides[d] % w.dilations[d] == 0;
  if (on_grid) {
    std::vector<Index> grid(2, Index(kiln::Slice{})), keep(2, Index(kiln::Slice{}));
    std::vector<int64_t> kernel = w.kernel, strides, pad(std::max(spatial, 2), 0);
    for (int d = 0; d < spatial; ++d) {
      grid.push_back(Index(kiln::Slice{std::nullopt, std::nullopt, w.dilations[d]}));
      keep.push_back(Index(kiln::Slice{int64_t{0}, out_len[d]}));
      strides.push_back(w.strides[d] / w.dilations[d]);
    }
    Var sub = subtensor(x, grid);
    if (spatial == 1) {
      sub = To2d(sub);
      kernel.insert(kernel.begin(), 1);
      strides.insert(strides.begin(), 1);
    }
    Var y = pool(sub, Ints(kernel), Ints(strides), Ints(pad), /*ignore_border=*/true,
                 max_pool ? "max" : "sum", std::max(spatial, 2));
    if (spatial == 1) y = From2d(y);
    return subtensor(y, keep);
  }
  absl::StatusOr<std::vector<std::vector<Index>>> cells = WindowCells(n, w, out_len);
  if (!cells.ok()) return cells.status();
  Var y = subtensor(x, cells->front());
  for (size_t c = 1; c < cells->size(); ++c) {
    const Var cell = subtensor(x, (*cells)[c]);
    y = max_pool ? maximum(y, cell) : y + cell;
  }
  return y;
}

// MaxPool with its Indices: the max over each window of the padded x and the position (from
// `positions`, padded as x) of its first cell holding it, one strided slice per kernel offset.
Outs MaxWithIndices(const ImportNode& n, const Var& x, const Var& positions, const Window& w,
                    const std::vector<int64_t>& out_len) {
  absl::StatusOr<std::vector<std::vector<Index>>> cells = WindowCells(n, w, out_len);
  if (!cells.ok()) return cells.status();
  Var best = subtensor(x, cells->front()), at_best = subtensor(positions, cells->front());
  for (size_t c = 1; c < cells->size(); ++c) {
    // A strictly larger value moves the position: ties keep the first.
    const Var cell = subtensor(x, (*cells)[c]);
    const Var larger = gt(cell, best);
    at_best = switch_(larger, subtensor(positions, (*cells)[c]), at_best);
    best = switch_(larger, cell, best);
  }
  return std::vector<Var>{best, at_best};
}

// Pooling that Kiln's Pool does not take as it is (ceil_mode, dilations, uneven pads) on static
// spatial dims: the input padded (with the lowest value for max, 0 for average) as far as the
// windows reach, then PoolWindows; an average divides by the count of each window's cells inside
// the input (and its pads, with count_include_pad), a constant computed here.
Outs PoolPadded(const ImportNode& n, Var x, const Window& w, bool max_pool, bool ceil_mode,
                bool count_pads, bool with_indices) {
  const int spatial = x.ndim() - 2;
  // With indices: each cell's flat position in x (row-major, or its spatial dims column-major
  // with storage_order 1), padded with -1 as x is.
  Var positions;
  if (with_indices) {
    positions = Var(ConstDim(0));
    const bool column_major = n.Int("storage_order", 0) != 0;
    for (int d : {0, 1}) positions = positions * DimOf(x.ptr(), d) + PositionsAlong(x, d, d, x.ndim());
    for (int k = 0; k < spatial; ++k) {
      const int d = 2 + (column_major ? spatial - 1 - k : k);
      positions = positions * DimOf(x.ptr(), d) + PositionsAlong(x, d, d, x.ndim());
    }
  }
  std::vector<int64_t> out_len(spatial);
  std::vector<std::vector<double>> counts(spatial);  // per dim, the cells each window counts
  const Var fill = max_pool ? ScalarLike(x, IsFloat(x.dtype())
                                                ? -std::numeric_limits<double>::infinity()
                                                : LowestInteger(x.dtype()))
                            : ScalarLike(x, 0.0);
  int64_t windows = 1;  // the divisor's entries, held to the tensor limit
  for (int d = 0; d < spatial; ++d) {
    const std::optional<int64_t> size = x.type().shape()[2 + d];
    if (!size.has_value()) return n.Unimplemented("this pooling on a dim not known statically");
    // Every term is at most 2^31 - 1 (CheckSizes here and in MakeWindow): no sum below overflows.
    RETURN_IF_ERROR(CheckSizes(n, "the input's spatial dim", {*size}, 1, 0));
    const int64_t k = w.kernel[d], s = w.strides[d], dil = w.dilations[d];
    const int64_t lo = w.pads[d][0], hi = w.pads[d][1], reach = (k - 1) * dil + 1;
    const int64_t room = *size + lo + hi - reach;
    if (room < 0) return n.Invalid("the window is larger than the padded input");
    int64_t out = room / s + 1;
    // ceil_mode: one more window when some cells are left, unless it would start in the pads.
    if (ceil_mode && room % s != 0 && out * s < *size + lo) ++out;
    out_len[d] = out;
    if (!max_pool) {  // the cells each window counts
      const std::optional<int64_t> more = CheckedMul(windows, out);
      if (!more.has_value() || *more > n.max_tensor_bytes() / 8) {
        return absl::ResourceExhaustedError(absl::StrCat(
            n.Describe(), ": the average's divisor would hold more than ", n.max_tensor_bytes(),
            " bytes"));
      }
      windows = *more;
      // Window j's offsets o reach j * s + o * dil - lo: those inside [first, last] count.
      const int64_t first = count_pads ? -lo : 0, last = (count_pads ? *size + hi : *size) - 1;
      auto floor_div = [](int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); };
      for (int64_t j = 0; j < out; ++j) {
        const int64_t from = std::max<int64_t>(0, -floor_div(-(first - j * s + lo), dil));
        const int64_t to = std::min<int64_t>(k - 1, floor_div(last - j * s + lo, dil));
        counts[d].push_back(static_cast<double>(std::max<int64_t>(0, to - from + 1)));
      }
    }
    // Pad this dim: lo before, and after it as far as the last window reaches past the input.
    const int64_t after = std::max<int64_t>((out - 1) * s + reach - (*size + lo), 0);
    auto pad = [&](const Var& t, const Var& value) {
      std::vector<Var> parts;
      for (int64_t width : {lo, int64_t{-1}, after}) {
        if (width < 0) parts.push_back(t);
        if (width <= 0) continue;
        std::vector<Var> dims;
        for (int e = 0; e < t.ndim(); ++e) {
          dims.push_back(e == 2 + d ? Var(ConstDim(width)) : Var(DimOf(x.ptr(), e)));
        }
        parts.push_back(alloc(value, dims));
      }
      return parts.size() > 1 ? concatenate(parts, 2 + d) : t;
    };
    if (with_indices) positions = pad(positions, Var(ConstDim(-1)));
    x = pad(x, fill);
  }
  if (with_indices) return MaxWithIndices(n, x, positions, w, out_len);
  absl::StatusOr<Var> y = PoolWindows(n, x, w, max_pool, out_len);
  if (!y.ok() || max_pool) return y.ok() ? Outs(std::vector<Var>{*y}) : Outs(y.status());
  // The divisor: the outer product of the per-dim counts, shaped (1, 1, out...).
  std::vector<int64_t> shape{1, 1};
  shape.insert(shape.end(), out_len.begin(), out_len.end());
  Tensor divisor = Tensor::Empty(DType::kFloat64, Shape(shape.begin(), shape.end()));
  double* p = divisor.data<double>();
  for (int64_t i = 0; i < divisor.size(); ++i) {
    double c = 1;
    for (int64_t rest = i, d = spatial - 1; d >= 0; rest /= out_len[d], --d) {
      c *= counts[d][rest % out_len[d]];
    }
    p[i] = c;
  }
  return std::vector<Var>{*y / cast(constant(divisor), y->dtype())};
}

template <bool kMax>
Outs Pool(const ImportNode& n) {
  Var x = n.in(0);
  if (!x.ok()) return x.status();
  const int spatial = x.ndim() - 2;
  if (spatial < 1 || spatial > 3) return n.Unimplemented(absl::StrCat(spatial, "-d pooling"));
  absl::StatusOr<Window> win = MakeWindow(n, x, n.Ints("kernel_shape"));
  if (!win.ok()) return win.status();
  const bool ceil_mode = n.Int("ceil_mode", 0) != 0;
  const bool count_pads = !kMax && n.Int("count_include_pad", 0) != 0;
  bool native = !ceil_mode;  // what Kiln's Pool takes: no ceil_mode, dilation or uneven pads
  std::vector<int64_t> pad;
  for (int d = 0; d < spatial; ++d) {
    native &= win->dilations[d] == 1 && win->pads[d][0] == win->pads[d][1];
    pad.push_back(win->pads[d][0]);
  }
  const bool with_indices = kMax && n.proto().output_size() > 1 && !n.proto().output(1).empty();
  if (!native || with_indices) {
    return PoolPadded(n, x, *win, kMax, ceil_mode, count_pads, with_indices);
  }
  if (spatial == 1) {
    x = To2d(x);
    win->kernel.insert(win->kernel.begin(), 1);
    win->strides.insert(win->strides.begin(), 1);
    pad.insert(pad.begin(), 0);
  }
  const int dims = std::max(spatial, 2);
  const std::string mode = kMax                                 ? "max"
                           : n.Int("count_include_pad", 0) != 0 ? "average_inc_pad"
                                                                : "average_exc_pad";
  Var y =
      pool(x, Ints(win->kernel), Ints(win->strides), Ints(pad), /*ignore_border=*/true, mode, dims);
  if (spatial == 1) y = From2d(y);
  return std::vector<Var>{y};
}

// The axes 2.. of x (its spatial dims).
std::vector<int> SpatialAxes(const Var& x) {
  std::vector<int> axes;
  for (int d = 2; d < x.ndim(); ++d) axes.push_back(d);
  return axes;
}

template <bool kMax>
Outs GlobalPool(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  const std::vector<int> axes = SpatialAxes(x);
  return std::vector<Var>{kMax ? max(x, axes, true) : mean(x, axes, true)};
}

Outs BatchNormalization(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (n.Int("training_mode", 0) != 0) return n.Unimplemented("training_mode");
  if (n.opset() < 9 && n.Int("spatial", 1) == 0) return n.Unimplemented("spatial=0");
  const int rank = x.ndim();
  const Var scale = AlongChannels(n.in(1), rank), bias = AlongChannels(n.in(2), rank);
  const Var m = AlongChannels(n.in(3), rank), v = AlongChannels(n.in(4), rank);
  const Var eps = ScalarLike(x, n.Float("epsilon", 1e-5f));
  return std::vector<Var>{(x - m) / sqrt(v + eps) * scale + bias};
}

Outs InstanceNormalization(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  const std::vector<int> axes = SpatialAxes(x);
  const Var mu = mean(x, axes, true);
  const Var centered = x - mu;
  const Var variance = mean(centered * centered, axes, true);
  const Var eps = ScalarLike(x, n.Float("epsilon", 1e-5f));
  const int rank = x.ndim();
  return std::vector<Var>{centered / sqrt(variance + eps) * AlongChannels(n.in(1), rank) +
                          AlongChannels(n.in(2), rank)};
}

// MeanVarianceNormalization: (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over `axes` (default
// 0, 2, 3), as ONNX's function body computes it.
Outs MeanVarianceNormalization(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  std::vector<int64_t> given = n.has_attr("axes") ? n.Ints("axes") : std::vector<int64_t>{0, 2, 3};
  std::vector<int> axes;
  for (int64_t a : given) {
    absl::StatusOr<int> axis = NormalizeAxis(n, a, x.ndim());
    if (!axis.ok()) return axis.status();
    axes.push_back(*axis);
  }
  const Var mu = mean(x, axes, true);
  const Var deviation = sqrt(mean(x * x, axes, true) - mu * mu);
  return std::vector<Var>{(x - mu) / (deviation + ScalarLike(x, 1e-9))};
}

// LRN: x / (bias + alpha / size * the sum of squares over `size` neighbouring channels)^beta,
// the window from c - (size - 1) / 2 to c + size / 2 (channels past the edges count 0).
Outs LRN(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  if (x.ndim() < 3) return n.Invalid("the input must have at least 3 dims");
  const int64_t size = n.Int("size", 0);
  RETURN_IF_ERROR(CheckSizes(n, "size", {size}, 1, 1));
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const Var squares = x * x;
  std::vector<Var> parts;
  auto zeros_of = [&](int64_t channels) {
    std::vector<Var> dims;
    for (int d = 0; d < x.ndim(); ++d) {
      dims.push_back(d == 1 ? Var(ConstDim(channels)) : Var(DimOf(x.ptr(), d)));
    }
    return alloc(ScalarLike(x, 0), dims);
  };
  if (before > 0) parts.push_back(zeros_of(before));
  parts.push_back(squares);
  if (after > 0) parts.push_back(zeros_of(after));
  const Var padded = parts.size() == 1 ? squares : concatenate(parts, 1);
  const Var channels = DimOf(x.ptr(), 1);
  Var window;
  for (int64_t k = 0; k < size; ++k) {
    const Var start = Var(ConstDim(k));
    const Var part = subtensor(padded, {Index(kiln::Slice{}), Index(kiln::Slice{start, start + channels})});
    window = k == 0 ? part : window + part;
  }
  const Var scale = ScalarLike(x, n.Float("bias", 1.0f)) +
                    ScalarLike(x, n.Float("alpha", 1e-4f) / static_cast<double>(size)) * window;
  return std::vector<Var>{x / pow(scale, ScalarLike(x, n.Float("beta", 0.75f)))};
}

Outs LayerNormalization(const ImportNode& n) {
  const Var x = n.in(0);
  if (!x.ok()) return x.status();
  absl::StatusOr<int> axis = NormalizeAxis(n, n.Int("axis", -1), x.ndim());
  if (!axis.ok()) return axis.status();
  std::vector<int> axes;
  for (int d = *axis; d < x.ndim(); ++d) axes.push_back(d);
  // Computed in stash_type (float32 by default, as ONNX's function body does).
  const DType stash = n.Int("stash_type", 1) == 11 ? DType::kFloat64 : DType::kFloat32;
  const Var xs = cast(x, stash);
  const Var mu = mean(xs, axes, true);
  const Var centered = xs - mu;
  const Var variance = mean(centered * centered, axes, true);
  const Var inv_std =
      reciprocal(sqrt(variance + scalar_constant(n.Float("epsilon", 1e-5f), stash)));
  Var y = cast(centered * inv_std, x.dtype()) * n.in(1);
  if (n.has(2)) y = y + n.in(2);
  return std::vector<Var>{y, mu, inv_std};
}

// The negative log-likelihood of `log_prob` (N, C, d...) at the classes `target` (N, d...),
// weighted per class, with ignore_index's positions left out, reduced as ONNX's `reduction`
// says (mean: over the weights of the positions kept).
absl::StatusOr<Var> NegativeLogLikelihood(const ImportNode& n, const Var& log_prob,
                                          const Var& target, const Var& weight) {
  if (!log_prob.ok() || !target.ok()) return log_prob.ok() ? target.status() : log_prob.status();
  if (log_prob.ndim() < 2 || target.ndim() != log_prob.ndim() - 1) {
    return n.Invalid("the input must be (N, C, d...) and the target (N, d...)");
  }
  const Var t = cast(target, DType::kInt64);
  Var kept = ones_like(t, DType::kBool), safe = t;
  if (n.has_attr("ignore_index")) {
    const Var ignored = eq(t, scalar_constant(n.Int("ignore_index", 0), DType::kInt64));
    kept = invert(ignored);
    safe = switch_(ignored, zeros_like(t), t);
  }
  // log_prob[i, t[i, d...], d...]: positions along every axis but the class axis.
  std::vector<AdvIndex> idx;
  for (int d = 0; d < log_prob.ndim(); ++d) {
    if (d == 1) {
      idx.push_back(AdvIndex(safe));
      continue;
    }
    const int td = d == 0 ? 0 : d - 1;
    idx.push_back(AdvIndex(PositionsAlong(t, td, td, t.ndim())));
  }
  const Var picked = advanced_subtensor(log_prob, idx);
  Var w = cast(kept, log_prob.dtype());
  if (weight.ok()) w = w * advanced_subtensor(weight, {AdvIndex(safe)});
  const Var loss = -picked * w;
  const std::string reduction = n.String("reduction", "mean");
  if (reduction == "none") return loss;
  if (reduction == "sum") return sum(loss);
  if (reduction == "mean") return sum(loss) / sum(w);
  return n.Invalid(absl::StrCat("reduction '", reduction, "'"));
}

Outs NegativeLogLikelihoodLoss(const ImportNode& n) {
  absl::StatusOr<Var> loss = NegativeLogLikelihood(n, n.in(0), n.in(1), n.has(2) ? n.in(2) : Var());
  if (!loss.ok()) return loss.status();
  return std::vector<Var>{*loss};
}

Outs SoftmaxCrossEntropyLoss(const ImportNode& n) {
  const Var scores = n.in(0);
  const Var log_prob = log_softmax(scores, 1);
  absl::StatusOr<Var> loss =
      NegativeLogLikelihood(n, log_prob, n.in(1), n.has(2) ? n.in(2) : Var());
  if (!loss.ok()) return loss.status();
  return std::vector<Var>{*loss, log_prob};
}

}  // namespace

void AddNetworkImporters(OpTable& t) {
  t["NegativeLogLikelihoodLoss"] = NegativeLogLikelihoodLoss;
  t["SoftmaxCrossEntropyLoss"] = SoftmaxCrossEntropyLoss;
  t["MatMul"] = MatMul;
  t["Gemm"] = Gemm;
  t["Conv"] = Conv;
  t["ConvTranspose"] = ConvTranspose;
  t["HannWindow"] = SignalWindow<0>;
  t["HammingWindow"] = SignalWindow<1>;
  t["BlackmanWindow"] = SignalWindow<2>;
  t["MaxPool"] = Pool<true>;
  t["AveragePool"] = Pool<false>;
  t["GlobalMaxPool"] = GlobalPool<true>;
  t["GlobalAveragePool"] = GlobalPool<false>;
  t["BatchNormalization"] = BatchNormalization;
  t["InstanceNormalization"] = InstanceNormalization;
  t["MeanVarianceNormalization"] = MeanVarianceNormalization;
  t["LRN"] = LRN;
  t["LayerNormalization"] = LayerNormalization;
}

}  // namespace kiln::onnx
