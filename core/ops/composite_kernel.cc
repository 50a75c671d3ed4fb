#include "core/ops/composite_kernel.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "core/ops/scalar_apply.h"
#include "core/ops/sleef_kernels.h"
#include "core/tensor/dtype_dispatch.h"
#include "core/tensor/parallel.h"

namespace kiln {

// What a call of RunFusedBlocks needs to know of its program alone.
struct FusedPlan {
  // False when the block executor cannot run the program: the first non-bool instruction's dtype
  // (the compute dtype) is not float32 or float64, or an instruction has no block kernel, gives
  // another dtype than the compute one (a comparison's bool aside) or reads another.
  bool supported = false;
  DType compute = DType::kFloat64;
  int n_in = 0, n_const = 0, n_regs = 0;  // registers: inputs, constants, all
  std::vector<double> constants;          // the constants' values, read as T at each call
  std::vector<DType> out_dtype;           // per output: the compute dtype or bool
  std::vector<int> out_instr;             // per output: the instruction giving it, or -1
  // (instruction, register): the instruction reads the register for the last time, in
  // instruction order; its block buffer is free once that instruction has run.
  std::vector<std::pair<int, int>> frees;
};

namespace {

using K = ScalarOpKind;

// A tensor without a buffer, to ask another whether it has one.
const Tensor kNoBuffer;

// Elements per block: the live registers of a block stay in L1/L2.
constexpr int64_t kBlock = 512;

// Per-call bookkeeping, on the stack for programs of up to 32 registers: a small call's cost is
// mostly its allocations.
template <typename T>
using Small = absl::InlinedVector<T, 32>;

// Comparisons and the isnan / isinf tests: computed as T's 0 and 1 in the blocks (switch reads
// them so), converted to bool when they are outputs.
bool Comparison(K k) {
  return k == K::kLt || k == K::kGt || k == K::kLe || k == K::kGe || k == K::kEq || k == K::kNeq ||
         k == K::kIsNan || k == K::kIsInf;
}

bool SimpleOp(K k) {
  switch (k) {
    case K::kAdd:
    case K::kSub:
    case K::kMul:
    case K::kTrueDiv:
    case K::kNeg:
    case K::kSqr:
    case K::kSqrt:
    case K::kAbs:
    case K::kMaximum:
    case K::kMinimum:
    case K::kReciprocal:
    case K::kIdentity:
    case K::kSecond:
    case K::kSwitch:
      return true;
    default:
      return Comparison(k);
  }
}

// Inlined into each instruction-set clone of StepD/StepF, so that they vectorize for it.
template <K Op, typename T>
[[gnu::always_inline]] inline void Unary(const T* a, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = scalar::Apply<Op, T>(a[i]);
}

template <K Op, typename T>
[[gnu::always_inline]] inline void Binary(const T* a, const T* b, T* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = scalar::Apply<Op, T>(a[i], b[i]);
}

// One instruction over a block: o = op(args).
template <typename T>
[[gnu::always_inline]] inline void Step(K k, std::span<const T* const> a, T* o, int64_t n) {
  switch (k) {
    case K::kAdd:
    case K::kMul: {
      // n-ary: folded left to right, as the unfused kernel does.
      if (k == K::kAdd) {
        Binary<K::kAdd, T>(a[0], a[1], o, n);
        for (size_t j = 2; j < a.size(); ++j) Binary<K::kAdd, T>(o, a[j], o, n);
      } else {
        Binary<K::kMul, T>(a[0], a[1], o, n);
        for (size_t j = 2; j < a.size(); ++j) Binary<K::kMul, T>(o, a[j], o, n);
      }
      return;
    }
    case K::kSub:
      return Binary<K::kSub, T>(a[0], a[1], o, n);
    case K::kTrueDiv:
      return Binary<K::kTrueDiv, T>(a[0], a[1], o, n);
    case K::kMaximum:
      return Binary<K::kMaximum, T>(a[0], a[1], o, n);
    case K::kMinimum:
      return Binary<K::kMinimum, T>(a[0], a[1], o, n);
    case K::kNeg:
      return Unary<K::kNeg, T>(a[0], o, n);
    case K::kSqr:
      return Unary<K::kSqr, T>(a[0], o, n);
    case K::kSqrt:
      return Unary<K::kSqrt, T>(a[0], o, n);
    case K::kAbs:
      return Unary<K::kAbs, T>(a[0], o, n);
    case K::kReciprocal:
      return Unary<K::kReciprocal, T>(a[0], o, n);
    case K::kIdentity:
      std::memcpy(o, a[0], n * sizeof(T));
      return;
    case K::kSecond:
      std::memcpy(o, a[1], n * sizeof(T));
      return;
    case K::kSwitch:
      for (int64_t i = 0; i < n; ++i) o[i] = a[0][i] != T(0) ? a[1][i] : a[2][i];
      return;
    case K::kLt:
      return Binary<K::kLt, T>(a[0], a[1], o, n);
    case K::kGt:
      return Binary<K::kGt, T>(a[0], a[1], o, n);
    case K::kLe:
      return Binary<K::kLe, T>(a[0], a[1], o, n);
    case K::kGe:
      return Binary<K::kGe, T>(a[0], a[1], o, n);
    case K::kEq:
      return Binary<K::kEq, T>(a[0], a[1], o, n);
    case K::kNeq:
      return Binary<K::kNeq, T>(a[0], a[1], o, n);
    case K::kIsNan:
      return Unary<K::kIsNan, T>(a[0], o, n);
    case K::kIsInf:
      return Unary<K::kIsInf, T>(a[0], o, n);
    case K::kPow:
      sleef::Map2(k, a[0], a[1], 1, o, n);
      return;
    default:
      sleef::Map(k, a[0], o, n);
      return;
  }
}

// Step for double and float, compiled for AVX-512F, AVX2 and the baseline, picked at load time:
// the block loops are where a fused graph spends its time.
__attribute__((target_clones("avx512f", "avx2", "default"))) void StepD(
    K k, std::span<const double* const> a, double* o, int64_t n) {
  Step<double>(k, a, o, n);
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void StepF(
    K k, std::span<const float* const> a, float* o, int64_t n) {
  Step<float>(k, a, o, n);
}

// o[0..n) = v: a splat register's block buffer, filled on every call (radon's 919-element nodes
// fill a block of 512 for each of their constants), so vectorized as Step is.
__attribute__((target_clones("avx512f", "avx2", "default"))) void FillD(double* o, double v,
                                                                        int64_t n) {
  std::fill(o, o + n, v);
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void FillF(float* o, float v,
                                                                        int64_t n) {
  std::fill(o, o + n, v);
}
template <typename T>
void Fill(T* o, T v, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    FillD(o, v, n);
  } else {
    FillF(o, v, n);
  }
}

// This thread's block buffers of at least n elements, uninitialised, kept for its next call (a
// small call's cost is mostly its allocations). Buffers over kKeptScratch bytes are given back
// by the next call that needs less. A chunk holds them for its whole run and runs nothing that
// takes them again.
constexpr size_t kKeptScratch = 256 << 10;
template <typename T>
T* BlockScratch(int64_t n) {
  thread_local std::unique_ptr<T[]> kept;
  thread_local int64_t kept_size = 0;
  if (kept_size < n || (kept_size * sizeof(T) > kKeptScratch && kept_size > n)) {
    kept.reset(new T[n]);  // default-initialised: not zero-filled
    kept_size = n;
  }
  return kept.get();
}

// Dims past which a broadcast input is left to the instruction-by-instruction path.
constexpr int kMaxGatherDims = 8;

// An input broadcast to the output's shape (a (n, 1) column against a (1, k) row), seen through
// the output's dims collapsed where the input's strides allow: element strides (0 where it
// broadcasts) and sizes, outermost first. Gathered block by block, with two shortcuts: a
// `period`-long run repeated (a row against a column: a block is a window of the run laid out
// repeatedly, filled once per chunk) and each element repeated `repeat` times in turn (a
// column against a row).
template <typename T>
struct Broadcast {
  const T* data = nullptr;
  int ndim = 0;
  int64_t sizes[kMaxGatherDims] = {};
  int64_t strides[kMaxGatherDims] = {};
  int64_t period = 0;  // > 0: the input is data[0..period) repeated, period <= kMaxPeriod
  int64_t repeat = 0;  // > 0: element i is data[(i / repeat) * strides[0]]
};

// The longest repeated run read as a window of one block buffer (which is kPad elements longer
// than a block).
constexpr int64_t kPad = 16;
constexpr int64_t kMaxPeriod = kPad;

// The broadcast view of t (of `shape`'s rank) over `shape`.
template <typename T>
Broadcast<T> MakeBroadcast(const Tensor& t, const Shape& shape) {
  Broadcast<T> g;
  g.data = t.data<T>();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    const int64_t stride = t.shape()[d] == shape[d] ? t.strides()[d] : 0;
    if (g.ndim > 0 && g.strides[g.ndim - 1] == stride * shape[d]) {
      g.sizes[g.ndim - 1] *= shape[d];
      g.strides[g.ndim - 1] = stride;
      continue;
    }
    g.sizes[g.ndim] = shape[d];
    g.strides[g.ndim] = stride;
    ++g.ndim;
  }
  if (g.ndim == 2 && g.strides[0] == 0 && g.strides[1] == 1 && g.sizes[1] <= kMaxPeriod) {
    g.period = g.sizes[1];
  } else if (g.ndim == 2 && g.strides[1] == 0) {
    g.repeat = g.sizes[1];
  }
  return g;
}

// dst[0..m) = the broadcast input's elements at the output's flat positions [begin, begin + m).
template <typename T>
void Gather(const Broadcast<T>& in, int64_t begin, int64_t m, T* dst) {
  if (m <= 0) return;  // (an empty output may have dims of size 0: no index arithmetic)
  if (in.repeat > 0) {
    const int64_t q = in.repeat, s = in.strides[0];
    int64_t i = begin / q, j = 0;
    // The rest of the first element's repeats, whole ones, then the last one's first few.
    for (int64_t r = std::min(m, q - begin % q); j < r; ++j) dst[j] = in.data[i * s];
    for (++i; j + q <= m; j += q, ++i) {
      const T v = in.data[i * s];
      for (int64_t k = 0; k < q; ++k) dst[j + k] = v;
    }
    for (; j < m; ++j) dst[j] = in.data[i * s];
    return;
  }
  const int ndim = in.ndim;
  int64_t index[kMaxGatherDims];
  int64_t offset = 0;
  int64_t rest = begin;
  for (int d = ndim - 1; d >= 0; --d) {
    index[d] = rest % in.sizes[d];
    rest /= in.sizes[d];
    offset += index[d] * in.strides[d];
  }
  const int last = ndim - 1;
  const int64_t inner = in.sizes[last], step = in.strides[last];
  for (int64_t done = 0; done < m;) {
    const int64_t count = std::min(inner - index[last], m - done);
    const T* p = in.data + offset;
    T* o = dst + done;
    if (step == 0) {
      std::fill(o, o + count, *p);
    } else if (step == 1) {
      std::copy(p, p + count, o);
    } else {
      for (int64_t i = 0; i < count; ++i) o[i] = p[i * step];
    }
    done += count;
    offset += count * step;
    index[last] += count;
    for (int d = last; d > 0 && index[d] == in.sizes[d]; --d) {
      offset += in.strides[d - 1] - in.sizes[d] * in.strides[d];
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

// The lowest and one past the highest byte a strided tensor's elements occupy.
std::pair<const char*, const char*> Extent(const Tensor& t) {
  const char* base = static_cast<const char*>(t.raw_data());
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < t.ndim(); ++d) {
    const int64_t span = (t.shape()[d] - 1) * t.strides()[d];
    (span < 0 ? lo : hi) += span;
  }
  const int64_t item = static_cast<int64_t>(DTypeSize(t.dtype()));
  return {base + lo * item, base + (hi + 1) * item};
}

// Elements up to which a call runs as one block with a buffer per register: no buffer reuse to
// plan, no output written before every input is read (so in-place outputs need no care), no
// thread pool. Scalars and short vectors (eight_schools' nodes) are dominated by such set-up.
constexpr int64_t kSmall = 64;

// Run's program over `shape` of n <= kSmall elements, its inputs already classified (data:
// contiguous, splat: single values, gathered: broadcast).
template <typename T>
bool RunSmall(const ScalarProgram& program, const FusedPlan& plan, const Shape& shape, int64_t n,
              std::span<const T* const> data, std::span<const T> splat,
              std::span<const Broadcast<T>> gathered, std::span<const int> gathered_reg,
              std::vector<Tensor>& outputs) {
  const int n_in = plan.n_in, n_const = plan.n_const, n_regs = plan.n_regs;
  const int64_t stride = (n + 7) / 8 * 8 + kPad;
  T* storage = BlockScratch<T>(n_regs * stride);
  Small<const T*> reg(n_regs);
  for (int r = 0; r < n_in + n_const; ++r) {
    if (r < n_in && data[r] != nullptr) {
      reg[r] = data[r];
    } else {
      T* b = storage + r * stride;
      Fill(b, splat[r], n);
      reg[r] = b;
    }
  }
  for (size_t g = 0; g < gathered.size(); ++g) {
    T* b = storage + gathered_reg[g] * stride;
    Gather(gathered[g], 0, n, b);
    reg[gathered_reg[g]] = b;
  }
  Small<const T*> args;
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    const ScalarProgram::Instr& instr = program.instrs[i];
    args.clear();
    for (int r : instr.args) args.push_back(reg[r]);
    const int r_out = n_in + n_const + static_cast<int>(i);
    T* out = storage + r_out * stride;
    if constexpr (std::is_same_v<T, double>) {
      StepD(instr.op.kind, args, out, n);
    } else {
      StepF(instr.op.kind, args, out, n);
    }
    reg[r_out] = out;
  }
  // Every input has been read: outputs (an in-place one included) are written now, those that
  // pass an input through from a copy (an earlier output may be written over that input).
  for (int r : program.outputs) {
    if (r < n_in && data[r] != nullptr && reg[r] == data[r]) {
      T* b = storage + r * stride;
      std::memcpy(b, data[r], n * sizeof(T));
      reg[r] = b;
    }
  }
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    Tensor& o = outputs[k];
    const DType out_dtype = plan.out_dtype[k];
    if (o.raw_data() == nullptr || o.dtype() != out_dtype || o.shape() != shape ||
        !o.is_contiguous()) {
      o = Tensor::Empty(out_dtype, shape);
    }
    const T* src = reg[program.outputs[k]];
    if (out_dtype == DType::kBool) {
      bool* dst = o.data<bool>();
      for (int64_t j = 0; j < n; ++j) dst[j] = src[j] != T(0);
    } else if (o.data<T>() != src) {
      std::memcpy(o.data<T>(), src, n * sizeof(T));
    }
  }
  return true;
}

template <typename T>
bool Run(const ScalarProgram& program, const FusedPlan& plan, const Shape& shape,
         std::span<const Tensor> inputs, std::vector<Tensor>& outputs) {
  constexpr DType kT = std::is_same_v<T, double> ? DType::kFloat64 : DType::kFloat32;
  const int64_t n = ShapeSize(shape);
  const int n_in = plan.n_in, n_const = plan.n_const, n_regs = plan.n_regs;
  // Each input: a pointer into its data (full shape) or a single value to broadcast.
  Small<const T*> data(n_in, nullptr);
  Small<T> splat(n_in + n_const);
  absl::InlinedVector<Broadcast<T>, 4> gathered;
  Small<int> gathered_reg;  // the register of each gathered input
  for (int r = 0; r < n_in; ++r) {
    const Tensor& t = inputs[r];
    if (t.dtype() != kT) {
      // A single integer, bool or other float (a count, as mean's gradient divides by): every
      // instruction reads it converted to T, as the unfused kernel's AsType converts it.
      if (t.size() != 1 || IsComplex(t.dtype())) return false;
      splat[r] = DispatchDType(t.dtype(), [&](auto tag) {
        using In = typename decltype(tag)::type;
        return ConvertElement<T>(t.template data<In>()[0]);
      });
    } else if (t.size() == 1) {
      splat[r] = t.data<T>()[0];
    } else if (t.shape() == shape && t.is_contiguous()) {
      data[r] = t.data<T>();
    } else if (t.ndim() == static_cast<int>(shape.size()) && t.ndim() <= kMaxGatherDims) {
      // Broadcast (Elemwise::Perform has checked its dims against the output's).
      gathered.push_back(MakeBroadcast<T>(t, shape));
      gathered_reg.push_back(r);
    } else {
      return false;
    }
  }
  for (int c = 0; c < n_const; ++c) splat[n_in + c] = static_cast<T>(plan.constants[c]);
  // An output passing an input through is written from T's blocks.
  for (int r : program.outputs) {
    if (r < n_in && inputs[r].dtype() != kT) return false;
  }
  if (n <= kSmall) {
    return RunSmall<T>(program, plan, shape, n, data, splat, gathered, gathered_reg, outputs);
  }
  // A gathered input may be read from anywhere in any block: an output sharing its memory (an
  // in-place view of it) takes the instruction-by-instruction path.
  for (size_t g = 0; g < gathered.size(); ++g) {
    const auto [lo, hi] = Extent(inputs[gathered_reg[g]]);
    for (const Tensor& o : outputs) {
      if (o.raw_data() == nullptr) continue;
      const char* ob = static_cast<const char*>(o.raw_data());
      if (ob < hi && lo < ob + o.nbytes()) return false;
    }
  }
  const std::span<const DType> out_dtype = plan.out_dtype;
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    // An output already holding a buffer of the right kind (an in-place input) is reused: each
    // block reads its inputs before it writes the same block of the output.
    Tensor& o = outputs[k];
    if (o.raw_data() == nullptr || o.dtype() != out_dtype[k] || o.shape() != shape ||
        !o.is_contiguous()) {
      o = Tensor::Empty(out_dtype[k], shape);
    }
  }
  // The instructions whose result is an output write straight into it (-1: into a block buffer),
  // unless the output shares memory with an input that a later instruction may still read. When
  // an output shares an input's memory, the outputs that pass an input through copy a snapshot of
  // its block, taken before any output is written.
  Small<int> writes_output(program.instrs.size(), -1);
  bool any_overlap = false;
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    const int i = plan.out_instr[k];
    if (out_dtype[k] != kT) continue;  // converted from its block, never written in place
    const T* o = outputs[k].data<T>();
    const bool overlaps = std::any_of(data.begin(), data.end(), [&](const T* in) {
      return in != nullptr && in < o + n && o < in + n;
    });
    any_overlap |= overlaps;
    if (i >= 0 && writes_output[i] < 0 && !overlaps) writes_output[i] = static_cast<int>(k);
  }
  Small<int> snapshot_outputs;
  for (size_t k = 0; k < program.outputs.size() && any_overlap; ++k) {
    const int r = program.outputs[k];
    if (r < n_in && data[r] != nullptr) snapshot_outputs.push_back(static_cast<int>(k));
  }
  const int n_slots = n_regs + static_cast<int>(snapshot_outputs.size());
  auto is_gathered = [&](int r) {
    return std::find(gathered_reg.begin(), gathered_reg.end(), r) != gathered_reg.end();
  };
  const std::vector<std::pair<int, int>>& frees = plan.frees;
  // A small call's buffers are only as long as its elements (rounded to whole vectors). Buffers
  // sit two cache lines more than a block apart, so that one read and one written in the same
  // loop are never a multiple of 4 KiB apart (the loads would wait on the stores).
  const int64_t block = std::min(kBlock, (n + 7) / 8 * 8);
  const int64_t stride = block + kPad;

