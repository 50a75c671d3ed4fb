// RandomVariable's speed, printed as "<case> <value>" lines for tests/bench/random_vs_numpy.py,
// which times NumPy's Generator in the same run and prints the BENCH lines:
//   random_normal_1e7: 10^7 standard normals from a compiled function, ms per call (best of 5).
#include <chrono>
#include <cstdio>

#include "core/kiln.h"
#include "core/ops/random.h"

int main() {
  using namespace kiln;
  const Var rng = tensor(DType::kUInt64, {2}, "rng");
  absl::StatusOr<std::vector<Var>> rv =
      random_variable("normal", rng, {constant(0.0), constant(1.0)}, {10000000});
  absl::StatusOr<Function> f = rv.ok() ? function({rng}, {(*rv)[1]}) : rv.status();
  if (!f.ok()) {
    std::fprintf(stderr, "%s\n", f.status().ToString().c_str());
    return 1;
  }
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<Tensor>> out = (*f)({RngState(r)});
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!out.ok()) {
      std::fprintf(stderr, "%s\n", out.status().ToString().c_str());
      return 1;
    }
    best = std::min(best, ms);
  }
  std::printf("random_normal_1e7 %.3f\n", best);
  return 0;
}
