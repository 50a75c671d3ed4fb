// Aesara's BNComposite (aesara.tensor.nnet.batchnorm): batch_normalization(mode="low_mem") as one
// elementwise node, ((x - mean) / std) * gamma + beta, with Aesara's own gradient formulas.
#ifndef KILN_CORE_OPS_BN_COMPOSITE_H_
#define KILN_CORE_OPS_BN_COMPOSITE_H_

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// BNComposite's prop (Aesara's init_param): the dtype its scalar inputs were declared with,
// batch_normalization's inputs.dtype.
struct BNCompositeAttrs {
  DType dtype = DType::kFloat64;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"dtype", &BNCompositeAttrs::dtype}};
  }
};

// Elemwise{BNComposite}(x, mean, std, gamma, beta), inputs of one rank broadcast together: the
// Elemwise{Composite} of ((i0 - i1) / i2) * i3 + i4, typed, shaped, computed and printed as it
// ("Elemwise{Composite{((((i0 - i1) / i2) * i3) + i4)}}"), whose gradient is BNComposite.grad's
// (a Composite has none).
class BNComposite final : public DeclaredOp<BNComposite, BNCompositeAttrs> {
 public:
  KILN_DECLARED_OP("BNComposite")
  std::string Name() const override;
};

// Aesara's Elemwise(scalar_op=BNComposite(dtype=x.dtype))(x, mean, std, gamma, beta): inputs of
// lower rank get broadcastable dims in front, as Elemwise's make_node gives them.
Var bn_composite(const Var& x, const Var& mean, const Var& std, const Var& gamma, const Var& beta);

}  // namespace kiln

#endif  // KILN_CORE_OPS_BN_COMPOSITE_H_
