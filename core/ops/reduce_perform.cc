// The reductions' kernels: one pass over the input in its C order, accumulating into the output.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "core/ops/elemwise_loops.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/scalar_apply.h"
#include "core/tensor/dtype_dispatch.h"

namespace kiln {
namespace {

// The reduced axes of a node whose op has `axis` (nullopt: all) over an ndim input.
std::vector<bool> ReducedMask(const std::optional<std::vector<int>>& axis, int ndim) {
  std::vector<bool> mask(ndim, !axis.has_value());
  if (axis) {
    for (int a : *axis) mask[a] = true;
  }
  return mask;
}

Shape KeptDims(const Shape& in_shape, const std::vector<bool>& reduced) {
  Shape kept;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    if (!reduced[d]) kept.push_back(in_shape[d]);
  }
  return kept;
}

// Strides that map an input index to its output element: 0 on reduced dims.
Shape OutputStrides(const Shape& in_shape, const std::vector<bool>& reduced) {
  const Shape kept_strides = ContiguousStrides(KeptDims(in_shape, reduced));
  Shape strides(in_shape.size(), 0);
  for (size_t d = 0, k = 0; d < in_shape.size(); ++d) {
    if (!reduced[d]) strides[d] = kept_strides[k++];
  }
  return strides;
}

template <typename Acc>
Acc Identity(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kProd:
    case ReduceKind::kAll:
      return Acc(1);
    default:
      return Acc(0);
  }
}

// t op v for one reduction kind.
template <ReduceKind R, typename Acc>
[[gnu::always_inline]] inline Acc Combine(Acc t, Acc v) {
  if constexpr (R == ReduceKind::kSum) {
    return scalar::Apply<ScalarOpKind::kAdd, Acc>(t, v);
  } else if constexpr (R == ReduceKind::kProd) {
    return scalar::Apply<ScalarOpKind::kMul, Acc>(t, v);
  } else if constexpr (R == ReduceKind::kMax && std::is_floating_point_v<Acc>) {
    return t > v || t != t ? t : v;  // scalar::Max (NaN wins, the first NaN), without branches
  } else if constexpr (R == ReduceKind::kMin && std::is_floating_point_v<Acc>) {
    return t < v || t != t ? t : v;
  } else if constexpr (R == ReduceKind::kMax) {
    return scalar::Max(t, v);
  } else if constexpr (R == ReduceKind::kMin) {
    return scalar::Min(t, v);
  } else if constexpr (R == ReduceKind::kAll) {
    return t && v;
  } else {
    return t || v;
  }
}

// The eight-lane sum of a contiguous block of 8 <= n <= 128 values, in NumPy's order: lane j
// sums x[j], x[j + 8], ..., then the lanes pairwise, then the tail. Cloned for AVX2, where the
// lanes are 32-byte registers (two of four doubles, one of eight floats).
typedef double FourDoubles __attribute__((vector_size(32)));
typedef float EightFloats __attribute__((vector_size(32)));
__attribute__((target_clones("avx2", "default"))) double SumBlock(const double* x, int64_t n) {
  FourDoubles lo, hi, v;
  std::memcpy(&lo, x, sizeof lo);
  std::memcpy(&hi, x + 4, sizeof hi);
  int64_t i = 8;
  for (; i + 8 <= n; i += 8) {
    std::memcpy(&v, x + i, sizeof v);
    lo += v;
    std::memcpy(&v, x + i + 4, sizeof v);
    hi += v;
  }
  double res = ((lo[0] + lo[1]) + (lo[2] + lo[3])) + ((hi[0] + hi[1]) + (hi[2] + hi[3]));
  for (; i < n; ++i) res += x[i];
  return res;
}
__attribute__((target_clones("avx2", "default"))) float SumBlock(const float* x, int64_t n) {
  EightFloats r, v;
  std::memcpy(&r, x, sizeof r);
  int64_t i = 8;
  for (; i + 8 <= n; i += 8) {
    std::memcpy(&v, x + i, sizeof v);
    r += v;
  }
  float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
  for (; i < n; ++i) res += x[i];
  return res;
}

