// Gradients of the shape ops and DimShuffle: shapes are disconnected from values; Reshape and
// DimShuffle move the gradient back to the input's layout.
#include "core/graph/gradient_types.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/grad_util.h"
#include "core/ops/indexing.h"
#include "core/ops/shape.h"

namespace kiln {
namespace {
// [[true]] for input 0 and [[false]] for the shape inputs after it.
std::vector<std::vector<bool>> OnlyFirstInput(const Apply& node) {
  std::vector<std::vector<bool>> pattern(node.num_inputs(), {false});
  pattern[0] = {true};
  return pattern;
}
}  // namespace

std::vector<Var> ShapeOp::LOp(const Apply&, const std::vector<Var>&) const {
  return {disconnected_type()};
}
std::vector<std::vector<bool>> ShapeOp::ConnectionPattern(const Apply&) const { return {{false}}; }

std::vector<Var> ShapeI::LOp(const Apply&, const std::vector<Var>&) const {
  return {disconnected_type()};
}
std::vector<std::vector<bool>> ShapeI::ConnectionPattern(const Apply&) const { return {{false}}; }

std::vector<Var> Reshape::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  return {reshape(g[0], shape(x)), disconnected_type()};
}
std::vector<std::vector<bool>> Reshape::ConnectionPattern(const Apply& node) const {
  return OnlyFirstInput(node);
}

std::vector<Var> SpecifyShape::LOp(const Apply& node, const std::vector<Var>& g) const {
  return PerInput(node, [&](int i) { return i == 0 ? g[0] : disconnected_type(); });
}
std::vector<std::vector<bool>> SpecifyShape::ConnectionPattern(const Apply& node) const {
  return OnlyFirstInput(node);
}

std::vector<Var> MakeVector::LOp(const Apply& node, const std::vector<Var>& g) const {
  return PerInput(node, [&](int i) {
    const Var x(node.inputs()[i]);
    return IsBool(dtype()) || IsInteger(dtype()) ? FloatZerosLike(x) : subtensor(g[0], {Index(i)});
  });
}

std::vector<Var> DimShuffle::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  if (IsDiscreteVar(x)) return {FloatZerosLike(x)};
  // Input dim v went to output position i; dropped input dims come back as 'x', inserted
  // output dims (which have size 1) are dropped.
  std::vector<int> order(x.ndim(), kX);
  for (size_t i = 0; i < new_order_.size(); ++i) {
    if (new_order_[i] != kX) order[new_order_[i]] = static_cast<int>(i);
  }
  Var gz = g[0];
  bool drops_unknown = false;
  for (size_t i = 0; i < new_order_.size(); ++i) {
    drops_unknown |= new_order_[i] == kX && gz.ok() && gz.type().shape()[i] != StaticDim(1);
  }
  // A gradient whose inserted dims lost their static size 1 gets it back first.
  if (drops_unknown) gz = specify_shape(gz, node.output_ptr(0)->tensor_type()->shape());
  return {dimshuffle(gz, order)};
}

}  // namespace kiln
