#include "core/ops/pool_kernels.h"

#include <algorithm>
#include <array>
#include <type_traits>

#include "core/tensor/call_limits.h"
#include "core/tensor/parallel.h"
#include "core/tensor/status_macros.h"

namespace kiln::pooling {

int64_t OutLength(int64_t padded, int64_t w, int64_t s, bool ignore_border) {
  auto floor_div = [](int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
  };
  if (ignore_border) return padded < w ? 0 : (padded - w) / s + 1;
  if (s >= w) return floor_div(padded - 1, s) + 1;
  // padded - 1 - w + s cannot wrap: padded >= 0, w <= INT64_MAX and 0 < s < w.
  return std::max<int64_t>(0, floor_div(padded - 1 - w + s, s)) + 1;
}

bool HasEmptyWindow(const Dim& d) { return d.n == 0 && d.out > 0; }

namespace {

// The windows of one dim: for output j, [lo[j], hi[j]) in x's coordinates (the padding cut off),
// and its length on the padded x (average_inc_pad's count). Outputs [full_begin, full_end) have
// whole windows inside x: lo = j s - pad, hi = lo + w.
struct Windows {
  std::vector<int64_t> lo, hi;
  std::vector<double> padded;
  int64_t full_begin = 0, full_end = 0;
  int64_t n = 0, w = 0, s = 0, pad = 0, out = 0;
};

Windows MakeWindows(const Dim& d) {
  Windows r;
  r.n = d.n, r.w = d.w, r.s = d.s, r.pad = d.pad, r.out = d.out;
  r.lo.resize(d.out), r.hi.resize(d.out), r.padded.resize(d.out);
  const int64_t length = d.n + 2 * d.pad;  // checked by the caller
  bool seen_full = false;
  for (int64_t j = 0; j < d.out; ++j) {
    // j s < length for every window (Aesara's out_shape), so nothing here wraps.
    const int64_t start = j * d.s;
    const int64_t len = start >= length ? 0 : std::min(d.w, length - start);
    const int64_t lo = std::max(start, d.pad) - d.pad;
    const int64_t hi = std::max(lo, std::min(start + len, d.pad + d.n) - d.pad);
    r.lo[j] = lo, r.hi[j] = hi, r.padded[j] = static_cast<double>(len);
    const bool full = start >= d.pad && start <= d.pad + d.n && d.w <= d.pad + d.n - start;
    if (full && !seen_full) r.full_begin = j, seen_full = true;
    if (full) r.full_end = j + 1;
  }
  return r;
}

// Everything the loops read: the windows of each dim and the strides of the images.
struct Geometry {
  std::vector<Windows> dims;
  std::vector<int64_t> row_stride;  // x's stride of each pooled dim
  int64_t image = 1, out_image = 1, outer_out = 1, n_last = 0, out_last = 0;
  double unit_cost = 1;  // the work of one output row, in element operations
};

Geometry MakeGeometry(const std::vector<Dim>& dims) {
  Geometry g;
  const size_t k = dims.size();
  g.row_stride.resize(k);
  double rows = 1;
  for (size_t i = k; i-- > 0;) {
    g.dims.push_back(MakeWindows(dims[i]));
    g.row_stride[i] = g.image;
    g.image *= dims[i].n;
    g.out_image *= dims[i].out;
    if (i + 1 < k) {
      g.outer_out *= dims[i].out;
      rows *= static_cast<double>(std::max<int64_t>(1, std::min(dims[i].w, dims[i].n)));
    }
  }
  std::reverse(g.dims.begin(), g.dims.end());
  g.n_last = dims.back().n, g.out_last = dims.back().out;
  g.unit_cost = rows * static_cast<double>(g.n_last) +
                static_cast<double>(g.out_last) *
                    static_cast<double>(std::max<int64_t>(1, std::min(dims.back().w, g.n_last))) +
                1;
  return g;
}

// The input rows of the window of outer output o (its multi-index over every pooled dim but
// the last): fn(offset of the row in the image) for each; returns their number. `count` (the
// divisor of the averages, without the last dim's) is set from the windows' lengths.
template <typename Fn>
int64_t ForEachRow(const Geometry& g, int64_t o, bool inc_pad, double* count, Fn fn) {
  const int k = static_cast<int>(g.dims.size()) - 1;
  std::array<int64_t, 64> lo, hi, idx;
  int64_t rows = 1;
  double c = 1;
  for (int i = k; i-- > 0;) {
    const Windows& d = g.dims[i];
    const int64_t j = o % d.out;
    o /= d.out;
    lo[i] = d.lo[j], hi[i] = d.hi[j], idx[i] = lo[i];
    rows *= hi[i] - lo[i];
    c *= inc_pad ? d.padded[j] : static_cast<double>(hi[i] - lo[i]);
  }
  if (count != nullptr) *count = c;
  if (rows == 0) return 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (int i = 0; i < k; ++i) offset += idx[i] * g.row_stride[i];
    fn(offset);
    for (int i = k; i-- > 0;) {  // the next row
      if (++idx[i] < hi[i]) break;
      idx[i] = lo[i];
    }
  }
  return rows;
}

// a + b, wrapping for integers as NumPy's do (no undefined overflow).
template <typename T>
inline T Add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}