// The stride of a contiguous run, known at compile time.
using UnitStride = std::integral_constant<int64_t, 1>;
constexpr UnitStride kUnitStride;

// NumPy's pairwise summation of n floats at stride s: blocks of up to 128 summed with eight
// accumulators, halves summed recursively. Error O(log n) ulps, not O(n). `Stride` is int64_t,
// or kUnitStride for contiguous runs, whose eight accumulators then sit in vector registers.
template <typename Acc, typename Stride>
Acc PairwiseSum(const Acc* x, int64_t n, Stride s) {
  if (n < 8) {
    Acc r = Acc(0);
    for (int64_t i = 0; i < n; ++i) r += x[i * s];
    return r;
  }
  if constexpr (std::is_same_v<Stride, UnitStride> &&
                (std::is_same_v<Acc, double> || std::is_same_v<Acc, float>)) {
    if (n <= 128) return SumBlock(x, n);  // the same eight sums, vectorized
  }
  if (n <= 128) {
    Acc r[8];
    for (int j = 0; j < 8; ++j) r[j] = x[j * s];
    int64_t i = 8;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += x[(i + j) * s];
    }
    Acc res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += x[i * s];
    return res;
  }
  int64_t half = n / 2;
  half -= half % 8;
  return PairwiseSum(x, half, s) + PairwiseSum(x + half * s, n - half, s);
}

// The run x[0..count) at stride s reduced to one value, starting from init: floats sum
// pairwise, order-free kinds (max, min, integer sums, all, any) over eight lanes, products
// in order as NumPy multiplies.
template <ReduceKind R, typename Acc>
Acc ReduceRun(Acc init, const Acc* x, int64_t s, int64_t count) {
  if constexpr (R == ReduceKind::kSum && std::is_floating_point_v<Acc>) {
    // In NumPy's buffer-sized chunks, so that a contiguous sum is NumPy's to the bit.
    constexpr int64_t kNumPyBuffer = 8192;
    for (int64_t k = 0; k < count; k += kNumPyBuffer) {
      const int64_t m = std::min(kNumPyBuffer, count - k);
      init += s == 1 ? PairwiseSum(x + k, m, kUnitStride) : PairwiseSum(x + k * s, m, s);
    }
    return init;
  } else if constexpr (R == ReduceKind::kProd || scalar::kComplex<Acc>) {
    for (int64_t k = 0; k < count; ++k) init = Combine<R>(init, x[k * s]);
    return init;
  } else {
    if (count < 16) {
      for (int64_t k = 0; k < count; ++k) init = Combine<R>(init, x[k * s]);
      return init;
    }
    Acc lane[8];
    for (int j = 0; j < 8; ++j) lane[j] = x[j * s];
    int64_t k = 8;
    for (; k + 8 <= count; k += 8) {
      for (int j = 0; j < 8; ++j) lane[j] = Combine<R>(lane[j], x[(k + j) * s]);
    }
    for (; k < count; ++k) init = Combine<R>(init, x[k * s]);
    for (int j = 0; j < 8; ++j) init = Combine<R>(init, lane[j]);
    return init;
  }
}

// acc[o] op= in[i] over the input in C order, for the input already converted to Acc.
template <ReduceKind R, typename Acc>
void Accumulate(const Tensor& in, const Shape& out_strides, Acc* acc) {
  const Acc* data = in.data<Acc>();
  const int64_t si = in.strides().empty() ? 0 : in.strides().back();
  const int64_t so = out_strides.empty() ? 0 : out_strides.back();
  loops::ForEachRun<2>(in.shape(), {&in.strides(), &out_strides}, 0, in.size(),
                       [&](int64_t, int64_t count, auto& off) {
                         const Acc* x = data + off[0];
                         Acc* a = acc + off[1];
                         if (so == 0) {  // the run folds into one output element
                           *a = ReduceRun<R>(*a, x, si, count);
                           return;
                         }
                         for (int64_t k = 0; k < count; ++k) {
                           a[k * so] = Combine<R>(a[k * so], x[k * si]);
                         }
                       });
}

