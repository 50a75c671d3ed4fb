// Graph walks and copies, as in aesara.graph.basic: ancestors, graph_inputs, io_toposort, clone,
// clone_replace, equal_computations. Every walk is iterative, so deep graphs cannot overflow the
// stack.
#ifndef KILN_CORE_GRAPH_TRAVERSAL_H_
#define KILN_CORE_GRAPH_TRAVERSAL_H_

#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/basic.h"

namespace kiln {

// Every variable the outputs depend on (the outputs included), stopping at `blockers`, in
// depth-first post-order (inputs before the variables computed from them).
std::vector<Variable*> Ancestors(std::span<const VariablePtr> outputs,
                                 std::span<const VariablePtr> blockers = {});

// The variables without an owner (inputs and constants) that the outputs depend on, in the order
// they are first reached.
std::vector<Variable*> GraphInputs(std::span<const VariablePtr> outputs,
                                   std::span<const VariablePtr> blockers = {});

// The Apply nodes between `inputs` and `outputs` in a topological order (each node after the
// nodes computing its inputs); walks stop at `inputs`.
std::vector<Apply*> IoToposort(std::span<const VariablePtr> inputs,
                               std::span<const VariablePtr> outputs);

// The Apply nodes above `outputs` in a topological order, not entering the owner of any variable
// for which stop(v) holds.
std::vector<Apply*> ToposortUntil(std::span<const VariablePtr> outputs,
                                  const std::function<bool(const Variable*)>& stop);

// A map from original variables to their copies.
using CloneMap = std::unordered_map<const Variable*, VariablePtr>;

// Copies the graph between inputs and outputs. Entries already in `*memo` are used as the copies
// of those variables (this is how clone_replace substitutes). Inputs are copied as new owner-less
// variables when `copy_inputs`, else reused; constants are shared. Returns the copied outputs.
std::vector<VariablePtr> Clone(std::span<const VariablePtr> inputs,
                               std::span<const VariablePtr> outputs, bool copy_inputs,
                               CloneMap* memo);

// The outputs with every key of `replace` replaced by its value, in a copy of the graph (the
// original is not changed). A replacement must have the type of the variable it replaces.
absl::StatusOr<std::vector<VariablePtr>> CloneReplace(
    std::span<const VariablePtr> outputs,
    const std::vector<std::pair<VariablePtr, VariablePtr>>& replace);

// True when xs and ys compute the same thing: equal ops applied to pairwise-equal inputs, with
// in_xs[i] matching in_ys[i], constants matching by type and value bits, other leaves by identity.
bool EqualComputations(std::span<const VariablePtr> xs, std::span<const VariablePtr> ys,
                       std::span<const VariablePtr> in_xs = {},
                       std::span<const VariablePtr> in_ys = {});

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_TRAVERSAL_H_
