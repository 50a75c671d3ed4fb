// Structural names: every variable a graph's outputs depend on named by position and structure
// alone, walking iteratively (each node after its inputs, in input order, once). The base of the
// canonical form that function ids hash (canonical.cc) and of the inner-graph text that Scan and
// OpFromGraph carry (inner_graph.cc), which differ only in how they write leaves and nodes.
#ifndef KILN_CORE_GRAPH_STRUCTURAL_NAMES_H_
#define KILN_CORE_GRAPH_STRUCTURAL_NAMES_H_

#include <functional>
#include <span>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "core/graph/basic.h"

namespace kiln {

class StructuralNames {
 public:
  // The name of a variable no walked node computes (a constant, an unknown input), or an error.
  using NameLeaf = std::function<absl::StatusOr<std::string>(const Variable&)>;
  // A node's definition from its inputs' names. Nodes with equal definitions are one node k,
  // whose outputs are named "n<k>.<output>"; `on_new` gets each new definition with its k.
  using Define = std::function<std::string(const Apply&, std::span<const std::string* const>)>;
  using OnNewDefinition = std::function<void(int k, const std::string& definition)>;

  StructuralNames(NameLeaf leaf, Define define, OnNewDefinition on_new)
      : leaf_(std::move(leaf)), define_(std::move(define)), on_new_(std::move(on_new)) {}

  // Gives v the name `name` (the graph's inputs, before any walk).
  void Preset(const Variable* v, std::string name) { names_[v] = std::move(name); }
  // v's name, naming first everything it depends on.
  absl::StatusOr<std::string> NameOf(const Variable* v);

 private:
  NameLeaf leaf_;
  Define define_;
  OnNewDefinition on_new_;
  absl::flat_hash_map<const Variable*, std::string> names_;
  absl::flat_hash_map<std::string, int> definitions_;
  absl::flat_hash_set<const Apply*> done_;
};

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_STRUCTURAL_NAMES_H_