// At most two runs of dims after dropping size-1 dims and merging neighbours that are reduced
// alike and lie end to end in memory (as NumPy's iterator coalesces them): the shapes of nearly
// every reduction, done without the general walk. Each: its length, stride, and whether reduced.
struct CollapsedDims {
  int n = 0;
  int64_t size[2];
  int64_t stride[2];
  bool reduced[2];
};

// in's dims collapsed, or false when more than two runs remain (or a dim is empty).
bool Collapse(const Tensor& in, const std::vector<bool>& reduced, CollapsedDims& c) {
  for (int d = 0; d < in.ndim(); ++d) {
    const int64_t size = in.shape()[d], stride = in.strides()[d];
    if (size == 1) continue;
    if (size == 0) return false;
    if (c.n > 0 && c.reduced[c.n - 1] == reduced[d] && c.stride[c.n - 1] == stride * size) {
      c.size[c.n - 1] *= size;
      c.stride[c.n - 1] = stride;
      continue;
    }
    if (c.n == 2) return false;
    c.size[c.n] = size;
    c.stride[c.n] = stride;
    c.reduced[c.n] = reduced[d];
    ++c.n;
  }
  return true;
}

// acc op= in over the collapsed dims: each reduced inner run folded with ReduceRun, kept inner
// runs combined element by element, outer runs in order.
template <ReduceKind R, typename Acc>
void AccumulateCollapsed(const Acc* x, const CollapsedDims& c, Acc* acc) {
  if (c.n == 0) {
    acc[0] = ReduceRun<R>(acc[0], x, 1, 1);
    return;
  }
  const int64_t n0 = c.size[0], s0 = c.stride[0];
  if (c.n == 1) {
    if (c.reduced[0]) {
      acc[0] = ReduceRun<R>(acc[0], x, s0, n0);
    } else {
      for (int64_t j = 0; j < n0; ++j) acc[j] = Combine<R>(acc[j], x[j * s0]);
    }
    return;
  }
  const int64_t n1 = c.size[1], s1 = c.stride[1];
  // Output strides of the outer and inner runs.
  const int64_t o0 = c.reduced[0] ? 0 : (c.reduced[1] ? 1 : n1);
  if (c.reduced[1]) {
    constexpr bool kFloatSum = R == ReduceKind::kSum && std::is_floating_point_v<Acc>;
    if (n1 < 8) {
      // Short rows (a softmax's few classes), folded inline as ReduceRun folds them: a float
      // sum adds the row's own sum (from zero, in order), the other kinds combine in order.
      // Rows of 2, 3 and 4 contiguous elements get loops of known length.
      auto rows = [&](auto length) {
        const int64_t len = length;
        for (int64_t i = 0; i < n0; ++i) {
          const Acc* xi = x + i * s0;
          Acc& a = acc[i * o0];
          if constexpr (kFloatSum) {
            Acc r = Acc(0);
#pragma GCC unroll 4
            for (int64_t j = 0; j < len; ++j) r += xi[j * s1];
            a += r;
          } else {
#pragma GCC unroll 4
            for (int64_t j = 0; j < len; ++j) a = Combine<R>(a, xi[j * s1]);
          }
        }
      };
      if (n1 == 2) return rows(std::integral_constant<int64_t, 2>());
      if (n1 == 3) return rows(std::integral_constant<int64_t, 3>());
      if (n1 == 4) return rows(std::integral_constant<int64_t, 4>());
      return rows(n1);
    }
    for (int64_t i = 0; i < n0; ++i) acc[i * o0] = ReduceRun<R>(acc[i * o0], x + i * s0, s1, n1);
    return;
  }
  if (o0 == 0 && n1 <= 4) {
    // A few columns reduced over many rows (the gradient of a broadcast (1, k)): the running
    // values in registers, not reloaded from acc on every row; the same additions in order.
    auto columns = [&](auto width) {
      constexpr int64_t w = decltype(width)::value;
      Acc a[w];
      for (int64_t j = 0; j < w; ++j) a[j] = acc[j];
      for (int64_t i = 0; i < n0; ++i) {
        const Acc* xi = x + i * s0;
#pragma GCC unroll 4
        for (int64_t j = 0; j < w; ++j) a[j] = Combine<R>(a[j], xi[j * s1]);
      }
      for (int64_t j = 0; j < w; ++j) acc[j] = a[j];
    };
    if (n1 == 1) return columns(std::integral_constant<int64_t, 1>());
    if (n1 == 2) return columns(std::integral_constant<int64_t, 2>());
    if (n1 == 3) return columns(std::integral_constant<int64_t, 3>());
    return columns(std::integral_constant<int64_t, 4>());
  }
  for (int64_t i = 0; i < n0; ++i) {
    const Acc* xi = x + i * s0;
    Acc* ai = acc + i * o0;
    if (s1 == 1) {
      for (int64_t j = 0; j < n1; ++j) ai[j] = Combine<R>(ai[j], xi[j]);
    } else {
      for (int64_t j = 0; j < n1; ++j) ai[j] = Combine<R>(ai[j], xi[j * s1]);
    }
  }
}

