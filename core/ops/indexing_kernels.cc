// Gather (TakeRows) and scatter (ScatterRows) along axis 0. The indices are read in place when
// int64 or int32 (any stride), converted once otherwise, and checked in one vectorized pass
// before any data moves. Copies move elements as unsigned integers of their size,
// so one loop serves every dtype of that size; increments dispatch on the dtype. A repeated index
// in a run (sorted indices, as a model's group ids) accumulates in a register and is stored once,
// in the same order as NumPy's add.at, so float results are bitwise NumPy's. A gather from a
// source past L2 prefetches its elements a few dozen indices ahead.
#include "core/ops/indexing_kernels.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ops/add_as_numpy.h"
#include "core/ops/op_util.h"
#include "core/tensor/dtype_dispatch.h"
#include "core/tensor/parallel.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

// An index vector ready for the loops: int64 or int32 values at an element stride.
struct Indices {
  const void* data = nullptr;
  int64_t stride = 1;
  int64_t size = 0;
  bool is32 = false;
  Tensor converted;  // other integer dtypes, converted to int64 once
};

absl::Status OutOfBounds(const Op& op, const std::string& value, int64_t len) {
  return Invalid(op, absl::StrCat("index ", value, " is out of bounds for axis 0 with size ", len));
}

// The or of v + len and len - 1 - v (in uint64) over p[0, n): its sign bit is clear exactly
// when every v lies in [-len, len) (a value far out of range wraps past 2^63 and still sets it).
// One add, one subtract and one or per index, a loop the compiler vectorizes; cloned for AVX2
// (four indices a step, chosen when the process starts on a CPU that has it).
template <typename I>
uint64_t RangeBits(const I* p, int64_t n, uint64_t ulen) {
  uint64_t acc = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(p[i]));
    acc |= (v + ulen) | (ulen - 1 - v);
  }
  return acc;
}
__attribute__((target_clones("avx2", "default"))) uint64_t RangeBits64(const int64_t* p, int64_t n,
                                                                       uint64_t ulen) {
  return RangeBits(p, n, ulen);
}
__attribute__((target_clones("avx2", "default"))) uint64_t RangeBits32(const int32_t* p, int64_t n,
                                                                       uint64_t ulen) {
  return RangeBits(p, n, ulen);
}

// OK when every p[i * stride] lies in [-len, len); else the error for the first that does not.
template <typename I>
absl::Status CheckRange(const Op& op, const I* p, int64_t stride, int64_t n, int64_t len) {
  const uint64_t ulen = static_cast<uint64_t>(len);
  uint64_t acc = 0;
  if (stride != 1) {
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(p[i * stride]));
      acc |= (v + ulen) | (ulen - 1 - v);
    }
  } else if constexpr (std::is_same_v<I, int64_t>) {
    acc = RangeBits64(p, n, ulen);
  } else {
    acc = RangeBits32(p, n, ulen);
  }
  if ((acc >> 63) == 0) return absl::OkStatus();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = p[i * stride];
    if (v < -len || v >= len) return OutOfBounds(op, absl::StrCat(v), len);
  }
  return absl::OkStatus();
}

// idx (an integer vector) as Indices, checked against an axis of size len.
absl::StatusOr<Indices> PrepareIndices(const Op& op, const Tensor& idx, int64_t len) {
  if (idx.ndim() != 1 || !IsInteger(idx.dtype())) {
    return Invalid(
        op, absl::StrCat("the indices must be an integer vector, not ", DTypeName(idx.dtype()),
                         " of shape ", ShapeToString(idx.shape())));
  }
  Indices out;
  out.size = idx.shape()[0];
  if (idx.dtype() == DType::kInt64 || idx.dtype() == DType::kInt32) {
    out.data = idx.raw_data();
    out.stride = idx.strides()[0];
    out.is32 = idx.dtype() == DType::kInt32;
  } else {
    if (idx.dtype() == DType::kUInt64) {  // values past INT64_MAX would wrap when converted
      const uint64_t* p = idx.data<uint64_t>();
      for (int64_t i = 0; i < out.size; ++i) {
        const uint64_t v = p[i * idx.strides()[0]];
        if (v >= static_cast<uint64_t>(len)) return OutOfBounds(op, absl::StrCat(v), len);
      }
    }
    out.converted = idx.AsType(DType::kInt64);
    out.data = out.converted.raw_data();
  }
  if (out.is32) {
    RETURN_IF_ERROR(
        CheckRange(op, static_cast<const int32_t*>(out.data), out.stride, out.size, len));
  } else {
    RETURN_IF_ERROR(
        CheckRange(op, static_cast<const int64_t*>(out.data), out.stride, out.size, len));
  }
  return out;
}

// Calls f(p) with p the indices as a pointer to their type, int32_t or int64_t.
template <typename F>
void WithIndexType(const Indices& ix, F&& f) {
  if (ix.is32) {
    f(static_cast<const int32_t*>(ix.data));
  } else {
    f(static_cast<const int64_t*>(ix.data));
  }
}

