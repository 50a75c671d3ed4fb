#include "core/runtime/lazy_schedule.h"

#include <functional>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "core/graph/op.h"
#include "core/tensor/check.h"

namespace kiln {

LazySchedule ScheduleLazily(const FunctionGraph& fg) {
  const std::vector<Apply*> topo = fg.Toposort();
  const int n = static_cast<int>(topo.size());
  absl::flat_hash_map<const Apply*, int> position;
  bool any_ifelse = false;
  for (int i = 0; i < n; ++i) {
    position[topo[i]] = i;
    any_ifelse |= topo[i]->op().lazy_then_inputs() >= 0;
  }
  LazySchedule s;
  s.guard.assign(n, -1);
  if (!any_ifelse) {
    s.order.assign(topo.begin(), topo.end());
    return s;
  }
  std::vector<int> depth;  // per guard
  std::vector<int> then_guard(n, -1), else_guard(n, -1);
  absl::flat_hash_map<std::tuple<const Variable*, bool, int>, int> guard_of;
  // The innermost guard both a and b lie in (-1 when either always runs).
  auto common = [&](int a, int b) {
    if (a < 0 || b < 0) return -1;
    while (depth[a] > depth[b]) a = s.guards[a].parent;
    while (depth[b] > depth[a]) b = s.guards[b].parent;
    while (a != b) a = s.guards[a].parent, b = s.guards[b].parent;
    return a;
  };
  // Reverse topological order: every use of a node's values is decided before the node.
  for (int i = n - 1; i >= 0; --i) {
    const Apply* node = topo[i];
    bool first = true;
    int g = -1;
    for (const VariablePtr& out : node->outputs()) {
      for (const FunctionGraph::Client& c : fg.clients(out.get())) {
        int need = -1;
        if (c.node != nullptr) {
          const int user = position.at(c.node);
          need = s.guard[user];
          if (const int then_inputs = c.node->op().lazy_then_inputs();
              then_inputs >= 0 && c.index > 0) {
            need = c.index <= then_inputs ? then_guard[user] : else_guard[user];
          }
        }
        g = first ? need : common(g, need);
        first = false;
      }
    }
    s.guard[i] = g;
    if (node->op().lazy_then_inputs() >= 0) {
      const int d = g < 0 ? 0 : depth[g] + 1;
      if (d >= kMaxLazyDepth) {  // eager from here on
        then_guard[i] = else_guard[i] = g;
        continue;
      }
      for (bool then : {true, false}) {
        const Variable* cond = node->inputs()[0].get();
        auto [it, added] = guard_of.try_emplace({cond, then, g}, static_cast<int>(s.guards.size()));
        if (added) {
          s.guards.push_back({cond, then, g});
          depth.push_back(d);
        }
        (then ? then_guard[i] : else_guard[i]) = it->second;
      }
    }
  }
  // Kahn's algorithm, earliest topological position first, with an edge from the node computing
  // each guard's condition to every node under that guard.
  std::vector<std::vector<int>> next(n);
  std::vector<int> waiting(n, 0);
  auto edge = [&](const Variable* v, int to) {
    if (v->owner() == nullptr) return;
    next[position.at(v->owner())].push_back(to);
    ++waiting[to];
  };
  for (int i = 0; i < n; ++i) {
    for (const VariablePtr& in : topo[i]->inputs()) edge(in.get(), i);
    for (int g = s.guard[i]; g >= 0; g = s.guards[g].parent) edge(s.guards[g].cond, i);
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int j : next[i]) {
      if (--waiting[j] == 0) ready.push(j);
    }
  }
  KILN_CHECK(static_cast<int>(order.size()) == n) << "the lazy schedule has a cycle";
  std::vector<int> guard(n);
  for (int k = 0; k < n; ++k) {
    s.order.push_back(topo[order[k]]);
    guard[k] = s.guard[order[k]];
  }
  s.guard = std::move(guard);
  return s;
}

}  // namespace kiln