  ParallelFor(n, 1 << 15, [&](int64_t begin, int64_t end) {
    // Block buffers: one per splat register, then a pool for instruction results, then the
    // snapshots. Uninitialised: each use writes before it reads.
    T* storage = BlockScratch<T>(n_slots * stride);
    auto buffer = [&](int slot) { return storage + slot * stride; };
    Small<T*> reg_buffer(n_regs, nullptr);
    for (int r = 0; r < n_in + n_const; ++r) {
      if (r < n_in && (data[r] != nullptr || is_gathered(r))) continue;
      reg_buffer[r] = buffer(r);
      Fill(reg_buffer[r], splat[r], block);
    }
    for (size_t g = 0; g < gathered.size(); ++g) {
      const int64_t p = gathered[g].period;
      if (p == 0) continue;
      T* pattern = buffer(gathered_reg[g]);
      // Stores only: copying the buffer onto itself p elements on would read back each store
      // before it has landed (a stalled store-to-load forward per vector).
      for (int64_t j = 0; j < p; ++j) {
        const T v = gathered[g].data[j];
        for (int64_t i = j; i < block + p; i += p) pattern[i] = v;
      }
    }
    Small<const T*> args, reg(n_regs), source(program.outputs.size());
    Small<int> free_slots;
    for (int64_t b = begin; b < end; b += block) {
      const int64_t m = std::min(block, end - b);
      free_slots.clear();
      for (int s = static_cast<int>(program.instrs.size()) - 1; s >= 0; --s) {
        free_slots.push_back(n_in + n_const + s);
      }
      for (int r = 0; r < n_in + n_const; ++r) {
        reg[r] = r < n_in && data[r] != nullptr ? data[r] + b : reg_buffer[r];
      }
      for (size_t g = 0; g < gathered.size(); ++g) {
        T* dst = buffer(gathered_reg[g]);
        if (gathered[g].period > 0) {
          reg[gathered_reg[g]] = dst + b % gathered[g].period;
        } else {
          Gather(gathered[g], b, m, dst);
          reg[gathered_reg[g]] = dst;
        }
      }
      const std::pair<int, int>* next_free = frees.data();
      for (size_t i = 0; i < program.instrs.size(); ++i) {
        const ScalarProgram::Instr& instr = program.instrs[i];
        args.clear();
        for (int r : instr.args) args.push_back(reg[r]);
        T* out;
        if (writes_output[i] >= 0) {
          out = outputs[writes_output[i]].data<T>() + b;
        } else {
          out = buffer(free_slots.back());
          free_slots.pop_back();
        }
        if constexpr (std::is_same_v<T, double>) {
          StepD(instr.op.kind, args, out, m);
        } else {
          StepF(instr.op.kind, args, out, m);
        }
        const int r_out = n_in + n_const + static_cast<int>(i);
        reg[r_out] = out;
        for (; next_free != frees.data() + frees.size() && next_free->first == static_cast<int>(i);
             ++next_free) {
          free_slots.push_back(static_cast<int>((reg[next_free->second] - storage) / stride));
        }
      }
      for (size_t k = 0; k < program.outputs.size(); ++k) source[k] = reg[program.outputs[k]];
      for (size_t s = 0; s < snapshot_outputs.size(); ++s) {
        T* copy = buffer(n_regs + static_cast<int>(s));
        std::memcpy(copy, source[snapshot_outputs[s]], m * sizeof(T));
        source[snapshot_outputs[s]] = copy;
      }
      for (size_t k = 0; k < program.outputs.size(); ++k) {
        if (out_dtype[k] == DType::kBool) {
          bool* dst = outputs[k].data<bool>() + b;
          for (int64_t j = 0; j < m; ++j) dst[j] = source[k][j] != T(0);
          continue;
        }
        T* dst = outputs[k].data<T>() + b;
        if (dst != source[k]) std::memcpy(dst, source[k], m * sizeof(T));
      }
    }
  });
  return true;
}

}  // namespace

