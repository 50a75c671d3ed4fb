// The order a function's nodes run in, and the branch each needs, so that IfElse is lazy: a node
// whose values only one branch of an IfElse uses runs only when that branch is chosen.
#ifndef KILN_CORE_RUNTIME_LAZY_SCHEDULE_H_
#define KILN_CORE_RUNTIME_LAZY_SCHEDULE_H_

#include <vector>

#include "core/graph/fgraph.h"

namespace kiln {

// "The condition `cond` chose the then (or else) branch", within the guard `parent` (-1: none).
// IfElses on one condition (a user's, and those its shape and gradient make) share guards.
struct BranchGuard {
  const Variable* cond;
  bool then;
  int parent;
};

struct LazySchedule {
  // Every node after the nodes computing its inputs and after the conditions of its guards.
  std::vector<const Apply*> order;
  // Per position in `order`: the guard its node needs to run (-1: it always runs).
  std::vector<int> guard;
  std::vector<BranchGuard> guards;
};

// IfElse branches nested deeper than this run eagerly (still correct, no longer lazy), which
// keeps scheduling linear in the graph's size times this depth.
inline constexpr int kMaxLazyDepth = 32;

// The lazy schedule of fg: a node's guard is the innermost branch that every use of its values
// lies in (an IfElse's then or else value, or a node needing that branch), found in one reverse
// walk; then a topological order that also puts each guard's condition before the nodes it
// guards.
LazySchedule ScheduleLazily(const FunctionGraph& fg);

}  // namespace kiln

#endif  // KILN_CORE_RUNTIME_LAZY_SCHEDULE_H_
