// Gradients of the building ops: Alloc sums the gradient back to the value's shape, ARange's
// start and step get theirs, Eye's are undefined, Join splits the gradient and Split joins it.
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/ops/alloc.h"
#include "core/ops/grad_util.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"

namespace kiln {

std::vector<Var> Alloc::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var value(node.inputs()[0]);
  return PerInput(node, [&](int i) {
    if (i > 0) return disconnected_type();
    return IsDiscreteVar(value) ? FloatZerosLike(value) : SumToShapeOf(g[0], value);
  });
}

std::vector<std::vector<bool>> Alloc::ConnectionPattern(const Apply& node) const {
  std::vector<std::vector<bool>> pattern(node.num_inputs(), {false});
  pattern[0] = {true};
  return pattern;
}

std::vector<Var> ARange::LOp(const Apply& node, const std::vector<Var>& g) const {
  const std::vector<Var> in = InputVars(node);
  const DType dtype = attrs().dtype;
  if (IsBool(dtype) || IsInteger(dtype)) {
    return {FloatZerosLike(in[0]), disconnected_type(), FloatZerosLike(in[2])};
  }
  const Var n = shape_i(Var(node.output(0)), 0);
  return {sum(g[0]), disconnected_type(),
          sum(g[0] * arange(constant(int64_t{0}), n, constant(int64_t{1}), dtype))};
}

std::vector<Var> Eye::LOp(const Apply& node, const std::vector<Var>&) const {
  return PerInput(node, [&](int i) { return grad_undefined(Name(), i, node.inputs()[i]); });
}

std::vector<Var> Join::LOp(const Apply& node, const std::vector<Var>& g) const {
  const std::vector<Var> in = InputVars(node);
  const int ndim = in[1].ndim();
  const std::optional<int64_t> axis = ConstantInt(node.inputs()[0]);
  if (!axis) {
    return PerInput(node, [&](int i) {
      return grad_not_implemented(Name(), i, node.inputs()[i], "The axis is not a constant.");
    });
  }
  const int a = static_cast<int>(*axis < 0 ? *axis + ndim : *axis);
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

std::vector<Var> Split::LOp(const Apply& node, const std::vector<Var>& g) const {
  std::vector<Var> pieces;
  for (int o = 0; o < node.num_outputs(); ++o) {
    pieces.push_back(IsDisconnected(*g[o]) ? zeros_like(Var(node.output(o))) : g[o]);
  }
  const int axis = static_cast<int>(*ConstantInt(node.inputs()[1]));  // Split's is constant
  return {concatenate(pieces, axis), grad_undefined(Name(), 1, node.inputs()[1]),
          grad_undefined(Name(), 2, node.inputs()[2])};
}

}  // namespace kiln