// How far ahead the gather over a large source prefetches, in indices.
constexpr int64_t kAhead = 32;

// A checked index in [-len, len) made non-negative.
inline int64_t Wrap(int64_t r, int64_t len) { return r + (r < 0 ? len : 0); }

// The trailing dims of a row with their strides in the source, dims of size 1 dropped and dims
// contiguous with each other merged, outermost first. The destination row is C-contiguous.
struct RowLayout {
  Shape shape, strides;
  int64_t size = 1;
  bool contiguous() const { return shape.empty() || (shape.size() == 1 && strides[0] == 1); }
  bool broadcast() const { return shape.size() == 1 && strides[0] == 0; }
};

RowLayout MakeRowLayout(const Shape& shape, const Shape& strides) {
  RowLayout l;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 1; --d) {
    l.size *= shape[d];
    if (shape[d] == 1) continue;
    if (!l.shape.empty() && strides[d] == l.strides.front() * l.shape.front()) {
      l.shape.front() *= shape[d];
    } else {
      l.shape.insert(l.shape.begin(), shape[d]);
      l.strides.insert(l.strides.begin(), strides[d]);
    }
  }
  return l;
}

// Calls f(k, offset) for the k-th element of a row (C order) and its source offset from `base`;
// `at` is scratch space, so that no row allocates.
template <typename F>
void WalkRow(const RowLayout& l, int64_t base, std::vector<int64_t>& at, F&& f) {
  const int nd = static_cast<int>(l.shape.size());
  if (nd == 0) {
    f(int64_t{0}, base);
    return;
  }
  const int64_t n = l.shape.back(), s = l.strides.back();
  at.assign(nd - 1, 0);
  int64_t k = 0;
  while (true) {
    int64_t off = base;
    for (int d = 0; d < nd - 1; ++d) off += at[d] * l.strides[d];
    for (int64_t j = 0; j < n; ++j) f(k++, off + j * s);
    int d = nd - 2;
    while (d >= 0 && ++at[d] == l.shape[d]) at[d--] = 0;
    if (d < 0) return;
  }
}

// Sixteen bytes moved as one element (complex128).
struct Bytes16 {
  uint64_t lo, hi;
};

// Calls f(TypeTag<W>) with W an unsigned integer (or Bytes16) of an element's size, for copies.
template <typename F>
void WithWord(int64_t size, F&& f) {
  switch (size) {
    case 1:
      return f(TypeTag<uint8_t>{});
    case 2:
      return f(TypeTag<uint16_t>{});
    case 4:
      return f(TypeTag<uint32_t>{});
    case 8:
      return f(TypeTag<uint64_t>{});
    default:
      return f(TypeTag<Bytes16>{});
  }
}

// out[i] = x[idx[i]] over [begin, end) of the indices, rows of one element.
template <typename E, typename I>
void GatherElements(E* o, const E* x, int64_t xs, const I* p, int64_t ps, int64_t len,
                    int64_t begin, int64_t end) {
  if (xs == 1 && ps == 1) {
    // A source past L2 makes the reads cache misses: prefetched kAhead indices ahead.
    int64_t i = begin;
    const bool far = len * static_cast<int64_t>(sizeof(E)) > (int64_t{1} << 18);
    for (; far && i + kAhead < end; ++i) {
      __builtin_prefetch(x + Wrap(p[i + kAhead], len));
      o[i] = x[Wrap(p[i], len)];
    }
    for (; i < end; ++i) o[i] = x[Wrap(p[i], len)];
  } else {
    for (int64_t i = begin; i < end; ++i) o[i] = x[Wrap(p[i * ps], len) * xs];
  }
}

// numpy.add.at on one-element rows: out[idx[i]] += y[i * ys] in order, a run of one index
// summed in a register (the same additions in the same order) and stored once. (Prefetching
// the destination as the gather does measured no faster: the misses overlap already.)
template <typename T, typename I>
void AddElements(T* o, const T* y, int64_t ys, const I* p, int64_t ps, int64_t n, int64_t len) {
  if (n == 0) return;
  int64_t prev = Wrap(p[0], len);
  T acc = AddAsNumpy(o[prev], y[0]);
  for (int64_t i = 1; i < n; ++i) {
    const int64_t r = Wrap(p[i * ps], len);
    const T v = y[i * ys];
    if (r != prev) {
      o[prev] = acc;
      prev = r;
      acc = o[r];
    }
    acc = AddAsNumpy(acc, v);
  }
  o[prev] = acc;
}

// The typed scatter: one-element rows, else rows copied or added whole when y's are contiguous,
// from one value when broadcast, element by element along their strides otherwise.
template <typename T, typename I>
void ScatterTyped(T* o, int64_t row, const T* y, int64_t ys0, const RowLayout& yl, const I* p,
                  int64_t ps, int64_t n, int64_t len, bool set) {
  if (row == 1) {
    if (set) {
      for (int64_t i = 0; i < n; ++i) o[Wrap(p[i * ps], len)] = y[i * ys0];
    } else {
      AddElements(o, y, ys0, p, ps, n, len);
    }
    return;
  }
  std::vector<int64_t> at;
  for (int64_t i = 0; i < n; ++i) {
    T* dst = o + Wrap(p[i * ps], len) * row;
    const T* src = y + i * ys0;
    if (yl.contiguous()) {
      if (set) {
        std::memcpy(dst, src, row * sizeof(T));
      } else {
        for (int64_t k = 0; k < row; ++k) dst[k] = AddAsNumpy(dst[k], src[k]);
      }
    } else if (yl.broadcast()) {
      const T c = src[0];
      if (set) {
        std::fill(dst, dst + row, c);
      } else {
        for (int64_t k = 0; k < row; ++k) dst[k] = AddAsNumpy(dst[k], c);
      }
    } else if (set) {
      WalkRow(yl, 0, at, [&](int64_t k, int64_t off) { dst[k] = src[off]; });
    } else {
      WalkRow(yl, 0, at,
              [&](int64_t k, int64_t off) { dst[k] = AddAsNumpy(dst[k], src[off]); });
    }
  }
}

}  // namespace

absl::StatusOr<Tensor> TakeRows(const Op& op, const Tensor& x, const Tensor& idx) {
  if (x.ndim() == 0) return Invalid(op, "cannot index a 0-d tensor along axis 0");
  const int64_t len = x.shape()[0];
  ASSIGN_OR_RETURN(const Indices ix, PrepareIndices(op, idx, len));
  Shape shape = x.shape();
  shape[0] = ix.size;
  RETURN_IF_ERROR(CheckOutputShape(op, shape, x.dtype()));
  Tensor out = Tensor::Empty(x.dtype(), shape);
  const RowLayout xl = MakeRowLayout(x.shape(), x.strides());
  const int64_t row = xl.size, esize = DTypeSize(x.dtype()), xs0 = x.strides()[0];
  if (ix.size == 0 || row == 0) return out;
  // Chunks of at least 256 KiB of output each, for the pool to split between cores.
  const int64_t min_chunk = std::max<int64_t>(1, (int64_t{1} << 18) / (row * esize));
  WithIndexType(ix, [&](auto p) {
    WithWord(esize, [&](auto tag) {
      using E = typename decltype(tag)::type;
      E* o = out.data<E>();
      const E* src = x.data<E>();
      if (row == 1) {
        ParallelFor(ix.size, min_chunk, [&](int64_t begin, int64_t end) {
          GatherElements(o, src, xs0, p, ix.stride, len, begin, end);
        });
        return;
      }
      ParallelFor(ix.size, min_chunk, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> at;
        for (int64_t i = begin; i < end; ++i) {
          E* dst = o + i * row;
          const int64_t base = Wrap(p[i * ix.stride], len) * xs0;
          if (xl.contiguous()) {
            std::memcpy(dst, src + base, row * sizeof(E));
          } else {
            WalkRow(xl, base, at, [&](int64_t k, int64_t off) { dst[k] = src[off]; });
          }
        }
      });
    });
  });
  return out;
}

absl::Status ScatterRows(const Op& op, Tensor& out, const Tensor& y, const Tensor& idx, bool set) {
  if (out.ndim() == 0) return Invalid(op, "cannot index a 0-d tensor along axis 0");
  const int64_t len = out.shape()[0];
  ASSIGN_OR_RETURN(const Indices ix, PrepareIndices(op, idx, len));
  Shape expected = out.shape();
  expected[0] = ix.size;
  if (y.shape() != expected || y.dtype() != out.dtype() || !out.is_contiguous()) {
    return absl::InternalError(absl::StrCat(op.Name(), ": ScatterRows needs y of shape ",
                                            ShapeToString(expected), " and dtype ",
                                            DTypeName(out.dtype()), " and a contiguous output"));
  }
  const RowLayout yl = MakeRowLayout(y.shape(), y.strides());
  const int64_t row = yl.size;
  if (ix.size == 0 || row == 0) return absl::OkStatus();
  const int64_t ys0 = y.strides()[0];
  WithIndexType(ix, [&](auto p) {
    if (set && row > 1 && yl.contiguous()) {  // memcpy per row: one loop per element size
      const int64_t bytes = row * DTypeSize(out.dtype());
      char* o = static_cast<char*>(out.raw_data());
      const char* src = static_cast<const char*>(y.raw_data());
      const int64_t step = ys0 * DTypeSize(out.dtype());
      for (int64_t i = 0; i < ix.size; ++i) {
        std::memcpy(o + Wrap(p[i * ix.stride], len) * bytes, src + i * step, bytes);
      }
      return;
    }
    DispatchDType(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ScatterTyped(out.data<T>(), row, y.data<T>(), ys0, yl, p, ix.stride, ix.size, len, set);
    });
  });
  return absl::OkStatus();
}

}  // namespace kiln
