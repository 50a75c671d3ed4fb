// dot of two 1024x1024 float64 matrices through Kiln's op against OpenBLAS's dgemm called
// directly, in the same run. Prints Google Benchmark's table, then a BENCH line (DESIGN.md 5).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdio>
#include <map>

#include "core/kiln.h"

namespace {

constexpr int64_t kN = 1024;

kiln::Tensor Filled(double seed) {
  kiln::Tensor t = kiln::Tensor::Empty(kiln::DType::kFloat64, {kN, kN});
  double* p = t.data<double>();
  for (int64_t i = 0; i < kN * kN; ++i) p[i] = seed + (i % 97) * 0.01;
  return t;
}

void BM_KilnDot(benchmark::State& state) {
  kiln::ApplyPtr node = *std::make_shared<kiln::Dot>()
                             ->MakeNode({kiln::dmatrix().ptr(), kiln::dmatrix().ptr()});
  std::vector<kiln::Tensor> in = {Filled(1), Filled(2)}, out(1);
  for (auto _ : state) benchmark::DoNotOptimize(node->op().Perform(*node, in, out));
}
BENCHMARK(BM_KilnDot)->Unit(benchmark::kMillisecond);

void BM_OpenBlasDgemm(benchmark::State& state) {
  kiln::Tensor a = Filled(1), b = Filled(2),
               c = kiln::Tensor::Zeros(kiln::DType::kFloat64, {kN, kN});
  for (auto _ : state) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1.0, a.data<double>(), kN,
                b.data<double>(), kN, 0.0, c.data<double>(), kN);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_OpenBlasDgemm)->Unit(benchmark::kMillisecond);

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
  const double kiln_ms = recorder.ms_["BM_KilnDot"], blas_ms = recorder.ms_["BM_OpenBlasDgemm"];
  if (kiln_ms > 0 && blas_ms > 0) {
    const double gflop = 2.0 * kN * kN * kN / 1e9;
    std::printf("BENCH gemm_1024 kiln=%.2f ref=%.2f unit=GFLOP/s ref_name=openblas speedup=%.3f\n",
                gflop / (kiln_ms / 1e3), gflop / (blas_ms / 1e3), blas_ms / kiln_ms);
  }
  benchmark::Shutdown();
  return 0;
}
