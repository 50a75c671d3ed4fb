// Gradients of the building ops: Alloc sums the gradient back to the value's shape, ARange's
// start and step get theirs, Eye's are undefined, Join splits the gradient and Split joins it.
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/ops/alloc.h"
#include "core/ops/grad_util.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"

namespace kiln {

std::vector<Var> BuildOp::LOp(const Apply& node, const std::vector<Var>& g) const {
  const std::vector<Var> in = InputVars(node);
  switch (kind_) {
    case OpKind::kAlloc:
      return PerInput(node, [&](int i) {
        if (i > 0) return disconnected_type();
        return IsDiscreteVar(in[0]) ? FloatZerosLike(in[0]) : SumToShapeOf(g[0], in[0]);
      });
    case OpKind::kARange: {
      if (IsBool(dtype_) || IsInteger(dtype_)) {
        return {FloatZerosLike(in[0]), disconnected_type(), FloatZerosLike(in[2])};
      }
      const Var n = shape_i(Var(node.output(0)), 0);
      return {sum(g[0]), disconnected_type(),
              sum(g[0] * arange(constant(int64_t{0}), n, constant(int64_t{1}), dtype_))};
    }
    case OpKind::kEye:
      return PerInput(node, [&](int i) { return grad_undefined(Name(), i, node.inputs()[i]); });
    case OpKind::kJoin: {
      const int ndim = in[1].ndim();
      const int axis = static_cast<int>(
          static_cast<const Constant&>(*node.inputs()[0]).data().ElementAsDouble(0));
      const int a = axis < 0 ? axis + ndim : axis;
      const bool continuous = !IsDiscreteVar(Var(node.output(0)));
      Var start = constant(int64_t{0});
      return PerInput(node, [&](int i) -> Var {
        if (i == 0) return grad_undefined(Name(), 0, node.inputs()[0]);
        if (!continuous) return FloatZerosLike(in[i]);
        // This tensor's block of the gradient along the axis.
        const Var stop = start + shape_i(in[i], a);
        std::vector<Index> idx(a, Slice{});
        idx.push_back(Slice{start, stop, std::nullopt});
        start = stop;
        return subtensor(g[0], idx);
      });
    }
    case OpKind::kSplit: {
      std::vector<Var> pieces;
      for (int o = 0; o < node.num_outputs(); ++o) {
        pieces.push_back(IsDisconnected(*g[o]) ? zeros_like(Var(node.output(o))) : g[o]);
      }
      const int axis = static_cast<int>(
          static_cast<const Constant&>(*node.inputs()[1]).data().ElementAsDouble(0));
      return {concatenate(pieces, axis), grad_undefined(Name(), 1, node.inputs()[1]),
              grad_undefined(Name(), 2, node.inputs()[2])};
    }
    default:
      return Op::LOp(node, g);
  }
}

std::vector<std::vector<bool>> BuildOp::ConnectionPattern(const Apply& node) const {
  std::vector<std::vector<bool>> pattern = Op::ConnectionPattern(node);
  if (kind_ == OpKind::kAlloc) {
    for (int i = 1; i < node.num_inputs(); ++i) pattern[i] = {false};
  } else if (kind_ == OpKind::kARange) {
    pattern[1] = {false};
  }
  return pattern;
}

}  // namespace kiln
