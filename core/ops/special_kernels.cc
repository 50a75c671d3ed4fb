// The Elemwise kernels of the special-function scalar ops: each element through the double
// function of special_scalar.h (float32 computed in double and rounded, as scipy's float loops),
// over broadcast, strided inputs, split across cores in rounds between which the call's
// interrupt is polled.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ops/elemwise_loops.h"
#include "core/ops/special_fns.h"
#include "core/ops/special_scalar.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/parallel.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

using K = ScalarOpKind;
constexpr int kMaxArity = 5;
// The most elements a chunk takes (special functions cost hundreds of cycles an element).
constexpr int64_t kGrain = 2048;
// An element costs from tens of nanoseconds to milliseconds (hyp2f1 may sum 10^6 terms), so
// rounds are sized by the time their elements took: the first round times one element on this
// thread, each next one aims at kRoundTime (growing at most kGrowth-fold, and at least one
// element a thread), and its chunks at kChunkTime of one thread's work, so that a cancelled
// call stops within a round: about 2 ms, or one element's time where elements are slower.
constexpr int64_t kGrowth = 64;
constexpr double kRoundTime = 2e-3, kChunkTime = 1e-4;

// Runs fn(begin, end) over [0, n) in timed rounds, polling the call's interrupt after each.
template <typename Fn>
absl::Status RunRounds(int64_t n, Fn fn) {
  using Clock = std::chrono::steady_clock;
  const int threads = NumThreads();
  int64_t next = 1, grain = n;  // the first round runs inline
  for (int64_t first = 0; first < n;) {
    const int64_t count = std::min(next, n - first);
    const Clock::time_point start = Clock::now();
    ParallelFor(count, grain, [&](int64_t begin, int64_t end) { fn(first + begin, first + end); });
    first += count;
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    RETURN_IF_ERROR(PollInterrupt());
    // One element's time on one thread (every thread busy when the round ran in parallel).
    const bool parallel = count >= 2 * grain && threads > 1;
    const double each = std::max(seconds, 1e-7) * (parallel ? threads : 1) / double(count);
    grain = std::clamp<int64_t>(static_cast<int64_t>(std::min(kChunkTime / each, 1e15)), 1,
                                kGrain);
    const auto timed = static_cast<int64_t>(std::min(kRoundTime * threads / each, 1e15));
    next = std::max<int64_t>(threads, std::min(timed, count * kGrowth));
  }
  return absl::OkStatus();
}

// Special function `kind` of one element's arguments.
double Eval(K kind, const double* v) {
  namespace s = special;
  switch (kind) {
    case K::kTriGamma:
      return s::TriGamma(v[0]);
    case K::kPolygamma:
      return s::Polygamma(v[0], v[1]);
    case K::kOwensT:
      return s::OwensT(v[0], v[1]);
    case K::kGammaInc:
      return s::GammaInc(v[0], v[1]);
    case K::kGammaIncC:
      return s::GammaIncC(v[0], v[1]);
    case K::kGammaIncDer:
      return s::GammaIncDer(v[0], v[1]);
    case K::kGammaIncCDer:
      return s::GammaIncCDer(v[0], v[1]);
    case K::kGammaU:
      return s::GammaU(v[0], v[1]);
    case K::kGammaL:
      return s::GammaL(v[0], v[1]);
    case K::kGammaIncInv:
      return s::GammaIncInv(v[0], v[1]);
    case K::kGammaIncCInv:
      return s::GammaIncCInv(v[0], v[1]);
    case K::kBetaInc:
      return s::BetaInc(v[0], v[1], v[2]);
    case K::kBetaIncDer:
      return s::BetaIncDer(v[0], v[1], v[2], v[3] != 0);
    case K::kBetaIncInv:
      return s::BetaIncInv(v[0], v[1], v[2]);
    case K::kJv:
      return s::Jv(v[0], v[1]);
    case K::kIv:
      return s::Iv(v[0], v[1]);
    case K::kIve:
      return s::Ive(v[0], v[1]);
    case K::kKve:
      return s::Kve(v[0], v[1]);
    case K::kHyp2F1:
      return s::Hyp2F1(v[0], v[1], v[2], v[3]);
    case K::kHyp2F1Der:
      return s::Hyp2F1Der(v[0], v[1], v[2], v[3], static_cast<int>(v[4]));
    default:
      return std::nan("");
  }
}

// hyp2f1_der's wrt must be 0, 1 or 2 everywhere (Aesara raises ValueError).
template <typename T>
absl::Status CheckWrt(const std::string& name, const Tensor& wrt) {
  const Tensor c = wrt.Contiguous();
  const T* p = c.data<T>();
  for (int64_t i = 0; i < c.size(); ++i) {
    if (!(p[i] == T(0) || p[i] == T(1) || p[i] == T(2))) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": hyp2f1_der's input 4 (wrt) must be 0, 1 or 2; got ", double(p[i])));
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status Run(K kind, const std::string& name, std::span<const Tensor> in, const Shape& shape,
                 Tensor& out) {
  if (kind == K::kHyp2F1Der) {
    if (absl::Status s = CheckWrt<T>(name, in[4]); !s.ok()) return s;
  }
  const size_t n = in.size();
  std::vector<loops::Operand<T>> ops;
  for (const Tensor& t : in) ops.push_back(loops::MakeOperand<T>(t, shape));
  Shape unused;
  unused.assign(shape.size(), 0);
  std::array<const Shape*, kMaxArity> strides;
  std::array<int64_t, kMaxArity> inner{};  // each operand's stride along the innermost dim
  for (size_t k = 0; k < kMaxArity; ++k) {
    strides[k] = k < n ? &ops[k].strides : &unused;
    if (!shape.empty()) inner[k] = strides[k]->back();
  }
  out = Tensor::Empty(in[0].dtype(), shape);
  T* o = out.data<T>();
  return RunRounds(ShapeSize(shape), [&](int64_t begin, int64_t end) {
    loops::ForEachRun<kMaxArity>(
        shape, strides, begin, end,
        [&](int64_t flat, int64_t count, const std::array<int64_t, kMaxArity>& off) {
          double v[kMaxArity] = {};
          for (int64_t i = 0; i < count; ++i) {
            for (size_t k = 0; k < n; ++k) v[k] = double(ops[k].data[off[k] + i * inner[k]]);
            o[flat + i] = static_cast<T>(Eval(kind, v));
          }
        });
  });
}

}  // namespace

absl::Status RunSpecialFn(ScalarOpKind kind, const std::string& name, DType compute,
                          std::span<const Tensor> in, const Shape& shape, Tensor& out) {
  if (!IsSpecialFn(kind) || static_cast<int>(in.size()) != ScalarOpArity(kind)) {
    return absl::InternalError(
        absl::StrCat(name, ": not a special function of ", in.size(), " inputs"));
  }
  switch (compute) {
    case DType::kFloat32:
      return Run<float>(kind, name, in, shape, out);
    case DType::kFloat64:
      return Run<double>(kind, name, in, shape, out);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": no kernel for dtype ", DTypeName(compute), " (float32, float64)"));
  }
}

}  // namespace kiln
