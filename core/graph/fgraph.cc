#include "core/graph/fgraph.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "core/graph/op.h"
#include "core/tensor/status_macros.h"
#include "core/graph/traversal.h"

namespace kiln {
namespace {

const std::vector<FunctionGraph::Client> kNoClients;

// Aesara's MissingInputError for the first owner-less, non-constant, non-input leaf.
absl::Status CheckNoMissingInputs(const std::vector<VariablePtr>& inputs,
                                  const std::vector<VariablePtr>& outputs) {
  std::unordered_set<const Variable*> given;
  for (const VariablePtr& in : inputs) given.insert(in.get());
  for (Apply* node : IoToposort(inputs, outputs)) {
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Variable* in = node->inputs()[i].get();
      if (in->owner() == nullptr && !in->is_constant() && !given.contains(in)) {
        return absl::InvalidArgumentError(
            absl::StrCat("MissingInputError: Input ", i, " (", in->ToString(),
                         ") of the graph (indices start from 0), used to compute ",
                         node->ToString(), ", was not provided and not given a value."));
      }
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Variable* out = outputs[i].get();
    if (out->owner() == nullptr && !out->is_constant() && !given.contains(out)) {
      return absl::InvalidArgumentError(absl::StrCat("MissingInputError: output ", i, " (",
                                                     out->ToString(),
                                                     ") is not computed from the inputs."));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<FunctionGraph>> FunctionGraph::Make(std::vector<VariablePtr> inputs,
                                                                   std::vector<VariablePtr> outputs,
                                                                   bool clone) {
  std::unordered_set<const Variable*> seen;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->is_constant()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " (", inputs[i]->ToString(),
          ") is a Constant; constants are not function inputs, their value is in the graph"));
    }
    if (!seen.insert(inputs[i].get()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " (", inputs[i]->ToString(), ") is given more than once"));
    }
  }
  RETURN_IF_ERROR(CheckNoMissingInputs(inputs, outputs));

  auto fg = std::unique_ptr<FunctionGraph>(new FunctionGraph());
  if (clone) {
    CloneMap memo;
    outputs = Clone(inputs, outputs, /*copy_inputs=*/true, &memo);
    for (VariablePtr& in : inputs) in = memo.at(in.get());
  }
  fg->inputs_ = std::move(inputs);
  fg->outputs_ = std::move(outputs);
  for (const VariablePtr& in : fg->inputs_) {
    fg->clients_[in.get()];
    fg->input_set_.insert(in.get());
  }
  for (size_t i = 0; i < fg->outputs_.size(); ++i) {
    fg->Import(fg->outputs_[i]);
    fg->AddClient(fg->outputs_[i].get(), {nullptr, static_cast<int>(i)});
  }
  return fg;
}

bool FunctionGraph::IsInput(const Variable* v) const {
  return input_set_.contains(v);
}

const std::vector<FunctionGraph::Client>& FunctionGraph::clients(const Variable* v) const {
  auto it = clients_.find(v);
  return it == clients_.end() ? kNoClients : it->second.list;
}

void FunctionGraph::AddClient(const Variable* v, Client c) {
  ClientList& uses = clients_[v];
  uses.list.push_back(c);
  constexpr size_t kIndexFrom = 16;
  if (uses.position != nullptr) {
    (*uses.position)[c] = uses.list.size() - 1;
  } else if (uses.list.size() > kIndexFrom) {
    uses.position = std::make_unique<std::unordered_map<Client, size_t, ClientHash>>();
    for (size_t i = 0; i < uses.list.size(); ++i) (*uses.position)[uses.list[i]] = i;
  }
}

std::vector<Apply*> FunctionGraph::Toposort() const {
  // Depth-first from the outputs, inputs before their users, marking nodes instead of keeping a
  // visited set: the graph's nodes are its own clones, walked by one thread at a time.
  static std::atomic<uint64_t> walks{0};
  const uint64_t mark = ++walks;
  std::vector<Apply*> order;
  order.reserve(nodes_.size());
  struct Frame {
    Apply* node;
    int next;
  };
  std::vector<Frame> stack;
  auto visit = [&](const Variable* v) {
    Apply* node = v->owner();
    if (node == nullptr || node->walk_mark_ == mark || IsInput(v)) return;
    node->walk_mark_ = mark;
    stack.push_back({node, 0});
  };
  for (const VariablePtr& out : outputs_) {
    visit(out.get());
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.node->num_inputs()) {
        visit(f.node->inputs()[f.next++].get());
        continue;
      }
      order.push_back(f.node);
      stack.pop_back();
    }
  }
  return order;
}

void FunctionGraph::Import(const VariablePtr& v) {
  // Only the new nodes are walked: the walk stops at variables the graph already holds.
  auto known = [this](const Variable* var) { return clients_.contains(var); };
  for (Apply* node : ToposortUntil({&v, 1}, known)) {
    nodes_[node] = node->shared_from_this();
    for (int i = 0; i < node->num_inputs(); ++i) AddClient(node->inputs()[i].get(), {node, i});
    for (int i = 0; i < node->num_outputs(); ++i) clients_[node->output_ptr(i)];
  }
}

void FunctionGraph::RemoveClient(const Variable* v, Client c) {
  auto it = clients_.find(v);
  if (it == clients_.end()) return;
  ClientList& uses = it->second;
  if (uses.position == nullptr) {
    auto pos = std::find(uses.list.begin(), uses.list.end(), c);
    if (pos != uses.list.end()) uses.list.erase(pos);
    return;
  }
  // Indexed: swap the last use into the removed one's place.
  auto found = uses.position->find(c);
  if (found == uses.position->end()) return;
  const size_t at = found->second;
  uses.position->erase(found);
  if (at + 1 != uses.list.size()) {
    uses.list[at] = uses.list.back();
    (*uses.position)[uses.list[at]] = at;
  }
  uses.list.pop_back();
}

