#include "core/graph/traversal.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/graph/op.h"

namespace kiln {
namespace {

// Open-addressing sets: no allocation per element, which dominates walks of large graphs.
using VarSet = absl::flat_hash_set<const Variable*>;

VarSet ToSet(std::span<const VariablePtr> vars) {
  VarSet set;
  for (const VariablePtr& v : vars) set.insert(v.get());
  return set;
}

// Depth-first post-order over variables: visit(v) runs after every input of v's owner was
// visited. The owners of variables for which stop(v) holds are not entered.
template <typename Stop, typename F>
void PostOrder(std::span<const VariablePtr> outputs, const Stop& stop, F&& visit) {
  VarSet seen;
  std::vector<std::pair<Variable*, bool>> stack;  // (variable, inputs already pushed)
  for (auto it = outputs.rbegin(); it != outputs.rend(); ++it) stack.push_back({it->get(), false});
  while (!stack.empty()) {
    auto [v, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      visit(v);
      continue;
    }
    if (!seen.insert(v).second) continue;
    stack.push_back({v, true});
    if (v->owner() == nullptr || stop(v)) continue;
    const auto& inputs = v->owner()->inputs();
    for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) {
      if (!seen.contains(it->get())) stack.push_back({it->get(), false});
    }
  }
}

auto InSet(const VarSet& set) {
  return [&set](const Variable* v) { return set.contains(v); };
}

}  // namespace

std::vector<Apply*> ToposortUntil(std::span<const VariablePtr> outputs,
                                  const std::function<bool(const Variable*)>& stop) {
  absl::flat_hash_set<const Apply*> emitted;
  std::vector<Apply*> order;
  PostOrder(outputs, stop, [&](Variable* v) {
    Apply* node = v->owner();
    if (node != nullptr && !stop(v) && emitted.insert(node).second) order.push_back(node);
  });
  return order;
}

std::vector<Variable*> Ancestors(std::span<const VariablePtr> outputs,
                                 std::span<const VariablePtr> blockers) {
  std::vector<Variable*> result;
  const VarSet stop = ToSet(blockers);
  PostOrder(outputs, InSet(stop), [&](Variable* v) { result.push_back(v); });
  return result;
}

std::vector<Variable*> GraphInputs(std::span<const VariablePtr> outputs,
                                   std::span<const VariablePtr> blockers) {
  const VarSet stop = ToSet(blockers);
  std::vector<Variable*> result;
  PostOrder(outputs, InSet(stop), [&](Variable* v) {
    if (v->owner() == nullptr || stop.contains(v)) result.push_back(v);
  });
  return result;
}

std::vector<Apply*> IoToposort(std::span<const VariablePtr> inputs,
                               std::span<const VariablePtr> outputs) {
  const VarSet stop = ToSet(inputs);
  return ToposortUntil(outputs, InSet(stop));
}

std::vector<VariablePtr> Clone(std::span<const VariablePtr> inputs,
                               std::span<const VariablePtr> outputs, bool copy_inputs,
                               CloneMap* memo) {
  for (const VariablePtr& in : inputs) {
    if (!memo->contains(in.get())) (*memo)[in.get()] = copy_inputs ? in->CloneDetached() : in;
  }
  // Variables already in the memo are substituted, so the walk stops at them.
  VarSet stop;
  for (const auto& entry : *memo) stop.insert(entry.first);
  auto lookup = [&](const VariablePtr& v) -> VariablePtr {
    auto it = memo->find(v.get());
    return it != memo->end() ? it->second : v;  // leaves outside the inputs are shared
  };
  for (Apply* node : ToposortUntil(outputs, InSet(stop))) {
    std::vector<VariablePtr> new_inputs;
    for (const VariablePtr& in : node->inputs()) new_inputs.push_back(lookup(in));
    std::vector<TypePtr> types;
    for (int i = 0; i < node->num_outputs(); ++i) types.push_back(node->output_ptr(i)->type());
    ApplyPtr copy = Apply::Make(node->op_ptr(), std::move(new_inputs), types);
    for (int i = 0; i < node->num_outputs(); ++i) {
      VariablePtr out = copy->output(i);
      out->set_name(node->output_ptr(i)->name());
      memo->try_emplace(node->output_ptr(i), std::move(out));  // a substitution wins
    }
  }
  std::vector<VariablePtr> result;
  for (const VariablePtr& out : outputs) result.push_back(lookup(out));
  return result;
}

absl::StatusOr<std::vector<VariablePtr>> CloneReplace(
    std::span<const VariablePtr> outputs,
    const std::vector<std::pair<VariablePtr, VariablePtr>>& replace) {
  CloneMap memo;
  for (const auto& [old_var, new_var] : replace) {
    if (!old_var->type()->Equals(*new_var->type())) {
      return absl::InvalidArgumentError(
          absl::StrCat("clone_replace: the replacement ", new_var->ToString(), " has type ",
                       new_var->type()->ToString(), " but ", old_var->ToString(), " has type ",
                       old_var->type()->ToString()));
    }
    memo[old_var.get()] = new_var;
  }
  return Clone({}, outputs, /*copy_inputs=*/false, &memo);
}

bool EqualComputations(std::span<const VariablePtr> xs, std::span<const VariablePtr> ys,
                       std::span<const VariablePtr> in_xs, std::span<const VariablePtr> in_ys) {
  if (xs.size() != ys.size() || in_xs.size() != in_ys.size()) return false;
  absl::flat_hash_map<const Variable*, const Variable*> x_to_y, y_to_x;
  for (size_t i = 0; i < in_xs.size(); ++i) {
    x_to_y[in_xs[i].get()] = in_ys[i].get();
    y_to_x[in_ys[i].get()] = in_xs[i].get();
  }
  std::vector<std::pair<const Variable*, const Variable*>> stack;
  for (size_t i = 0; i < xs.size(); ++i) stack.push_back({xs[i].get(), ys[i].get()});
  while (!stack.empty()) {
    auto [x, y] = stack.back();
    stack.pop_back();
    auto fx = x_to_y.find(x);
    auto fy = y_to_x.find(y);
    if (fx != x_to_y.end() || fy != y_to_x.end()) {
      if (fx == x_to_y.end() || fy == y_to_x.end() || fx->second != y || fy->second != x) {
        return false;
      }
      continue;
    }
    if (!x->type()->Equals(*y->type())) return false;
    if (x->is_constant() || y->is_constant()) {
      if (!x->is_constant() || !y->is_constant()) return false;
      if (!static_cast<const Constant*>(x)->data().BitwiseEquals(
              static_cast<const Constant*>(y)->data())) {
        return false;
      }
    } else if (x->owner() == nullptr || y->owner() == nullptr) {
      if (x != y) return false;
    } else {
      const Apply* nx = x->owner();
      const Apply* ny = y->owner();
      if (x->index() != y->index() || !(nx->op() == ny->op()) ||
          nx->num_inputs() != ny->num_inputs()) {
        return false;
      }
      for (int i = 0; i < nx->num_inputs(); ++i) {
        stack.push_back({nx->inputs()[i].get(), ny->inputs()[i].get()});
      }
    }
    x_to_y[x] = y;
    y_to_x[y] = x;
  }
  return true;
}

}  // namespace kiln