// The larger of a and b, NaN when either is (numpy.max's propagation), as compare-and-select.
template <typename T>
inline T Max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return (b > a || b != b) ? b : a;
  } else {
    return b > a ? b : a;
  }
}

template <typename T, bool kMax>
inline T Combine(T a, T b) {
  if constexpr (kMax) {
    return Max(a, b);
  } else {
    return Add(a, b);
  }
}

// Calls f(std::integral_constant<int64_t, S>) for the strides the loops specialize (the
// compiler vectorizes their strided accesses), or S = 0 (read s at run time) otherwise.
template <typename F>
void WithStride(int64_t s, F f) {
  switch (s) {
    case 1:
      return f(std::integral_constant<int64_t, 1>{});
    case 2:
      return f(std::integral_constant<int64_t, 2>{});
    case 3:
      return f(std::integral_constant<int64_t, 3>{});
    case 4:
      return f(std::integral_constant<int64_t, 4>{});
    default:
      return f(std::integral_constant<int64_t, 0>{});
  }
}

// dst[j] (= or, when `accumulate`, combined with) the reduction of src[j s + t], t < w, for the
// `count` whole windows starting at src.
template <typename T, bool kMax, int64_t S>
void ReduceWhole(const T* __restrict src, T* __restrict dst, int64_t count, int64_t w,
                 int64_t s_run, bool accumulate) {
  const int64_t s = S != 0 ? S : s_run;
  if (!accumulate) {
    for (int64_t j = 0; j < count; ++j) dst[j] = src[j * s];
  } else {
    for (int64_t j = 0; j < count; ++j) dst[j] = Combine<T, kMax>(dst[j], src[j * s]);
  }
  for (int64_t t = 1; t < w; ++t) {
    for (int64_t j = 0; j < count; ++j) dst[j] = Combine<T, kMax>(dst[j], src[j * s + t]);
  }
}

// The last dim's reduction of one combined row src into the output row dst.
template <typename T, bool kMax>
void ReduceLast(const Windows& d, const T* src, T* dst) {
  const int64_t count = d.full_end - d.full_begin;
  if (count > 0) {
    WithStride(d.s, [&](auto S) {
      ReduceWhole<T, kMax, decltype(S)::value>(src + d.lo[d.full_begin], dst + d.full_begin, count,
                                               d.w, d.s, false);
    });
  }
  for (int64_t j = 0; j < d.out; ++j) {
    if (j == d.full_begin && count > 0) j = d.full_end;
    if (j >= d.out) break;
    T acc = d.lo[j] < d.hi[j] ? src[d.lo[j]] : T(0);  // an empty window: the sum's 0
    for (int64_t i = d.lo[j] + 1; i < d.hi[j]; ++i) acc = Combine<T, kMax>(acc, src[i]);
    dst[j] = acc;
  }
}

// value / count as the averages compute it (an integer result truncated, as NumPy's astype).
template <typename T>
inline T Divide(T value, double count) {
  if constexpr (std::is_integral_v<T>) {
    return count == 0 ? T(0) : static_cast<T>(static_cast<double>(value) / count);
  } else {
    return value / static_cast<T>(count);
  }
}

