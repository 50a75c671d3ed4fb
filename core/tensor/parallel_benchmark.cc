// ParallelFor's own cost: the latency of one call whose work is trivial (n = 2, so 2 chunks
// on 2 threads), which is what a batch-1 network's short kernels pay on every op. Cases:
//   BM_ParallelForTrivial           calls back to back (the workers never idle)
//   BM_ParallelForAfterSerial/20    20 µs of serial work on the caller before each call (an op's
//                                   serial part between two parallel kernels); the call alone timed
//   BM_ParallelForAfterSerial/200   the same after 200 µs: longer than the workers' spin, so
//                                   they sleep and each call pays a wake-up
//   BM_ParallelForBusyChunks/20     2 chunks of 5 µs of work each, after 20 µs (/200: 200 µs):
//                                   5 µs if the worker takes one chunk, 10 µs if the caller
//                                   runs both (trivial chunks above are done by the caller alone
//                                   when the worker is slower to notice the call than they last)
//   BM_InlineTrivial                the same work called directly: the floor
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include "core/tensor/parallel.h"

namespace {

using Clock = std::chrono::steady_clock;

// Spins for `us` microseconds: work that takes a known time.
void BusyFor(int64_t us) {
  const auto until = Clock::now() + std::chrono::microseconds(us);
  while (Clock::now() < until) {
  }
}

// One call of ParallelFor over two indices, each chunk writing its end into out[begin].
void TrivialCall(int64_t* out) {
  kiln::ParallelFor(2, 1, [out](int64_t begin, int64_t end) { out[begin] = end; });
  benchmark::DoNotOptimize(out);
}

void BM_ParallelForTrivial(benchmark::State& state) {
  int64_t out[2] = {0, 0};
  for (auto _ : state) TrivialCall(out);
}
BENCHMARK(BM_ParallelForTrivial);

void BM_ParallelForAfterSerial(benchmark::State& state) {
  int64_t out[2] = {0, 0};
  for (auto _ : state) {
    BusyFor(state.range(0));
    const auto start = Clock::now();
    TrivialCall(out);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
  }
}
// Fixed counts: with only the call timed, a time target would mean minutes of serial work.
BENCHMARK(BM_ParallelForAfterSerial)->Arg(20)->Iterations(20000)->UseManualTime();
BENCHMARK(BM_ParallelForAfterSerial)->Arg(200)->Iterations(3000)->UseManualTime();

void BM_ParallelForBusyChunks(benchmark::State& state) {
  for (auto _ : state) {
    BusyFor(state.range(0));
    const auto start = Clock::now();
    kiln::ParallelFor(2, 1, [](int64_t, int64_t) { BusyFor(5); });
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
  }
}
BENCHMARK(BM_ParallelForBusyChunks)->Arg(20)->Iterations(20000)->UseManualTime();
BENCHMARK(BM_ParallelForBusyChunks)->Arg(200)->Iterations(3000)->UseManualTime();

void BM_InlineTrivial(benchmark::State& state) {
  int64_t out[2] = {0, 0};
  for (auto _ : state) {
    for (int64_t i = 0; i < 2; ++i) out[i] = i + 1;
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_InlineTrivial);

}  // namespace

BENCHMARK_MAIN();
