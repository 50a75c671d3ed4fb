// Random expression graphs for the optimizer's benchmark and tests.
#ifndef KILN_CORE_PASSES_RANDOM_GRAPH_H_
#define KILN_CORE_PASSES_RANDOM_GRAPH_H_

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/constructors.h"
#include "core/graph/var.h"
#include "core/ops/math.h"

namespace kiln {

// A random expression graph of about n Elemwise nodes over 8 matrix inputs; every node feeds a
// later one, and the last 4 are the outputs. `bounded` picks forms whose values stay finite on
// inputs in [-2, 2] (for numeric checks: where values overflow, an optimized graph may give a
// finite result where the original gave inf - inf = nan).
inline std::pair<std::vector<Var>, std::vector<Var>> RandomGraph(int n, uint64_t seed,
                                                                 bool bounded = false) {
  std::mt19937_64 rng(seed);
  std::vector<Var> inputs, pool;
  for (int i = 0; i < 8; ++i) inputs.push_back(dmatrix("x" + std::to_string(i)));
  pool = inputs;
  auto pick = [&] {
    // Mostly recent values, so that the graph is deep as well as wide.
    const size_t back = std::min<size_t>(pool.size(), 1 + rng() % 16);
    return pool[pool.size() - back + rng() % back];
  };
  // The bounded forms make about three nodes each.
  const int steps = bounded ? n / 3 : n;
  while (static_cast<int>(pool.size()) - 8 < steps) {
    const Var a = pick(), b = pick();
    if (bounded) {
      switch (rng() % 6) {
        case 0:
          pool.push_back((a + b) * 0.5);
          break;
        case 1:
          pool.push_back(a * tanh(b));
          break;
        case 2:
          pool.push_back(sin(a) - b * 0.5);
          break;
        case 3:
          pool.push_back((a * (b * b + 1.0)) / (b * b + 1.0));
          break;
        case 4:
          pool.push_back(log(1.0 + a * a));
          break;
        default:
          pool.push_back(tanh(sqr(a)) + 1.0);
          break;
      }
      continue;
    }
    switch (rng() % 9) {
      case 0:
        pool.push_back(a + b);
        break;
      case 1:
        pool.push_back(a * b);
        break;
      case 2:
        pool.push_back(a - b);
        break;
      case 3:
        pool.push_back(exp(a));
        break;
      case 4:
        pool.push_back(tanh(a));
        break;
      case 5:
        pool.push_back(a * 2.0);
        break;
      case 6:
        pool.push_back(a * b / b);
        break;
      case 7:
        pool.push_back(log(1.0 + a * a));
        break;
      default:
        pool.push_back(sqr(a) + 1.0);
        break;
    }
  }
  return {inputs, {pool.end() - 4, pool.end()}};
}

}  // namespace kiln

#endif  // KILN_CORE_PASSES_RANDOM_GRAPH_H_