void FunctionGraph::PruneFrom(Apply* start) {
  std::vector<Apply*> work = {start};
  while (!work.empty()) {
    Apply* node = work.back();
    work.pop_back();
    auto owned = nodes_.find(node);
    if (owned == nodes_.end()) continue;
    bool used = false;
    for (int i = 0; i < node->num_outputs(); ++i) used |= !clients(node->output_ptr(i)).empty();
    if (used) continue;
    ApplyPtr keep_alive = owned->second;
    nodes_.erase(owned);
    for (int i = 0; i < node->num_outputs(); ++i) clients_.erase(node->output_ptr(i));
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Variable* in = node->inputs()[i].get();
      RemoveClient(in, {node, i});
      if (!clients(in).empty()) continue;
      if (in->owner() != nullptr) {
        work.push_back(in->owner());
      } else if (!IsInput(in)) {
        clients_.erase(in);  // a constant or orphan no longer used
      }
    }
  }
}

namespace {
// True when a variable of type `given` may stand where `wanted` is expected: equal types, or
// tensors of one dtype and rank whose every dim known in `wanted` has that size in `given`
// (Aesara's Type.is_super).
bool Accepts(const Type& wanted, const Type& given) {
  if (wanted.Equals(given)) return true;
  const auto* w = dynamic_cast<const TensorType*>(&wanted);
  const auto* g = dynamic_cast<const TensorType*>(&given);
  if (w == nullptr || g == nullptr || w->dtype() != g->dtype() || w->ndim() != g->ndim()) {
    return false;
  }
  for (int d = 0; d < w->ndim(); ++d) {
    if (w->shape()[d] && w->shape()[d] != g->shape()[d]) return false;
  }
  return true;
}
}  // namespace

bool FunctionGraph::Contains(const Apply* node) const { return nodes_.count(node) > 0; }

absl::Status FunctionGraph::Replace(Variable* old_var, VariablePtr new_var,
                                    std::string_view reason) {
  if (!Accepts(*old_var->type(), *new_var->type())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "replace", reason.empty() ? "" : absl::StrCat(" (", std::string(reason), ")"),
        ": the replacement ", new_var->ToString(), " has type ", new_var->type()->ToString(),
        " but ", old_var->ToString(), " has type ", old_var->type()->ToString()));
  }
  if (old_var == new_var.get()) return absl::OkStatus();
  // The uses are taken before the import, so that new_var may itself be computed from old_var.
  // Rewiring may drop the last reference to old_var: keep it (and its node) alive until done.
  const std::vector<Client> uses = clients(old_var);
  Apply* const old_owner = old_var->owner();
  const ApplyPtr keep_node = old_owner != nullptr ? old_owner->shared_from_this() : nullptr;
  std::optional<VariablePtr> keep_leaf;
  if (old_owner == nullptr) {
    for (const Client& c : uses) {
      if (c.node != nullptr) keep_leaf = c.node->inputs()[c.index];
      if (c.node == nullptr) keep_leaf = outputs_[c.index];
    }
  }
  Import(new_var);
  for (const Client& c : uses) {
    if (c.node == nullptr) {
      outputs_[c.index] = new_var;
    } else {
      c.node->set_input(c.index, new_var);
    }
    AddClient(new_var.get(), c);
    RemoveClient(old_var, c);
  }
  if (old_owner != nullptr) {
    PruneFrom(old_owner);
  } else if (clients(old_var).empty() && !IsInput(old_var)) {
    clients_.erase(old_var);  // an unused constant or orphan leaves the graph
  }
  return absl::OkStatus();
}

absl::Status FunctionGraph::CheckIntegrity() const {
  // Every listed use must be real and listed once; a set of them makes the checks below linear
  // (a variable with n uses made this quadratic when each use searched its list).
  std::unordered_set<Client, ClientHash> listed;
  for (const auto& [var, uses] : clients_) {
    for (const Client& c : uses.list) {
      const bool stale =
          c.node == nullptr
              ? c.index >= static_cast<int>(outputs_.size()) || outputs_[c.index].get() != var
              : !nodes_.contains(c.node) || c.index >= c.node->num_inputs() ||
                    c.node->inputs()[c.index].get() != var;
      if (stale) {
        return absl::InternalError(absl::StrCat(var->ToString(), " has a stale client"));
      }
      if (!listed.insert(c).second) {
        return absl::InternalError(absl::StrCat(var->ToString(), " lists a client twice"));
      }
    }
  }
  const std::vector<Apply*> order = Toposort();
  if (order.size() != nodes_.size()) {
    return absl::InternalError(absl::StrCat("the graph holds ", nodes_.size(), " nodes but ",
                                            order.size(), " are reachable from the outputs"));
  }
  std::unordered_set<const Apply*> done;
  for (Apply* node : order) {
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Variable* in = node->inputs()[i].get();
      if (in->owner() != nullptr && !done.contains(in->owner())) {
        return absl::InternalError(absl::StrCat(node->ToString(), ": input ", i,
                                                " is computed by a node outside the graph or "
                                                "after it (a cycle)"));
      }
      if (in->owner() == nullptr && !in->is_constant() && !IsInput(in)) {
        return absl::InternalError(absl::StrCat(node->ToString(), ": input ", i, " (",
                                                in->ToString(),
                                                ") is neither a graph input nor a constant"));
      }
      if (!listed.contains(Client{node, i})) {
        return absl::InternalError(absl::StrCat(node->ToString(), ": input ", i, " (",
                                                in->ToString(), ") does not list it as a client"));
      }
    }
    done.insert(node);
  }
  return absl::OkStatus();
}

}  // namespace kiln
