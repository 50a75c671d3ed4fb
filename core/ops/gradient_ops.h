// The identity ops that change only the gradient, as in aesara.gradient: consider_constant,
// zero_grad, undefined_grad, disconnected_grad, grad_clip and grad_scale.
#ifndef KILN_CORE_OPS_GRADIENT_OPS_H_
#define KILN_CORE_OPS_GRADIENT_OPS_H_

#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// What a GradientOp does to the gradient.
enum class GradientMode {
  kConsiderConstant,
  kZeroGrad,
  kUndefinedGrad,
  kDisconnectedGrad,
  kClip,
  kScale
};

// a, b: the clip bounds (kClip) or the multiplier a (kScale).
struct GradientOpAttrs {
  GradientMode mode = GradientMode::kConsiderConstant;
  double a = 0, b = 0;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"mode", &GradientOpAttrs::mode},
                      AttrField{"a", &GradientOpAttrs::a}, AttrField{"b", &GradientOpAttrs::b}};
  }
  absl::Status Check() const;
};

// Forward: the input itself (a view). Backward: depends on the mode.
class GradientOp final : public DeclaredOp<GradientOp, GradientOpAttrs> {
 public:
  using Mode = GradientMode;
  KILN_DECLARED_OP("GradientOp")
  explicit GradientOp(Mode mode, double a = 0, double b = 0) : DeclaredOp({mode, a, b}) {}

  // "ZeroGrad", "GradClip{clip_lower_bound=-1.0, clip_upper_bound=1.0}",
  // "GradScale{multiplier=2.0}".
  std::string Name() const override;
  std::vector<std::pair<int, int>> view_map() const override { return {{0, 0}}; }
  // (LOp: zeros (consider_constant, zero_grad), undefined, disconnected, clip(g, lo, hi) or a * g.)
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// x, through which no gradient flows (the gradient with respect to x is zeros).
Var consider_constant(const Var& x);
// x, whose gradient is zeros.
Var zero_grad(const Var& x);
// x, whose gradient is undefined (NullType).
Var undefined_grad(const Var& x);
// x, disconnected from the cost for the gradient.
Var disconnected_grad(const Var& x);
// x, whose gradient is clipped to [lower, upper] (an error when upper < lower).
Var grad_clip(const Var& x, double lower, double upper);
// x, whose gradient is multiplied by `multiplier`.
Var grad_scale(const Var& x, double multiplier);

}  // namespace kiln

#endif  // KILN_CORE_OPS_GRADIENT_OPS_H_