template <typename Acc>
void AccumulateCollapsed(ReduceKind kind, const Acc* x, const CollapsedDims& c, Acc* acc) {
  switch (kind) {
    case ReduceKind::kSum:
      return AccumulateCollapsed<ReduceKind::kSum>(x, c, acc);
    case ReduceKind::kProd:
      return AccumulateCollapsed<ReduceKind::kProd>(x, c, acc);
    case ReduceKind::kMax:
      return AccumulateCollapsed<ReduceKind::kMax>(x, c, acc);
    case ReduceKind::kMin:
      return AccumulateCollapsed<ReduceKind::kMin>(x, c, acc);
    case ReduceKind::kAll:
      return AccumulateCollapsed<ReduceKind::kAll>(x, c, acc);
    default:
      return AccumulateCollapsed<ReduceKind::kAny>(x, c, acc);
  }
}

// Accumulate for the kind known at run time; complex inputs only sum and multiply.
template <typename Acc>
void Accumulate(ReduceKind kind, const Tensor& in, const Shape& out_strides,
                Acc* acc) {
  switch (kind) {
    case ReduceKind::kSum:
      return Accumulate<ReduceKind::kSum>(in, out_strides, acc);
    case ReduceKind::kProd:
      return Accumulate<ReduceKind::kProd>(in, out_strides, acc);
    default:
      break;
  }
  if constexpr (!scalar::kComplex<Acc>) {
    switch (kind) {
      case ReduceKind::kMax:
        return Accumulate<ReduceKind::kMax>(in, out_strides, acc);
      case ReduceKind::kMin:
        return Accumulate<ReduceKind::kMin>(in, out_strides, acc);
      case ReduceKind::kAll:
        return Accumulate<ReduceKind::kAll>(in, out_strides, acc);
      default:
        return Accumulate<ReduceKind::kAny>(in, out_strides, acc);
    }
  }
}

}  // namespace