// Runs fn(begin, end) over [0, units), in rounds of bounded work split across the threads, and
// polls the call's interrupt between rounds.
template <typename Fn>
absl::Status RunUnits(int64_t units, double unit_cost, Fn fn) {
  constexpr double kRoundWork = 1 << 24, kGrainWork = 1 << 15;
  const int64_t per_round = static_cast<int64_t>(std::clamp(kRoundWork / unit_cost, 1.0, 1e15));
  const int64_t grain = static_cast<int64_t>(std::clamp(kGrainWork / unit_cost, 1.0, 1e15));
  for (int64_t first = 0; first < units; first += per_round) {
    ParallelFor(std::min(per_round, units - first), grain,
                [&](int64_t begin, int64_t end) { fn(first + begin, first + end); });
    RETURN_IF_ERROR(PollInterrupt());
  }
  return absl::OkStatus();
}

template <typename T, bool kMax>
absl::Status ForwardOf(Mode mode, int64_t batch, const Geometry& g, const T* x, T* out) {
  const Windows& last = g.dims.back();
  const bool average = mode == Mode::kAverageIncPad || mode == Mode::kAverageExcPad;
  const bool inc_pad = mode == Mode::kAverageIncPad;
  return RunUnits(batch * g.outer_out, g.unit_cost, [&](int64_t begin, int64_t end) {
    std::vector<T> tmp(g.n_last);
    for (int64_t u = begin; u < end; ++u) {
      const int64_t b = u / g.outer_out, o = u % g.outer_out;
      const T* img = x + b * g.image;
      T* dst = out + b * g.out_image + o * g.out_last;
      const T* src = nullptr;
      double count = 1;
      int64_t seen = 0;
      ForEachRow(g, o, inc_pad, &count, [&](int64_t offset) {
        const T* row = img + offset;
        if (seen == 0) {
          src = row;
        } else {
          if (seen == 1) std::copy(src, src + g.n_last, tmp.data());
          T* __restrict acc = tmp.data();
          for (int64_t i = 0; i < g.n_last; ++i) acc[i] = Combine<T, kMax>(acc[i], row[i]);
          src = acc;
        }
        ++seen;
      });
      if (seen == 0) {  // no row (an empty dim of x): the sums' zeros
        std::fill(tmp.begin(), tmp.end(), T(0));
        src = tmp.data();
      }
      ReduceLast<T, kMax>(last, src, dst);
      if (average) {
        for (int64_t j = 0; j < g.out_last; ++j) {
          const double n = inc_pad ? last.padded[j] : static_cast<double>(last.hi[j] - last.lo[j]);
          dst[j] = Divide(dst[j], count * n);
        }
      }
    }
  });
}

// Over the whole windows of a row: gx[j s + t] += gz[j] where x[j s + t] == m[j].
template <typename T, int64_t S>
void MaxScatterWhole(const T* __restrict x, T* __restrict gx, const T* __restrict m,
                     const T* __restrict gz, int64_t count, int64_t w, int64_t s_run) {
  const int64_t s = S != 0 ? S : s_run;
  for (int64_t t = 0; t < w; ++t) {
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = j * s + t;
      gx[i] = Add(gx[i], x[i] == m[j] ? gz[j] : T(0));
    }
  }
}

// Over the whole windows of a row: ggz[j] += ggx[j s + t] where x[j s + t] == m[j].
template <typename T, int64_t S>
void MaxGatherWhole(const T* __restrict x, const T* __restrict ggx, const T* __restrict m,
                    T* __restrict ggz, int64_t count, int64_t w, int64_t s_run) {
  const int64_t s = S != 0 ? S : s_run;
  for (int64_t t = 0; t < w; ++t) {
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = j * s + t;
      ggz[j] = Add(ggz[j], x[i] == m[j] ? ggx[i] : T(0));
    }
  }
}

// Over the whole windows of a row: e[j s + t] += v[j].
template <typename T, int64_t S>
void SpreadWhole(const T* __restrict v, T* __restrict e, int64_t count, int64_t w, int64_t s_run) {
  const int64_t s = S != 0 ? S : s_run;
  for (int64_t t = 0; t < w; ++t) {
    for (int64_t j = 0; j < count; ++j) e[j * s + t] = Add(e[j * s + t], v[j]);
  }
}

