// The gradients of the abstract convolution ops, as Aesara's grad methods build them: the
// forward op's are its gradInputs and gradWeights ops; each gradient op's are the other
// gradient op and the forward op (so double backward stays within the three ops).
#include "core/graph/gradient_types.h"
#include "core/ops/conv.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/shape.h"

namespace kiln {
namespace {

// x.shape[-dim:], the spatial shape the gradient ops take.
Var SpatialShapeOf(const Var& x, int dim) {
  return subtensor(shape(x), {Slice{-dim, std::nullopt, std::nullopt}});
}

// Aesara's x.type.filter_variable(g): g in x's dtype, and with x's static dims asserted
// (SpecifyShape) when g's type does not already have them.
Var FilterLike(const Var& g, const Var& x) {
  if (!g.ok()) return g;
  const Var r = g.dtype() == x.dtype() ? g : cast(g, x.dtype());
  if (!r.ok()) return r;
  const StaticShape& want = x.type().shape();
  const StaticShape& have = r.type().shape();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] && want[i] != have[i]) return specify_shape(r, want);
  }
  return r;
}

// The op of another direction with the same attributes.
template <ConvDirection Dir, int D>
OpPtr Sibling(const ConvAttrsOf<D>& attrs) {
  return std::make_shared<ConvOp<Dir, D>>(attrs);
}

}  // namespace

template <ConvDirection Dir, int D>
std::vector<Var> ConvOp<Dir, D>::LOp(const Apply& node, const std::vector<Var>& g) const {
  const ConvAttrsOf<D>& a = this->attrs();
  const Var first(node.inputs()[0]), second(node.inputs()[1]);
  if constexpr (Dir == ConvDirection::kForward) {
    // img, kern
    const Var d_img = ApplyOp(Sibling<ConvDirection::kGradInputs, D>(a),
                              {second, g[0], SpatialShapeOf(first, D)});
    const Var d_kern = ApplyOp(Sibling<ConvDirection::kGradWeights, D>(a),
                               {first, g[0], SpatialShapeOf(second, D)});
    return {FilterLike(d_img, first), FilterLike(d_kern, second)};
  } else if constexpr (Dir == ConvDirection::kGradWeights) {
    // img, topgrad, shape; g[0] has the kernel's shape.
    const Var d_img = ApplyOp(Sibling<ConvDirection::kGradInputs, D>(a),
                              {g[0], second, SpatialShapeOf(first, D)});
    const Var d_top = ApplyOp(Sibling<ConvDirection::kForward, D>(a), {first, g[0]});
    return {FilterLike(d_img, first), FilterLike(d_top, second), disconnected_type()};
  } else {
    // kern, topgrad, shape; g[0] has the image's shape.
    const Var d_kern = ApplyOp(Sibling<ConvDirection::kGradWeights, D>(a),
                               {g[0], second, SpatialShapeOf(first, D)});
    const Var d_top = ApplyOp(Sibling<ConvDirection::kForward, D>(a), {g[0], first});
    return {FilterLike(d_kern, first), FilterLike(d_top, second), disconnected_type()};
  }
}

template std::vector<Var> ConvOp<ConvDirection::kForward, 2>::LOp(const Apply&,
                                                                  const std::vector<Var>&) const;
template std::vector<Var> ConvOp<ConvDirection::kGradInputs, 2>::LOp(const Apply&,
                                                                     const std::vector<Var>&) const;
template std::vector<Var> ConvOp<ConvDirection::kGradWeights, 2>::LOp(
    const Apply&, const std::vector<Var>&) const;
template std::vector<Var> ConvOp<ConvDirection::kForward, 3>::LOp(const Apply&,
                                                                  const std::vector<Var>&) const;
template std::vector<Var> ConvOp<ConvDirection::kGradInputs, 3>::LOp(const Apply&,
                                                                     const std::vector<Var>&) const;
template std::vector<Var> ConvOp<ConvDirection::kGradWeights, 3>::LOp(
    const Apply&, const std::vector<Var>&) const;

}  // namespace kiln
