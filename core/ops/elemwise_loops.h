// Loops that apply an elementwise function over broadcast, possibly strided operands, with the
// work split across cores. Included by the Elemwise kernels only.
#ifndef KILN_CORE_OPS_ELEMWISE_LOOPS_H_
#define KILN_CORE_OPS_ELEMWISE_LOOPS_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/tensor/parallel.h"
#include "core/tensor/tensor.h"

namespace kiln::loops {

// Elements per task below which splitting across cores costs more than it saves.
inline constexpr int64_t kParallelGrain = 1 << 15;

// One input seen through the output shape: element strides, 0 along broadcast dims.
template <typename T>
struct Operand {
  const T* data;
  Shape strides;
  bool contiguous;  // walks the output's flat index with stride 1
  bool scalar;      // one element broadcast everywhere
};

template <typename T>
Operand<T> MakeOperand(const Tensor& t, const Shape& shape) {
  Operand<T> op{t.data<T>(), Shape(shape.size(), 0), true, true};
  const Shape contiguous = ContiguousStrides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;  // any stride is fine along a dim of size 1
    if (t.shape()[d] == shape[d]) op.strides[d] = t.strides()[d];
    op.scalar &= op.strides[d] == 0;
    op.contiguous &= op.strides[d] == contiguous[d];
  }
  return op;
}

// Calls body(flat_begin, count, offsets) for runs of the innermost dim covering the flat range
// [begin, end) of `shape`; offsets[k] is operand k's element offset at flat_begin.
template <size_t N, typename Body>
void ForEachRun(const Shape& shape, const std::array<const Shape*, N>& strides, int64_t begin,
                int64_t end, Body&& body) {
  const int ndim = static_cast<int>(shape.size());
  if (begin >= end) return;  // also keeps zero-size dims out of the index arithmetic
  if (ndim == 0) {
    std::array<int64_t, N> zero{};
    body(begin, 1, zero);
    return;
  }
  Shape index(ndim);
  int64_t rest = begin;
  for (int d = ndim - 1; d >= 0; --d) {
    index[d] = rest % shape[d];
    rest /= shape[d];
  }
  std::array<int64_t, N> off{};
  for (size_t k = 0; k < N; ++k) {
    for (int d = 0; d < ndim; ++d) off[k] += index[d] * (*strides[k])[d];
  }
  const int64_t inner = shape[ndim - 1];
  for (int64_t flat = begin; flat < end;) {
    const int64_t count = std::min(inner - index[ndim - 1], end - flat);
    body(flat, count, off);
    flat += count;
    for (size_t k = 0; k < N; ++k) off[k] += count * (*strides[k])[ndim - 1];
    index[ndim - 1] += count;
    for (int d = ndim - 1; d > 0 && index[d] == shape[d]; --d) {
      for (size_t k = 0; k < N; ++k) {
        off[k] += (*strides[k])[d - 1] - shape[d] * (*strides[k])[d];
      }
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

// out[i] = f(a[i]) over `shape` (out contiguous), walking a's strides.
template <typename R, typename A, typename F>
void Map1(const Shape& shape, R* out, const Operand<A>& a, F f) {
  ParallelFor(ShapeSize(shape), kParallelGrain, [&](int64_t begin, int64_t end) {
    ForEachRun<1>(shape, {&a.strides}, begin, end, [&](int64_t flat, int64_t count, auto& off) {
      const int64_t s = a.strides.empty() ? 0 : a.strides.back();
      const A* pa = a.data + off[0];
      for (int64_t i = 0; i < count; ++i) out[flat + i] = f(pa[i * s]);
    });
  });
}

// out[i] = f(a[i], b[i]) over `shape` (out contiguous), walking both operands' strides.
template <typename R, typename A, typename F>
void Map2(const Shape& shape, R* out, const Operand<A>& a, const Operand<A>& b, F f) {
  ParallelFor(ShapeSize(shape), kParallelGrain, [&](int64_t begin, int64_t end) {
    ForEachRun<2>(shape, {&a.strides, &b.strides}, begin, end,
                  [&](int64_t flat, int64_t count, auto& off) {
                    const int64_t sa = a.strides.empty() ? 0 : a.strides.back();
                    const int64_t sb = b.strides.empty() ? 0 : b.strides.back();
                    const A* ra = a.data + off[0];
                    const A* rb = b.data + off[1];
                    for (int64_t i = 0; i < count; ++i) out[flat + i] = f(ra[i * sa], rb[i * sb]);
                  });
  });
}

// out[i] = f(a[i], b[i], c[i]) over `shape` (the general strided loop).
template <typename R, typename A, typename B, typename F>
void Map3(const Shape& shape, R* out, const Operand<B>& a, const Operand<A>& b, const Operand<A>& c,
          F f) {
  const int64_t n = ShapeSize(shape);
  ParallelFor(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    ForEachRun<3>(shape, {&a.strides, &b.strides, &c.strides}, begin, end,
                  [&](int64_t flat, int64_t count, auto& off) {
                    const int64_t sa = a.strides.empty() ? 0 : a.strides.back();
                    const int64_t sb = b.strides.empty() ? 0 : b.strides.back();
                    const int64_t sc = c.strides.empty() ? 0 : c.strides.back();
                    for (int64_t i = 0; i < count; ++i) {
                      out[flat + i] = f(a.data[off[0] + i * sa], b.data[off[1] + i * sb],
                                        c.data[off[2] + i * sc]);
                    }
                  });
  });
}

}  // namespace kiln::loops

#endif  // KILN_CORE_OPS_ELEMWISE_LOOPS_H_
