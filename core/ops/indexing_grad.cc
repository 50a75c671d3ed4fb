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

// op's kind, with the same index list, applied to `first` inputs followed by node's indices.
Var Reindex(const SubtensorOp& op, OpKind kind, bool set, const Apply& node, int first_index,
            std::vector<Var> first) {
  for (int i = first_index; i < node.num_inputs(); ++i) first.push_back(node.inputs()[i]);
  return ApplyOp(OpPtr(std::make_shared<SubtensorOp>(kind, op.idx(), set)), first);
}

}  // namespace

std::vector<Var> SubtensorOp::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  const bool advanced =
      kind_ == OpKind::kAdvancedSubtensor1 || kind_ == OpKind::kAdvancedIncSubtensor1;
  const OpKind get = advanced ? OpKind::kAdvancedSubtensor1 : OpKind::kSubtensor;
  const OpKind inc = advanced ? OpKind::kAdvancedIncSubtensor1 : OpKind::kIncSubtensor;
  const bool is_inc = kind_ == OpKind::kIncSubtensor || kind_ == OpKind::kAdvancedIncSubtensor1;
  const int first_index = is_inc ? 2 : 1;
  std::vector<Var> grads;
  if (!is_inc) {
    grads.push_back(IsDiscreteVar(x) ? FloatZerosLike(x)
                                     : Reindex(*this, inc, false, node, 1, {zeros_like(x), g[0]}));
  } else {
    const Var y(node.inputs()[1]);
    if (IsDiscreteVar(x)) {
      grads = {FloatZerosLike(x), FloatZerosLike(y)};
    } else {
      const Var gx = set_ ? Reindex(*this, inc, true, node, 2, {g[0], zeros_like(y)}) : g[0];
      const Var gy = SumToShapeOf(Reindex(*this, get, false, node, 2, {g[0]}), y);
      grads = {gx, gy};
    }
  }
  for (int i = first_index; i < node.num_inputs(); ++i) grads.push_back(disconnected_type());
  return grads;
}

std::vector<std::vector<bool>> SubtensorOp::ConnectionPattern(const Apply& node) const {
  const bool is_inc = kind_ == OpKind::kIncSubtensor || kind_ == OpKind::kAdvancedIncSubtensor1;
  std::vector<std::vector<bool>> pattern(node.num_inputs(), {false});
  pattern[0] = {true};
  if (is_inc) pattern[1] = {true};
  return pattern;
}

}  // namespace kiln
