// Gradients of indexing: Subtensor and AdvancedSubtensor1 scatter the gradient into zeros
// (repeated indices accumulate); IncSubtensor and AdvancedIncSubtensor1 pass it to x (zeroed
// where set) and gather y's part. Index inputs are disconnected.
#include <memory>

#include "core/graph/gradient_types.h"
#include "core/ops/alloc.h"
#include "core/ops/grad_util.h"
#include "core/ops/indexing.h"

namespace kiln {
namespace {

// `op` applied to `first` followed by node's index inputs (from `first_index` on).
Var Reindex(OpPtr op, const Apply& node, int first_index, std::vector<Var> first) {
  for (int i = first_index; i < node.num_inputs(); ++i) first.push_back(node.inputs()[i]);
  return ApplyOp(std::move(op), first);
}

// x's and y's gradients of an increment (or set) of x[idx] by y, where `scatter(set)` writes
// into the same places and `gather` reads them.
std::vector<Var> IncGrad(const Apply& node, const Var& gz, bool set, OpPtr scatter_set,
                         OpPtr gather) {
  const Var x(node.inputs()[0]), y(node.inputs()[1]);
  std::vector<Var> grads;
  if (IsDiscreteVar(x)) {
    grads = {FloatZerosLike(x), FloatZerosLike(y)};
  } else {
    const Var gx = set ? Reindex(std::move(scatter_set), node, 2, {gz, zeros_like(y)}) : gz;
    grads = {gx, SumToShapeOf(Reindex(std::move(gather), node, 2, {gz}), y)};
  }
  for (int i = 2; i < node.num_inputs(); ++i) grads.push_back(disconnected_type());
  return grads;
}

// x's gradient of a read of x[idx]: gz scattered into zeros by `scatter_inc`.
std::vector<Var> ReadGrad(const Apply& node, const Var& gz, OpPtr scatter_inc) {
  const Var x(node.inputs()[0]);
  std::vector<Var> grads = {IsDiscreteVar(x)
                                ? FloatZerosLike(x)
                                : Reindex(std::move(scatter_inc), node, 1, {zeros_like(x), gz})};
  for (int i = 1; i < node.num_inputs(); ++i) grads.push_back(disconnected_type());
  return grads;
}

// Only x (and y, for increments) feed the output's values; the indices only place them.
std::vector<std::vector<bool>> IndexedPattern(const Apply& node, bool inc) {
  std::vector<std::vector<bool>> pattern(node.num_inputs(), {false});
  pattern[0] = {true};
  if (inc) pattern[1] = {true};
  return pattern;
}

}  // namespace

std::vector<Var> Subtensor::LOp(const Apply& node, const std::vector<Var>& g) const {
  return ReadGrad(node, g[0], std::make_shared<IncSubtensor>(IncSubtensorAttrs{idx()}));
}

std::vector<Var> IncSubtensor::LOp(const Apply& node, const std::vector<Var>& g) const {
  return IncGrad(node, g[0], attrs().set,
                 std::make_shared<IncSubtensor>(IncSubtensorAttrs{idx(), true}),
                 std::make_shared<Subtensor>(SubtensorAttrs{idx()}));
}

std::vector<Var> AdvancedSubtensor1::LOp(const Apply& node, const std::vector<Var>& g) const {
  return ReadGrad(node, g[0], std::make_shared<AdvancedIncSubtensor1>());
}

std::vector<Var> AdvancedIncSubtensor1::LOp(const Apply& node, const std::vector<Var>& g) const {
  return IncGrad(node, g[0], attrs().set,
                 std::make_shared<AdvancedIncSubtensor1>(AdvancedIncSubtensor1Attrs{true}),
                 std::make_shared<AdvancedSubtensor1>());
}

std::vector<std::vector<bool>> Subtensor::ConnectionPattern(const Apply& node) const {
  return IndexedPattern(node, false);
}
std::vector<std::vector<bool>> IncSubtensor::ConnectionPattern(const Apply& node) const {
  return IndexedPattern(node, true);
}
std::vector<std::vector<bool>> AdvancedSubtensor1::ConnectionPattern(const Apply& node) const {
  return IndexedPattern(node, false);
}
std::vector<std::vector<bool>> AdvancedIncSubtensor1::ConnectionPattern(const Apply& node) const {
  return IndexedPattern(node, true);
}

}  // namespace kiln
