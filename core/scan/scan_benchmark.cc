// Scan's speed, printed as "<case> <value>" lines for tests/bench/scan_vs_numpy.py, which times
// the same loops in NumPy in the same run and prints the BENCH lines:
//   scan_rnn_step: an Elman RNN (hidden 256, sequence 1000, batch 32), forward and backward
//     through time, ms per call;
//   scan_overhead_per_step: 100,000 steps of a scalar add, us per step.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "core/kiln.h"
#include "core/scan/scan.h"

namespace kiln {
namespace {

Tensor Random(Shape shape, double scale, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  Tensor t = Tensor::Empty(DType::kFloat64, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<double>()[i] = normal(rng);
  return t;
}

void Check(const absl::Status& s) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s\n", s.ToString().c_str());
  std::exit(1);
}

double BestSeconds(const Function& f, const std::vector<Tensor>& args, int repeats) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<Tensor>> out = f(args);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!out.ok()) {
      std::fprintf(stderr, "%s\n", std::string(out.status().message()).c_str());
      std::exit(1);
    }
    best = std::min(best, s);
  }
  return best;
}

void Run() {
  const Var X = tensor3("X"), h0 = dmatrix("h0"), W = dmatrix("W"), U = dmatrix("U");
  ScanArgs args;
  args.sequences = {{X}};
  args.outputs_info = {{h0}};
  args.non_sequences = {W, U};
  ScanResult rnn = *scan(
      [](const std::vector<Var>& a) {
        return ScanStep{{tanh(dot(a[0], a[3]) + dot(a[1], a[2]))}};
      },
      args);
  const Var cost = sum(rnn.outputs[0] * rnn.outputs[0]);
  std::vector<Var> outs = {cost};
  absl::StatusOr<std::vector<Var>> grads = grad(cost, std::vector<Var>{W, U});
  Check(grads.status());
  for (const Var& g : *grads) outs.push_back(g);
  absl::StatusOr<Function> compiled = function({X, h0, W, U}, outs);
  Check(compiled.status());
  Function f = *std::move(compiled);
  const std::vector<Tensor> pt = {Random({1000, 32, 256}, 1.0, 1), Random({32, 256}, 1.0, 2),
                                  Random({256, 256}, 0.05, 3), Random({256, 256}, 0.05, 4)};
  std::printf("scan_rnn_step %.3f\n", 1e3 * BestSeconds(f, pt, 3));

  const Var n = lscalar("n");
  ScanArgs counting;
  counting.outputs_info = {{constant(0.0)}};
  counting.n_steps = n;
  ScanResult adds = *scan(
      [](const std::vector<Var>& a) { return ScanStep{{a[0] + 1.0}}; }, counting);
  Function g = *function({n}, {subtensor(adds.outputs[0], {-1})});
  const int64_t steps = 100000;
  const Tensor n_value = *Tensor::FromValues<int64_t>(DType::kInt64, {}, std::vector{steps});
  std::printf("scan_overhead_per_step %.4f\n", 1e6 * BestSeconds(g, {n_value}, 5) / steps);
}

}  // namespace
}  // namespace kiln

int main() {
  kiln::Run();
  return 0;
}
