// Elemwise kernels on 10^7 float64 elements against the memory-bandwidth floor measured in the
// same run (a STREAM-style copy; the floor of an op is the time to move its bytes at that rate),
// the compiled graphs G1 and G2 in float64 and float32, and G2 in cache (its compute floor).
// Prints Google Benchmark's table, then one BENCH line per case (DESIGN.md section 5).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "core/kiln.h"
#include "core/tensor/parallel.h"

namespace {

constexpr int64_t kN = 10'000'000;
using kiln::ScalarOpKind;

// Every scalar op that takes float64 inputs, with its arity (n-ary add and mul as binary).
std::vector<std::pair<ScalarOpKind, int>> MeasuredOps() {
  std::vector<std::pair<ScalarOpKind, int>> ops;
  for (int i = 0; i < kiln::NumScalarOps(); ++i) {
    const auto kind = static_cast<ScalarOpKind>(i);
    if (kind == ScalarOpKind::kCast || kind == ScalarOpKind::kComposite) continue;
    const int arity = std::max(2, kiln::ScalarOpArity(kind));
    const int n = kiln::ScalarOpArity(kind) == 1 ? 1 : arity;
    std::vector<kiln::DType> dtypes(n, kiln::DType::kFloat64);
    if (kiln::ScalarOutputDType(kiln::ScalarOp(kind), dtypes).ok()) ops.push_back({kind, n});
  }
  return ops;
}
const std::vector<std::pair<ScalarOpKind, int>> kOps = MeasuredOps();

kiln::Tensor Uniform(double lo, double hi, int64_t n = kN) {
  kiln::Tensor t = kiln::Tensor::Empty(kiln::DType::kFloat64, {n});
  double* p = t.data<double>();
  for (int64_t i = 0; i < n; ++i) p[i] = lo + (hi - lo) * ((i * 7919) % 10007) / 10007.0;
  return t;
}

void BM_Elemwise(benchmark::State& state, ScalarOpKind kind, int arity) {
  std::vector<kiln::VariablePtr> vars;
  std::vector<kiln::Tensor> values;
  for (int i = 0; i < arity; ++i) {
    vars.push_back(kiln::dvector().ptr());
    // Inside every op's domain (arcsin, arctanh and erfinv need |x| < 1).
    values.push_back(Uniform(0.1, 0.9));
  }
  kiln::ApplyPtr node = *kiln::Elemwise::Make(kind)->MakeNode(vars);
  std::vector<kiln::Tensor> out(1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(node->op().Perform(*node, values, out));
    out[0] = kiln::Tensor();
  }
  state.counters["bytes"] = (arity + 1) * kN * 8.0;
}

// One read and one write of 10^7 doubles on one core: STREAM's copy, the floor the issue's
// targets are stated against (about 4.8 ms here).
void BM_CopyFloor(benchmark::State& state) {
  kiln::Tensor src = Uniform(0, 1);
  kiln::Tensor dst = kiln::Tensor::Zeros(kiln::DType::kFloat64, {kN});
  for (auto _ : state) {
    std::memcpy(dst.raw_data(), src.raw_data(), src.nbytes());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_CopyFloor)->Unit(benchmark::kMillisecond);

// The same copy split across every core, as the kernels run: the machine's bandwidth limit.
void BM_CopyFloorAllCores(benchmark::State& state) {
  kiln::Tensor src = Uniform(0, 1);
  kiln::Tensor dst = kiln::Tensor::Zeros(kiln::DType::kFloat64, {kN});
  const char* from = static_cast<const char*>(src.raw_data());
  char* to = static_cast<char*>(dst.raw_data());
  for (auto _ : state) {
    kiln::ParallelFor(kN, 1 << 15, [&](int64_t begin, int64_t end) {
      std::memcpy(to + begin * 8, from + begin * 8, (end - begin) * 8);
    });
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_CopyFloorAllCores)->Unit(benchmark::kMillisecond);

// G1, the seed: a + a**10 on [0, 1).
kiln::Var G1(kiln::Var a) { return a + kiln::pow(a, 10); }

// G2 of the runtime issue: exp(-x**2)*sin(x) + log1p(abs(x))*0.5 - tanh(x), on [-2, 2).
kiln::Var G2(kiln::Var x) {
  return kiln::exp(-kiln::pow(x, 2)) * kiln::sin(x) + kiln::log1p(kiln::abs(x)) * 0.5 -
         kiln::tanh(x);
}

// One compiled graph (G1 or G2, in float64 or float32) on 10^7 elements, fused.
void BM_Graph(benchmark::State& state, kiln::Var (*graph)(kiln::Var), kiln::DType dtype,
              double lo, double hi) {
  kiln::Var x = dtype == kiln::DType::kFloat32 ? kiln::fvector("x") : kiln::dvector("x");
  auto f = *kiln::function({x}, {graph(x)});
  kiln::Tensor v = Uniform(lo, hi).AsType(dtype);
  for (auto _ : state) benchmark::DoNotOptimize((f)({v}));
}
BENCHMARK_CAPTURE(BM_Graph, g1, G1, kiln::DType::kFloat64, 0, 1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Graph, g1_f32, G1, kiln::DType::kFloat32, 0, 1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Graph, g2, G2, kiln::DType::kFloat64, -2, 2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Graph, g2_f32, G2, kiln::DType::kFloat32, -2, 2)
    ->Unit(benchmark::kMillisecond);

// G2's compute floor: the same function on 16384 elements, in cache and on one core, scaled to
// 10^7 elements on every core.
void BM_G2InCache(benchmark::State& state) {
  constexpr int64_t kSmall = 16384;
  kiln::Var x = kiln::dvector("x");
  auto f = *kiln::function({x}, {G2(x)});
  kiln::Tensor v = Uniform(-2, 2, kSmall);
  for (auto _ : state) {
    for (int64_t i = 0; i < kN / kSmall / kiln::NumThreads(); ++i) {
      benchmark::DoNotOptimize((f)({v}));
    }
  }
}
BENCHMARK(BM_G2InCache)->Unit(benchmark::kMillisecond);

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
  for (const auto& [kind, arity] : kOps) {
    benchmark::RegisterBenchmark(("BM_Elemwise/" + kiln::ScalarOpName(kind)).c_str(), BM_Elemwise,
                                 kind, arity)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  std::printf("threads=%d\n", kiln::NumThreads());
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder);
  const double copy_ms = recorder.ms_["BM_CopyFloor"];
  const double all_cores_ms = recorder.ms_["BM_CopyFloorAllCores"];
  for (const auto& [kind, arity] : kOps) {
    const std::string name = kiln::ScalarOpName(kind);
    const double kiln_ms = recorder.ms_["BM_Elemwise/" + name];
    // A copy moves 2 arrays; an op with `arity` inputs moves arity + 1.
    for (const auto& [suffix, copy] : {std::pair{"", copy_ms}, {"_allcores", all_cores_ms}}) {
      const double floor_ms = copy * (arity + 1) / 2.0;
      if (kiln_ms > 0 && copy > 0) {
        std::printf("BENCH elemwise_%s%s kiln=%.3f ref=%.3f unit=ms ref_name=floor speedup=%.3f\n",
                    name.c_str(), suffix, kiln_ms, floor_ms, floor_ms / kiln_ms);
      }
    }
  }
  const double seed_ms = recorder.ms_["BM_Graph/g1"];
  if (seed_ms > 0 && copy_ms > 0) {
    std::printf("BENCH seed_reference_1e7 kiln=%.3f ref=%.3f unit=ms ref_name=floor speedup=%.3f\n",
                seed_ms, copy_ms, copy_ms / seed_ms);
  }
  // float32 against Kiln's own float64, same graph, same run.
  for (const char* g : {"g1", "g2"}) {
    const double f64 = recorder.ms_[std::string("BM_Graph/") + g];
    const double f32 = recorder.ms_[std::string("BM_Graph/") + g + "_f32"];
    if (f64 > 0 && f32 > 0) {
      std::printf("BENCH %s_f32_vs_f64 kiln=%.3f ref=%.3f unit=ms ref_name=kiln-float64 "
                  "speedup=%.3f\n", g, f32, f64, f64 / f32);
    }
  }
  benchmark::Shutdown();
  return 0;
}
