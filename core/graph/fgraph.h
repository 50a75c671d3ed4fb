// Aesara's FunctionGraph: a private copy of a graph between inputs and outputs that rewrites edit
// in place, with every variable's clients tracked so that replace is cheap.
#ifndef KILN_CORE_GRAPH_FGRAPH_H_
#define KILN_CORE_GRAPH_FGRAPH_H_

#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/graph/basic.h"

namespace kiln {

class FunctionGraph {
 public:
  // A use of a variable: input `index` of `node`, or output `index` of the graph when node is null.
  struct Client {
    Apply* node;
    int index;
    bool operator==(const Client&) const = default;
  };

  // The graph between inputs and outputs, cloned (inputs too) unless `clone` is false, so that
  // the caller's graph is never mutated. Fails with Aesara's MissingInputError text when an
  // output depends on an owner-less variable that is neither an input nor a constant.
  static absl::StatusOr<std::unique_ptr<FunctionGraph>> Make(std::vector<VariablePtr> inputs,
                                                             std::vector<VariablePtr> outputs,
                                                             bool clone = true);

  const std::vector<VariablePtr>& inputs() const { return inputs_; }
  const std::vector<VariablePtr>& outputs() const { return outputs_; }
  // The uses of `v` (empty when unused or not in the graph).
  const std::vector<Client>& clients(const Variable* v) const;
  // Number of Apply nodes.
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  // The Apply nodes, each after the nodes computing its inputs.
  std::vector<Apply*> Toposort() const;

  // True while `node` is part of the graph (rewrites drop replaced nodes).
  bool Contains(const Apply* node) const;
  // Makes every client of `old_var` use `new_var` instead (new_var's type must equal old_var's
  // or be more specific: the same dtype and rank, with old_var's known dims), imports
  // the nodes new_var needs and drops the nodes no longer used. `reason` names the rewrite.
  absl::Status Replace(Variable* old_var, VariablePtr new_var, std::string_view reason = "");

  // The verifier: clients match the node inputs, every node input is in the graph, and the
  // graph is acyclic. OK or a description of the first defect.
  absl::Status CheckIntegrity() const;

 private:
  FunctionGraph() = default;
  // Adds `v`'s owner (and everything above it not yet in the graph).
  void Import(const VariablePtr& v);
  void AddClient(const Variable* v, Client c);
  bool IsInput(const Variable* v) const;
  void RemoveClient(const Variable* v, Client c);
  // Drops nodes none of whose outputs have clients, starting with `node`, moving upward.
  void PruneFrom(Apply* node);

  std::vector<VariablePtr> inputs_;
  std::unordered_set<const Variable*> input_set_;  // inputs_, for O(1) IsInput
  std::vector<VariablePtr> outputs_;
  struct ClientHash {
    size_t operator()(const Client& c) const {
      return std::hash<const void*>()(c.node) * 31 + static_cast<size_t>(c.index);
    }
  };
  // A variable's uses, with an index by use once there are many, so that removing one use of a
  // widely used variable (a merged constant) is O(1) rather than a scan.
  struct ClientList {
    std::vector<Client> list;
    std::unique_ptr<std::unordered_map<Client, size_t, ClientHash>> position;
  };
  std::unordered_map<const Variable*, ClientList> clients_;
  std::unordered_map<const Apply*, ApplyPtr> nodes_;
};

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_FGRAPH_H_