template <typename T>
absl::Status MaxGradOf(int64_t batch, const Geometry& g, const T* x, const T* maxout, const T* gz,
                       T* gx) {
  const Windows& d = g.dims.back();
  const int64_t whole = d.full_end - d.full_begin;
  // Windows of neighbouring outputs may overlap: one image per thread.
  return RunUnits(
      batch, g.unit_cost * static_cast<double>(g.outer_out), [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          std::fill(gx + b * g.image, gx + (b + 1) * g.image, T(0));  // cache-hot when scattered to
          for (int64_t o = 0; o < g.outer_out; ++o) {
            const T* m = maxout + b * g.out_image + o * g.out_last;
            const T* gzr = gz + b * g.out_image + o * g.out_last;
            ForEachRow(g, o, false, nullptr, [&](int64_t offset) {
              const T* xr = x + b * g.image + offset;
              T* gr = gx + b * g.image + offset;
              if (whole > 0) {
                const int64_t base = d.lo[d.full_begin];
                WithStride(d.s, [&](auto S) {
                  MaxScatterWhole<T, decltype(S)::value>(xr + base, gr + base, m + d.full_begin,
                                                         gzr + d.full_begin, whole, d.w, d.s);
                });
              }
              for (int64_t j = 0; j < d.out; ++j) {
                if (j == d.full_begin && whole > 0) j = d.full_end;
                if (j >= d.out) break;
                for (int64_t i = d.lo[j]; i < d.hi[j]; ++i) {
                  if (xr[i] == m[j]) gr[i] = Add(gr[i], gzr[j]);
                }
              }
            });
          }
        }
      });
}

template <typename T>
absl::Status AverageGradOf(Mode mode, int64_t batch, const Geometry& g, const T* gz, T* gx) {
  const Windows& d = g.dims.back();
  const int64_t whole = d.full_end - d.full_begin;
  const bool inc_pad = mode == Mode::kAverageIncPad, sum = mode == Mode::kSum;
  return RunUnits(
      batch, g.unit_cost * static_cast<double>(g.outer_out), [&](int64_t begin, int64_t end) {
        std::vector<T> v(g.out_last), e(g.n_last);
        for (int64_t b = begin; b < end; ++b) {
          std::fill(gx + b * g.image, gx + (b + 1) * g.image, T(0));
          for (int64_t o = 0; o < g.outer_out; ++o) {
            const T* gzr = gz + b * g.out_image + o * g.out_last;
            double count = 1;
            // The count of the outer dims' windows (ForEachRow computes it; no row is visited).
            ForEachRow(g, o, inc_pad, &count, [](int64_t) {});
            for (int64_t j = 0; j < d.out; ++j) {
              const double n = inc_pad ? d.padded[j] : static_cast<double>(d.hi[j] - d.lo[j]);
              v[j] = sum ? gzr[j] : Divide(gzr[j], count * n);
            }
            // The row each input row of the window receives, then added to each of them.
            std::fill(e.begin(), e.end(), T(0));
            if (whole > 0) {
              WithStride(d.s, [&](auto S) {
                SpreadWhole<T, decltype(S)::value>(v.data() + d.full_begin,
                                                   e.data() + d.lo[d.full_begin], whole, d.w, d.s);
              });
            }
            for (int64_t j = 0; j < d.out; ++j) {
              if (j == d.full_begin && whole > 0) j = d.full_end;
              if (j >= d.out) break;
              for (int64_t i = d.lo[j]; i < d.hi[j]; ++i) e[i] = Add(e[i], v[j]);
            }
            ForEachRow(g, o, false, nullptr, [&](int64_t offset) {
              T* __restrict gr = gx + b * g.image + offset;
              const T* __restrict er = e.data();
              for (int64_t i = 0; i < g.n_last; ++i) gr[i] = Add(gr[i], er[i]);
            });
          }
        }
      });
}