absl::Status CAReduce::Perform(const Apply& node, std::span<const Tensor> inputs,
                               std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  const std::vector<bool> reduced = ReducedMask(axis_, x.ndim());
  const Shape out_shape = KeptDims(x.shape(), reduced);
  const DType out_dtype = node.output_ptr(0)->tensor_type()->dtype();
  if (reduce_ == ReduceKind::kMax || reduce_ == ReduceKind::kMin) {
    for (int d = 0; d < x.ndim(); ++d) {
      if (reduced[d] && x.shape()[d] == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            Name(), ": zero-size array to reduction operation ",
            reduce_ == ReduceKind::kMax ? "maximum" : "minimum", " which has no identity"));
      }
    }
  }
  // Accumulate in acc_dtype (Sum, Prod), bool (All, Any) or the input dtype (Max, Min), with
  // float16 held in float32.
  DType acc_dtype = acc_dtype_.value_or(x.dtype());
  if (reduce_ == ReduceKind::kAll || reduce_ == ReduceKind::kAny) acc_dtype = DType::kBool;
  if (acc_dtype == DType::kFloat16) acc_dtype = DType::kFloat32;
  // An empty x of shape (2^46, 0) reduced on axis 1 asks for 2^46 accumulators: refused first.
  RETURN_IF_ERROR(CheckOutputShape(*this, out_shape, acc_dtype));
  const Tensor in = x.dtype() == acc_dtype ? x : x.AsType(acc_dtype);
  Tensor acc = Tensor::Empty(acc_dtype, out_shape);
  DispatchDType(acc_dtype, [&](auto tag) {
    using Acc = typename decltype(tag)::type;
    if constexpr (std::is_same_v<Acc, Eigen::half>) {
      return;  // never: float16 accumulates in float32
    } else if constexpr (scalar::kComplex<Acc>) {
      Acc* a = acc.data<Acc>();
      std::fill(a, a + acc.size(), Identity<Acc>(reduce_));
      Accumulate(reduce_, in, OutputStrides(x.shape(), reduced), a);
    } else {
      Acc* a = acc.data<Acc>();
      // Max and Min start from -inf / +inf (the lowest / largest value for integers).
      Acc init = Identity<Acc>(reduce_);
      if (reduce_ == ReduceKind::kMax) init = std::numeric_limits<Acc>::lowest();
      if (reduce_ == ReduceKind::kMin) init = std::numeric_limits<Acc>::max();
      if constexpr (std::numeric_limits<Acc>::has_infinity) {
        if (reduce_ == ReduceKind::kMax) init = -std::numeric_limits<Acc>::infinity();
        if (reduce_ == ReduceKind::kMin) init = std::numeric_limits<Acc>::infinity();
      }
      std::fill(a, a + acc.size(), init);  // (size() is not free: hoisted)
      CollapsedDims c;
      if (Collapse(in, reduced, c)) {
        AccumulateCollapsed(reduce_, in.data<Acc>(), c, a);
      } else {
        Accumulate(reduce_, in, OutputStrides(x.shape(), reduced), a);
      }
    }
  });
  outputs[0] = acc.dtype() == out_dtype ? std::move(acc) : acc.AsType(out_dtype);
  return absl::OkStatus();
}

