#include "core/grad/node_budget.h"

#include "absl/strings/str_cat.h"

namespace kiln {

void NodeBudget::Existing(const std::vector<Var>& vars) {
  for (const Var& v : vars) Walk(v, /*count=*/false).IgnoreError();
}

absl::Status NodeBudget::Count(const std::vector<Var>& vars) {
  for (const Var& v : vars) {
    if (absl::Status s = Walk(v, /*count=*/true); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status NodeBudget::Walk(const Var& v, bool count) {
  if (!v.ok() || v->owner() == nullptr || seen_.count(v->owner())) return absl::OkStatus();
  // The variables shown stay alive, so that a counted node's address is not reused by a new one.
  anchors_.push_back(v.ptr());
  std::vector<Apply*> stack = {v->owner()};
  seen_.insert(v->owner());
  while (!stack.empty()) {
    Apply* node = stack.back();
    stack.pop_back();
    if (count) {
      ++created_;
      if (max_nodes_ > 0 && created_ > max_nodes_) {
        return absl::ResourceExhaustedError(absl::StrCat(
            what_, " grew past ", max_nodes_, " new nodes (in kiln-server, 5 x --max_nodes)"));
      }
      if (interrupt_ && created_ % 256 == 0) {
        if (absl::Status s = interrupt_(); !s.ok()) return s;
      }
    }
    for (const VariablePtr& in : node->inputs()) {
      Apply* owner = in->owner();
      if (owner != nullptr && seen_.insert(owner).second) stack.push_back(owner);
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln
