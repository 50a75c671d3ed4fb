// Elemwise reference kernel on the seed's a + a**10 (10^6 float64), against the memory floor
// (a memcpy of the bytes the graph must at least read and write), measured in the same run.
// Prints Google Benchmark's table, then one BENCH line per case (DESIGN.md section 5).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "core/kiln.h"

namespace {

constexpr int64_t kN = 1'000'000;

void BM_SeedReference(benchmark::State& state) {
  kiln::Var a = kiln::vector("a");
  auto f = *kiln::function({a}, {a + kiln::pow(a, 10)});
  kiln::Tensor x = kiln::Tensor::Zeros(kiln::DType::kFloat64, {kN});
  for (auto _ : state) benchmark::DoNotOptimize((f)({x}));
}
BENCHMARK(BM_SeedReference)->Unit(benchmark::kMillisecond);

// One read and one write of the vector: what any implementation must move.
void BM_MemoryFloor(benchmark::State& state) {
  kiln::Tensor src = kiln::Tensor::Zeros(kiln::DType::kFloat64, {kN});
  kiln::Tensor dst = kiln::Tensor::Zeros(kiln::DType::kFloat64, {kN});
  for (auto _ : state) {
    std::memcpy(dst.raw_data(), src.raw_data(), src.nbytes());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_MemoryFloor)->Unit(benchmark::kMillisecond);

// Keeps each benchmark's time per iteration for the BENCH lines.
class Recorder : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) ms_[r.benchmark_name()] = r.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> ms_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder);
  const double kiln_ms = recorder.ms_["BM_SeedReference"];
  const double floor_ms = recorder.ms_["BM_MemoryFloor"];
  if (kiln_ms > 0 && floor_ms > 0) {
    std::printf("BENCH seed_reference_1e6 kiln=%.3f ref=%.3f unit=ms ref_name=floor speedup=%.3f\n",
                kiln_ms, floor_ms, floor_ms / kiln_ms);
  }
  benchmark::Shutdown();
  return 0;
}
