// Optimize (FAST_RUN) times: the seed graphs, a 2-layer MLP's training graph (cost and
// gradients) and random expression graphs of 1,000, 10,000 and 100,000 nodes. Prints BENCH lines
// (DESIGN.md): kiln in ms; the 10k and 100k lines take the 1k time as their reference.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "core/kiln.h"
#include "core/passes/random_graph.h"

namespace kiln {
namespace {

// The fastest of `repeats` optimizations of fresh copies of the graph, in ms.
double OptimizeMs(const std::vector<Var>& inputs, const std::vector<Var>& outputs, int repeats,
                  int* nodes_before = nullptr, int* nodes_after = nullptr) {
  std::vector<VariablePtr> ins, outs;
  for (const Var& v : inputs) ins.push_back(v.ptr());
  for (const Var& v : outputs) outs.push_back(v.ptr());
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto fg = FunctionGraph::Make(ins, outs);
    if (!fg.ok()) {
      std::fprintf(stderr, "%s\n", fg.status().ToString().c_str());
      std::exit(1);
    }
    if (nodes_before) *nodes_before = (*fg)->num_nodes();
    const auto start = std::chrono::steady_clock::now();
    RewriteOptions options;
    options.trace = false;  // the per-rule counts and times are kept
    absl::StatusOr<RewriteReport> report = optimize(**fg, options);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!report.ok()) {
      std::fprintf(stderr, "%s\n", report.status().ToString().c_str());
      std::exit(1);
    }
    if (nodes_after) *nodes_after = (*fg)->num_nodes();
    if (std::getenv("KILN_PROFILE") != nullptr) std::printf("%s", report->ToString().c_str());
    best = std::min(best, ms);
  }
  return best;
}

void Bench(const char* name, double ms, double ref = -1, const char* ref_name = nullptr) {
  if (ref < 0) {
    std::printf("BENCH %s kiln=%.3f unit=ms\n", name, ms);
  } else {
    std::printf("BENCH %s kiln=%.3f ref=%.3f unit=ms ref_name=%s speedup=%.3f\n", name, ms, ref,
                ref_name, ref / ms);
  }
}

}  // namespace
}  // namespace kiln

int main() {
  using namespace kiln;
  {
    Var a = dvector("a"), x = dmatrix("x"), y = dmatrix("y");
    Bench("optimize_seed", OptimizeMs({a, x, y}, {a + pow(a, 10), x * y / y}, 50));
  }
  {
    Var X = dmatrix("X"), W1 = dmatrix("W1"), b1 = dvector("b1"), W2 = dmatrix("W2"),
        b2 = dvector("b2");
    Var t = lvector("t");
    Var cost = mean(categorical_crossentropy(softmax(dot(tanh(dot(X, W1) + b1), W2) + b2), t));
    std::vector<Var> outs = {cost};
    const absl::StatusOr<std::vector<Var>> grads = grad(cost, {W1, b1, W2, b2});
    if (!grads.ok()) return 1;
    outs.insert(outs.end(), grads->begin(), grads->end());
    int before = 0, after = 0;
    const double ms = OptimizeMs({X, W1, b1, W2, b2, t}, outs, 20, &before, &after);
    std::printf("# mlp training graph: %d nodes -> %d\n", before, after);
    Bench("optimize_mlp_train", ms);
  }
  double base = 0;
  std::vector<int> sizes = {1000, 10000, 100000};
  if (const char* env = std::getenv("KILN_OPTIMIZE_SIZES")) {  // e.g. "1000,30000" to explore
    sizes.clear();
    for (const char* p = env; *p != 0;) {
      sizes.push_back(std::atoi(p));
      while (*p != 0 && *p != ',') ++p;
      if (*p == ',') ++p;
    }
  }
  for (int n : sizes) {
    auto [in, out] = RandomGraph(n, 7, /*bounded=*/true);
    int before = 0, after = 0;
    const double ms = OptimizeMs(in, out, n >= 100000 ? 1 : 3, &before, &after);
    std::printf("# random graph: %d nodes -> %d\n", before, after);
    const std::string name = "optimize_random_" + std::to_string(n / 1000) + "k";
    if (n == 1000) {
      base = ms;
      Bench(name.c_str(), ms);
    } else {
      Bench(name.c_str(), ms, base, "optimize_random_1k");
    }
  }
  return 0;
}
