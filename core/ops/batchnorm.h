// Aesara's abstract batch-normalization ops (aesara.tensor.nnet.batchnorm): what
// batch_normalization_train and batch_normalization_test build, computed by their own kernels
// and rewritten into elementwise graphs when a function is compiled
// (core/passes/batchnorm_rules.cc).
#ifndef KILN_CORE_OPS_BATCHNORM_H_
#define KILN_CORE_OPS_BATCHNORM_H_

#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// axes: the axes normalized over (Aesara's default (0,)); each within the input's rank.
struct BatchNormAttrs {
  std::vector<int> axes = {0};
  static constexpr auto Fields() { return std::tuple{AttrField{"axes", &BatchNormAttrs::axes}}; }
  absl::Status Check() const;
};

// AbstractBatchNormTrain{axes}(x, scale, bias, epsilon, running_average_factor[, running_mean,
// running_var]): (out, mean, invstd[, new_running_mean, new_running_var]) with mean and var of x
// over `axes` (keepdims), invstd = 1 / sqrt(var + epsilon), out = (x - mean) * (scale * invstd)
// + bias, and the running averages running * (1 - factor) + batch * factor (var scaled by
// m / (m - 1), m = size(x) / size(scale)). x's type, then scale's for the others.
class AbstractBatchNormTrain final : public DeclaredOp<AbstractBatchNormTrain, BatchNormAttrs> {
 public:
  KILN_DECLARED_OP("AbstractBatchNormTrain")
  // epsilon and the factor reach no output; each running average only its new value.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply& node) const override;
};

// AbstractBatchNormInference{axes}(x, scale, bias, estimated_mean, estimated_variance, epsilon):
// (x - mean) * (scale / sqrt(variance + epsilon)) + bias, x's type.
class AbstractBatchNormInference final
    : public DeclaredOp<AbstractBatchNormInference, BatchNormAttrs> {
 public:
  KILN_DECLARED_OP("AbstractBatchNormInference")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true}, {true}, {true}, {true}, {true}, {false}};
  }
};

// AbstractBatchNormTrainGrad{axes}(x, dy, scale, x_mean, x_invstd, epsilon): the gradients of
// AbstractBatchNormTrain's out w.r.t. x, scale and bias for the cotangent dy (types of x, scale,
// scale).
class AbstractBatchNormTrainGrad final
    : public DeclaredOp<AbstractBatchNormTrainGrad, BatchNormAttrs> {
 public:
  KILN_DECLARED_OP("AbstractBatchNormTrainGrad")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true, true, false}, {true, true, true},  {true, false, false},
            {true, true, false}, {true, true, false}, {false, false, false}};
  }
};

// AbstractBatchNormTrain{axes} applied: {out, mean, invstd}, and the two new running averages
// when running_mean and running_var are given (both or neither: pass empty Vars for neither).
std::vector<Var> abstract_batch_norm_train(const Var& x, const Var& scale, const Var& bias,
                                           const Var& epsilon, const Var& running_average_factor,
                                           const Var& running_mean, const Var& running_var,
                                           std::vector<int> axes);
// AbstractBatchNormInference{axes} applied.
Var abstract_batch_norm_inference(const Var& x, const Var& scale, const Var& bias,
                                  const Var& estimated_mean, const Var& estimated_variance,
                                  const Var& epsilon, std::vector<int> axes);
// AbstractBatchNormTrainGrad{axes} applied: {d x, d scale, d bias}.
std::vector<Var> abstract_batch_norm_train_grad(const Var& x, const Var& dy, const Var& scale,
                                                const Var& x_mean, const Var& x_invstd,
                                                const Var& epsilon, std::vector<int> axes);

}  // namespace kiln

#endif  // KILN_CORE_OPS_BATCHNORM_H_
