#include "core/graph/structural_names.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"

namespace kiln {

absl::StatusOr<std::string> StructuralNames::NameOf(const Variable* v) {
  struct Frame {
    const Apply* node;
    int next;
  };
  std::vector<Frame> stack;
  // A variable named already, a leaf (named now) or a node's output (its node pushed).
  auto visit = [&](const Variable* x) -> absl::Status {
    if (names_.contains(x)) return absl::OkStatus();
    if (x->is_constant() || x->owner() == nullptr) {
      ASSIGN_OR_RETURN(std::string name, leaf_(*x));
      names_[x] = std::move(name);
      return absl::OkStatus();
    }
    stack.push_back({x->owner(), 0});
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(visit(v));
  std::vector<const std::string*> inputs;
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (done_.contains(f.node)) {
      stack.pop_back();
      continue;
    }
    if (f.next < f.node->num_inputs()) {
      RETURN_IF_ERROR(visit(f.node->inputs()[f.next++].get()));
      continue;
    }
    // Every input named: the node's definition, numbered by its text.
    inputs.clear();
    for (const VariablePtr& in : f.node->inputs()) inputs.push_back(&names_.at(in.get()));
    std::string definition = define_(*f.node, inputs);
    const auto [it, added] =
        definitions_.emplace(std::move(definition), static_cast<int>(definitions_.size()));
    if (added) on_new_(it->second, it->first);
    done_.insert(f.node);
    for (int o = 0; o < f.node->num_outputs(); ++o) {
      names_[f.node->output_ptr(o)] = absl::StrCat("n", it->second, ".", o);
    }
    stack.pop_back();
  }
  return names_.at(v);
}

}  // namespace kiln