std::shared_ptr<const FusedPlan> PlanFusedBlocks(const ScalarProgram& program) {
  auto plan = std::make_shared<FusedPlan>();
  plan->n_in = program.num_inputs();
  plan->n_const = static_cast<int>(program.constants.size());
  plan->n_regs = plan->n_in + plan->n_const + static_cast<int>(program.instrs.size());
  // The compute type: the first instruction's that is not a comparison's bool.
  const auto first =
      std::find_if(program.instrs.begin(), program.instrs.end(),
                   [](const ScalarProgram::Instr& i) { return i.dtype != DType::kBool; });
  if (first == program.instrs.end()) return plan;
  const DType t = first->dtype;
  if (t != DType::kFloat64 && t != DType::kFloat32) return plan;
  plan->compute = t;
  // Every instruction computes in T (a comparison's bool as T's 0 or 1), and reads only T
  // registers: a bool in arithmetic (through a cast) takes the instruction-by-instruction path.
  const int first_instr = plan->n_in + plan->n_const;
  for (const ScalarProgram::Instr& instr : program.instrs) {
    const K k = instr.op.kind;
    const bool supported = SimpleOp(k) || (k == K::kPow && sleef::ProvidesBinary(k)) ||
                           (instr.args.size() == 1 && sleef::Provides(k));
    const bool dtype_ok = instr.dtype == t || (instr.dtype == DType::kBool && Comparison(k));
    if (!supported || !dtype_ok) return plan;
    for (size_t j = 0; j < instr.args.size(); ++j) {
      const int r = instr.args[j] - first_instr;
      const bool condition = k == K::kSwitch && j == 0;
      if (r >= 0 && program.instrs[r].dtype != t && !condition) return plan;
    }
  }
  for (const Tensor& c : program.constants) plan->constants.push_back(c.ElementAsDouble(0));
  // Each output's dtype: T, or bool for a comparison's result.
  for (int r : program.outputs) {
    const int i = r - first_instr;
    plan->out_instr.push_back(i >= 0 ? i : -1);
    plan->out_dtype.push_back(i >= 0 ? program.instrs[i].dtype : t);
  }
  // The instruction registers read for the last time by each instruction, as (instruction,
  // register) pairs in instruction order: their block buffers are free once it has run.
  const int n_instrs = static_cast<int>(program.instrs.size());
  std::vector<int> last_use(plan->n_regs, -1);
  for (int i = 0; i < n_instrs; ++i) {
    for (int r : program.instrs[i].args) last_use[r] = i;
  }
  for (int r : program.outputs) last_use[r] = n_instrs;
  for (int r = first_instr; r < plan->n_regs; ++r) {
    if (last_use[r] >= 0 && last_use[r] < n_instrs) plan->frees.push_back({last_use[r], r});
  }
  std::sort(plan->frees.begin(), plan->frees.end());
  plan->supported = true;
  return plan;
}