template <typename T>
absl::Status MaxGradGradOf(int64_t batch, const Geometry& g, const T* x, const T* maxout,
                           const T* ggx, T* ggz) {
  const Windows& d = g.dims.back();
  const int64_t whole = d.full_end - d.full_begin;
  return RunUnits(batch * g.outer_out, g.unit_cost, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t b = u / g.outer_out, o = u % g.outer_out;
      const T* m = maxout + b * g.out_image + o * g.out_last;
      T* dst = ggz + b * g.out_image + o * g.out_last;
      std::fill(dst, dst + g.out_last, T(0));
      ForEachRow(g, o, false, nullptr, [&](int64_t offset) {
        const T* xr = x + b * g.image + offset;
        const T* gr = ggx + b * g.image + offset;
        if (whole > 0) {
          const int64_t base = d.lo[d.full_begin];
          WithStride(d.s, [&](auto S) {
            MaxGatherWhole<T, decltype(S)::value>(xr + base, gr + base, m + d.full_begin,
                                                  dst + d.full_begin, whole, d.w, d.s);
          });
        }
        for (int64_t j = 0; j < d.out; ++j) {
          if (j == d.full_begin && whole > 0) j = d.full_end;
          if (j >= d.out) break;
          for (int64_t i = d.lo[j]; i < d.hi[j]; ++i) {
            if (xr[i] == m[j]) dst[j] = Add(dst[j], gr[i]);
          }
        }
      });
    }
  });
}

// True for a NaN (never for integers).
template <typename T>
inline bool IsNaN(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  return false;
}

template <typename T>
absl::Status WindowArgmaxOf(int64_t batch, const Geometry& g, const T* x, int64_t* argmax) {
  const Windows& d = g.dims.back();
  return RunUnits(
      batch, g.unit_cost * static_cast<double>(g.outer_out), [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          const T* image = x + b * g.image;
          for (int64_t o = 0; o < g.outer_out; ++o) {
            int64_t* out = argmax + b * g.out_image + o * g.out_last;
            for (int64_t j = 0; j < d.out; ++j) {
              int64_t best_at = -1;
              T best{};
              ForEachRow(g, o, false, nullptr, [&](int64_t offset) {
                for (int64_t i = d.lo[j]; i < d.hi[j]; ++i) {
                  const T v = image[offset + i];
                  if (best_at < 0 || (!IsNaN(best) && (IsNaN(v) || v > best))) {
                    best = v, best_at = offset + i;
                  }
                }
              });
              out[j] = best_at;
            }
          }
        }
      });
}

// Calls f(T{}) for the element type of the kernels' dtypes.
template <typename F>
absl::Status WithType(DType dtype, F f) {
  switch (dtype) {
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat64:
      return f(double{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kUInt64:
      return f(uint64_t{});
    default:
      return absl::InternalError("pool kernels: unsupported dtype");
  }
}

}  // namespace

absl::Status Forward(Mode mode, int64_t batch, const std::vector<Dim>& dims, const Tensor& x,
                     Tensor& out) {
  const Geometry g = MakeGeometry(dims);
  return WithType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (mode == Mode::kMax) return ForwardOf<T, true>(mode, batch, g, x.data<T>(), out.data<T>());
    return ForwardOf<T, false>(mode, batch, g, x.data<T>(), out.data<T>());
  });
}

absl::Status MaxGrad(int64_t batch, const std::vector<Dim>& dims, const Tensor& x,
                     const Tensor& maxout, const Tensor& gz, Tensor& gx) {
  const Geometry g = MakeGeometry(dims);
  return WithType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return MaxGradOf<T>(batch, g, x.data<T>(), maxout.data<T>(), gz.data<T>(), gx.data<T>());
  });
}

absl::Status AverageGrad(Mode mode, int64_t batch, const std::vector<Dim>& dims, const Tensor& gz,
                         Tensor& gx) {
  const Geometry g = MakeGeometry(dims);
  return WithType(gx.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return AverageGradOf<T>(mode, batch, g, gz.data<T>(), gx.data<T>());
  });
}

absl::Status MaxGradGrad(int64_t batch, const std::vector<Dim>& dims, const Tensor& x,
                         const Tensor& maxout, const Tensor& ggx, Tensor& ggz) {
  const Geometry g = MakeGeometry(dims);
  return WithType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return MaxGradGradOf<T>(batch, g, x.data<T>(), maxout.data<T>(), ggx.data<T>(), ggz.data<T>());
  });
}

absl::Status WindowArgmax(int64_t batch, const std::vector<Dim>& dims, const Tensor& x,
                          Tensor& argmax) {
  const Geometry g = MakeGeometry(dims);
  return WithType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return WindowArgmaxOf<T>(batch, g, x.data<T>(), argmax.data<int64_t>());
  });
}

}  // namespace kiln::pooling
