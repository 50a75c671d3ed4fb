// Test helper: the large graphs of the robustness tests and the huge-graph benchmark.
#ifndef KILN_TESTS_TESTING_HUGE_GRAPHS_H_
#define KILN_TESTS_TESTING_HUGE_GRAPHS_H_

#include <utility>
#include <vector>

#include "core/kiln.h"

namespace kiln::testing {

// (x, sum(tanh(tanh(...tanh(x))))) with `n` tanh on a float64 vector: n + 1 nodes.
inline std::pair<Var, Var> TanhChain(int n) {
  Var x = dvector("x");
  Var y = x;
  for (int i = 0; i < n; ++i) y = tanh(y);
  return {x, sum(y)};
}

// (x, sum of exp(x + 0.001 i) for i < branches, added pairwise): about 4 nodes per branch.
inline std::pair<Var, Var> WideSum(int branches) {
  Var x = dvector("x");
  std::vector<Var> terms;
  for (int i = 0; i < branches; ++i) terms.push_back(exp(x + 1e-3 * i));
  while (terms.size() > 1) {
    std::vector<Var> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2) next.push_back(terms[i] + terms[i + 1]);
    if (terms.size() % 2 == 1) next.push_back(terms.back());
    terms = std::move(next);
  }
  return {x, sum(terms[0])};
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_HUGE_GRAPHS_H_
