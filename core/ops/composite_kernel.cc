#include "core/ops/composite_kernel.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "core/ops/scalar_apply.h"
#include "core/ops/sleef_kernels.h"
#include "core/tensor/parallel.h"

namespace kiln {
namespace {

using K = ScalarOpKind;

// Elements per block: the live registers of a block stay in L1/L2.
constexpr int64_t kBlock = 512;

// Per-call bookkeeping, on the stack for programs of up to 32 registers: a small call's cost is
// mostly its allocations.
template <typename T>
using Small = absl::InlinedVector<T, 32>;

// Comparisons: computed as T's 0 and 1 in the blocks (switch reads them so), converted to bool
// when they are outputs.
bool Comparison(K k) {
  return k == K::kLt || k == K::kGt || k == K::kLe || k == K::kGe || k == K::kEq || k == K::kNeq;
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

template <typename T>
bool Run(const ScalarProgram& program, const Shape& shape, std::span<const Tensor> inputs,
         std::vector<Tensor>& outputs) {
  constexpr DType kT = std::is_same_v<T, double> ? DType::kFloat64 : DType::kFloat32;
  const int64_t n = ShapeSize(shape);
  const int n_in = program.num_inputs();
  const int n_const = static_cast<int>(program.constants.size());
  const int n_regs = n_in + n_const + static_cast<int>(program.instrs.size());
  // Each input: a pointer into its data (full shape) or a single value to broadcast.
  Small<const T*> data(n_in, nullptr);
  Small<T> splat(n_in + n_const);
  for (int r = 0; r < n_in; ++r) {
    const Tensor& t = inputs[r];
    if (t.dtype() != kT) {
      // A single integer, bool or other float (a count, as mean's gradient divides by): every
      // instruction reads it converted to T, as the unfused kernel's AsType converts it.
      if (t.size() != 1 || IsComplex(t.dtype())) return false;
      splat[r] = t.AsType(kT).template data<T>()[0];
    } else if (t.size() == 1) {
      splat[r] = t.data<T>()[0];
    } else if (t.shape() == shape && t.is_contiguous()) {
      data[r] = t.data<T>();
    } else {
      return false;
    }
  }
  for (int c = 0; c < n_const; ++c) {
    splat[n_in + c] = static_cast<T>(program.constants[c].ElementAsDouble(0));
  }
  // Every instruction computes in T (a comparison's bool as T's 0 or 1), and reads only T
  // registers: a bool in arithmetic (through a cast) takes the instruction-by-instruction path.
  for (const ScalarProgram::Instr& instr : program.instrs) {
    const K k = instr.op.kind;
    const bool supported = SimpleOp(k) || (k == K::kPow && sleef::ProvidesBinary(k)) ||
                           (instr.args.size() == 1 && sleef::Provides(k));
    const bool dtype_ok = instr.dtype == kT || (instr.dtype == DType::kBool && Comparison(k));
    if (!supported || !dtype_ok) return false;
    for (size_t j = 0; j < instr.args.size(); ++j) {
      const int r = instr.args[j] - n_in - n_const;
      const bool condition = k == K::kSwitch && j == 0;
      if (r >= 0 && program.instrs[r].dtype != kT && !condition) return false;
    }
  }
  // Each output's dtype: T, or bool for a comparison's result.
  Small<DType> out_dtype(program.outputs.size(), kT);
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    const int i = program.outputs[k] - n_in - n_const;
    if (i >= 0) out_dtype[k] = program.instrs[i].dtype;
    else if (program.outputs[k] < n_in && inputs[program.outputs[k]].dtype() != kT) return false;
  }
  // The instruction registers read for the last time by each instruction, as (instruction,
  // register) pairs in instruction order: their block buffers are free once it has run.
  Small<int> last_use(n_regs, -1);
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    for (int r : program.instrs[i].args) last_use[r] = static_cast<int>(i);
  }
  for (int r : program.outputs) last_use[r] = static_cast<int>(program.instrs.size());
  Small<std::pair<int, int>> frees;
  for (int r = n_in + n_const; r < n_regs; ++r) {
    if (last_use[r] >= 0 && last_use[r] < static_cast<int>(program.instrs.size())) {
      frees.push_back({last_use[r], r});
    }
  }
  std::sort(frees.begin(), frees.end());
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
    const int i = program.outputs[k] - n_in - n_const;
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
  // A small call's buffers are only as long as its elements (rounded to whole vectors). Buffers
  // sit two cache lines more than a block apart, so that one read and one written in the same
  // loop are never a multiple of 4 KiB apart (the loads would wait on the stores).
  const int64_t block = std::min(kBlock, (n + 7) / 8 * 8);
  const int64_t stride = block + 16;

  ParallelFor(n, 1 << 15, [&](int64_t begin, int64_t end) {
    // Block buffers: one per splat register, then a pool for instruction results, then the
    // snapshots. Uninitialised: each use writes before it reads.
    T* storage = BlockScratch<T>(n_slots * stride);
    auto buffer = [&](int slot) { return storage + slot * stride; };
    Small<T*> reg_buffer(n_regs, nullptr);
    for (int r = 0; r < n_in + n_const; ++r) {
      if (r < n_in && data[r] != nullptr) continue;
      reg_buffer[r] = buffer(r);
      std::fill(reg_buffer[r], reg_buffer[r] + block, splat[r]);
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

bool RunFusedBlocks(const ScalarProgram& program, const Shape& shape,
                    std::span<const Tensor> inputs, std::vector<Tensor>& outputs) {
  // The compute type: the first instruction's that is not a comparison's bool.
  const auto first =
      std::find_if(program.instrs.begin(), program.instrs.end(),
                   [](const ScalarProgram::Instr& i) { return i.dtype != DType::kBool; });
  if (first == program.instrs.end()) return false;
  const DType d = first->dtype;
  if (d == DType::kFloat64) return Run<double>(program, shape, inputs, outputs);
  if (d == DType::kFloat32) return Run<float>(program, shape, inputs, outputs);
  return false;
}

}  // namespace kiln