namespace {

// The maximum over the axes (when with_max) and the index of its first occurrence.
absl::Status ArgmaxPerform(const Op& op, const std::vector<int>& axis, const Tensor& x,
                           bool with_max, std::vector<Tensor>& outputs) {
  std::vector<bool> reduced(x.ndim(), false);
  Shape reduced_shape;
  for (int a : axis) reduced[a] = true;
  for (int d = 0; d < x.ndim(); ++d) {
    if (!reduced[d]) continue;
    reduced_shape.push_back(x.shape()[d]);
    if (x.shape()[d] == 0) {
      return absl::InvalidArgumentError(op.Name() + ": attempt to get argmax of an empty sequence");
    }
  }
  // Strides that give an element's flat index among the reduced dims.
  Shape index_strides(x.ndim(), 0);
  const Shape rs = ContiguousStrides(reduced_shape);
  for (int d = 0, k = 0; d < x.ndim(); ++d) {
    if (reduced[d]) index_strides[d] = rs[k++];
  }
  const Shape out_shape = KeptDims(x.shape(), reduced);
  const Shape out_strides = OutputStrides(x.shape(), reduced);
  const DType compute = x.dtype() == DType::kFloat16 ? DType::kFloat32 : x.dtype();
  // As for CAReduce: the kept dims of an empty x may be huge (int64 is the widest output here).
  RETURN_IF_ERROR(CheckOutputShape(op, out_shape, DType::kInt64));
  const Tensor in = x.dtype() == compute ? x : x.AsType(compute);
  Tensor best = Tensor::Empty(compute, out_shape);
  Tensor index = Tensor::Zeros(DType::kInt64, out_shape);
  std::vector<bool> seen(ShapeSize(out_shape), false);
  DispatchDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!scalar::kComplex<T> && !std::is_same_v<T, Eigen::half>) {
      const T* data = in.data<T>();
      T* b = best.data<T>();
      int64_t* idx = index.data<int64_t>();
      loops::ForEachRun<3>(x.shape(), {&in.strides(), &out_strides, &index_strides}, 0, x.size(),
                           [&](int64_t, int64_t count, auto& off) {
                             const int ndim = x.ndim();
                             const int64_t si = ndim ? in.strides().back() : 0;
                             const int64_t so = ndim ? out_strides.back() : 0;
                             const int64_t sk = ndim ? index_strides.back() : 0;
                             for (int64_t k = 0; k < count; ++k) {
                               const int64_t o = off[1] + k * so;
                               const T v = data[off[0] + k * si];
                               // The first maximum wins; NaN is the maximum, as in numpy.argmax.
                               bool take = !seen[o];
                               if constexpr (scalar::kReal<T>) {
                                 take = take || (!std::isnan(b[o]) && (std::isnan(v) || v > b[o]));
                               } else {
                                 take = take || v > b[o];
                               }
                               if (take) {
                                 seen[o] = true;
                                 b[o] = v;
                                 idx[o] = off[2] + k * sk;
                               }
                             }
                           });
    }
  });
  int next = 0;
  if (with_max) {
    outputs[next++] = best.dtype() == x.dtype() ? std::move(best) : best.AsType(x.dtype());
  }
  outputs[next] = std::move(index);
  return absl::OkStatus();
}

}  // namespace

absl::Status MaxAndArgmax::Perform(const Apply&, std::span<const Tensor> inputs,
                                   std::vector<Tensor>& outputs) const {
  return ArgmaxPerform(*this, axis(), inputs[0], /*with_max=*/true, outputs);
}

absl::Status Argmax::Perform(const Apply&, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  return ArgmaxPerform(*this, axis(), inputs[0], /*with_max=*/false, outputs);
}

absl::Status CumOp::Perform(const Apply& node, std::span<const Tensor> inputs,
                            std::vector<Tensor>& outputs) const {
  const Tensor x =
      axis() ? inputs[0].Contiguous() : inputs[0].Contiguous().View({inputs[0].size()}, {1});
  const int along = axis().value_or(0);
  if (x.size() == 0) {
    outputs[0] = x.AsType(x.dtype());
    return absl::OkStatus();
  }
  const DType compute = x.dtype() == DType::kFloat16 ? DType::kFloat32 : x.dtype();
  Tensor out = x.AsType(compute);  // a contiguous copy, accumulated in place
  DispatchDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, Eigen::half>) {
      T* p = out.data<T>();
      const int64_t n = x.ndim() ? x.shape()[along] : 1;
      const int64_t stride = x.ndim() ? out.strides()[along] : 1;
      const int64_t outer = n == 0 ? 0 : x.size() / (n * stride);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 1; i < n; ++i) {
          T* row = p + o * n * stride + i * stride;
          for (int64_t s = 0; s < stride; ++s) {
            row[s] = product() ? scalar::Apply<ScalarOpKind::kMul, T>(row[s - stride], row[s])
                               : scalar::Apply<ScalarOpKind::kAdd, T>(row[s - stride], row[s]);
          }
        }
      }
    }
  });
  outputs[0] = out.dtype() == x.dtype() ? std::move(out) : out.AsType(x.dtype());
  return absl::OkStatus();
}

}  // namespace kiln
