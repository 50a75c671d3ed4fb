// Gradients of the pooling ops, as Aesara 2.9.4 defines them: Pool -> MaxPoolGrad (max) or
// AveragePoolGrad (sum, averages); MaxPoolGrad -> DownsampleFactorMaxGradGrad for gz;
// AveragePoolGrad -> Pool of the gradient; DownsampleFactorMaxGradGrad -> MaxPoolGrad. The
// window sizes, strides and paddings are disconnected.
#include "core/graph/gradient_types.h"
#include "core/ops/alloc.h"
#include "core/ops/pool.h"

namespace kiln {
namespace {

// ws, stride and pad of a node whose first of them is input `first`.
std::vector<Var> Params(const Apply& node, int first) {
  return {Var(node.inputs()[first]), Var(node.inputs()[first + 1]), Var(node.inputs()[first + 2])};
}

std::vector<Var> Disconnected(std::vector<Var> grads) {
  for (int k = 0; k < 3; ++k) grads.push_back(disconnected_type());
  return grads;
}

}  // namespace

std::vector<Var> Pool::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  const std::vector<Var> p = Params(node, 1);
  if (attrs().mode == "max") {
    const MaxPoolGradAttrs a{attrs().ignore_border, "max", attrs().ndim};
    return Disconnected({ApplyOp(OpPtr(std::make_shared<MaxPoolGrad>(a)),
                                 {x, Var(node.output(0)), g[0], p[0], p[1], p[2]})});
  }
  const AveragePoolGradAttrs a{attrs().ignore_border, attrs().mode, attrs().ndim};
  return Disconnected(
      {ApplyOp(OpPtr(std::make_shared<AveragePoolGrad>(a)), {x, g[0], p[0], p[1], p[2]})});
}

std::vector<Var> MaxPoolGrad::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]), maxout(node.inputs()[1]);
  const std::vector<Var> p = Params(node, 3);
  const Var ggz = ApplyOp(OpPtr(std::make_shared<DownsampleFactorMaxGradGrad>(attrs())),
                          {x, maxout, g[0], p[0], p[1], p[2]});
  return Disconnected({zeros_like(x), zeros_like(maxout), ggz});
}

std::vector<Var> AveragePoolGrad::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  const std::vector<Var> p = Params(node, 2);
  const PoolAttrs a{attrs().ignore_border, attrs().mode, attrs().ndim};
  return Disconnected(
      {zeros_like(x), ApplyOp(OpPtr(std::make_shared<Pool>(a)), {g[0], p[0], p[1], p[2]})});
}

std::vector<Var> DownsampleFactorMaxGradGrad::LOp(const Apply& node,
                                                  const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]), maxout(node.inputs()[1]);
  const std::vector<Var> p = Params(node, 3);
  const Var gz =
      ApplyOp(OpPtr(std::make_shared<MaxPoolGrad>(attrs())), {x, maxout, g[0], p[0], p[1], p[2]});
  return Disconnected({zeros_like(x), zeros_like(maxout), gz});
}

// Aesara's MaxPoolRop defines no gradient.
std::vector<Var> MaxPoolRop::LOp(const Apply& node, const std::vector<Var>&) const {
  return Disconnected({grad_not_implemented(Name(), 0, node.inputs()[0]),
                       grad_not_implemented(Name(), 1, node.inputs()[1])});
}

}  // namespace kiln