namespace {

// RunSimpleElemwise in T.
template <typename T>
void RunSimple(K k, int64_t n, std::span<const Tensor> inputs, Tensor& out) {
  Small<const T*> args;
  // The one-element inputs of another dtype, or broadcast, each converted and filled to n.
  T* splat = nullptr;
  for (size_t j = 0; j < inputs.size(); ++j) {
    const Tensor& in = inputs[j];
    if (in.dtype() == out.dtype() && in.size() == n) {
      args.push_back(in.data<T>());
      continue;
    }
    if (splat == nullptr) splat = BlockScratch<T>(n * static_cast<int64_t>(inputs.size()));
    T* b = splat + n * static_cast<int64_t>(j);
    // (As AsType converts: float32 to float64 exactly, float64 to float32 rounded once.)
    Fill(b, in.dtype() == DType::kFloat64 ? static_cast<T>(in.data<double>()[0])
                                          : static_cast<T>(in.data<float>()[0]),
         n);
    args.push_back(b);
  }
  if constexpr (std::is_same_v<T, double>) {
    StepD(k, args, out.data<T>(), n);
  } else {
    StepF(k, args, out.data<T>(), n);
  }
}

}  // namespace

bool RunSimpleElemwise(ScalarOpKind kind, DType dtype, const Shape& shape,
                       std::span<const Tensor> inputs, Tensor& out) {
  if ((dtype != DType::kFloat64 && dtype != DType::kFloat32) || !SimpleOp(kind) ||
      Comparison(kind) || kind == K::kSwitch || inputs.empty() ||
      inputs.size() > kMaxSimpleInputs) {
    return false;
  }
  const int64_t n = ShapeSize(shape);
  if (n > kMaxSimpleElements || n == 0) return false;
  for (const Tensor& in : inputs) {
    const bool one = in.size() == 1 &&
                     (in.dtype() == DType::kFloat64 || in.dtype() == DType::kFloat32);
    if (!one && (in.dtype() != dtype || !in.is_contiguous() || in.shape() != shape)) {
      return false;
    }
  }
  if (!(out.dtype() == dtype && out.shape() == shape && out.is_contiguous() &&
        !out.SharesBufferWith(kNoBuffer))) {
    out = Tensor::Empty(dtype, shape);
  }
  if (dtype == DType::kFloat64) {
    RunSimple<double>(kind, n, inputs, out);
  } else {
    RunSimple<float>(kind, n, inputs, out);
  }
  return true;
}

bool RunFusedBlocks(const ScalarProgram& program, const Shape& shape,
                    std::span<const Tensor> inputs, std::vector<Tensor>& outputs) {
  std::shared_ptr<const FusedPlan> made;
  const FusedPlan* plan = program.plan.get();
  if (plan == nullptr) {
    made = PlanFusedBlocks(program);
    plan = made.get();
  }
  if (!plan->supported) return false;
  if (plan->compute == DType::kFloat64) return Run<double>(program, *plan, shape, inputs, outputs);
  return Run<float>(program, *plan, shape, inputs, outputs);
}

}  // namespace kiln
