// Aesara's batchnorm_opts (aesara/tensor/nnet/batchnorm.py): the abstract batch-normalization
// ops become the elementwise graphs of their formulas, which the later phases fuse.
//   local_abstract_batch_norm_train        AbstractBatchNormTrain -> mean, var, invstd, out and
//                                          the new running averages
//   local_abstract_batch_norm_train_grad   AbstractBatchNormTrainGrad -> its three gradients
//   local_abstract_batch_norm_inference    AbstractBatchNormInference -> the normalized output
#include <optional>
#include <vector>

#include "core/graph/constructors.h"
#include "core/ops/batchnorm.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/passes/nnet_rules.h"
#include "core/passes/rule_util.h"

namespace kiln {
namespace {

// Every value fitted to node's outputs, or nullopt when one does not fit.
Replacement FitAll(const std::vector<Var>& values, const Apply& node) {
  std::vector<VariablePtr> out;
  for (size_t k = 0; k < values.size(); ++k) {
    std::optional<VariablePtr> v = FitTo(values[k], *node.output_ptr(static_cast<int>(k)));
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

// epsilon, cast to float32 when the variance is float32 (it must not upcast the result).
Var EpsilonFor(const Var& variance, const Var& epsilon) {
  if (variance.dtype() == DType::kFloat32 && epsilon.dtype() == DType::kFloat64) {
    return cast(epsilon, DType::kFloat32);
  }
  return epsilon;
}

// AbstractBatchNormTrain{axes}(x, scale, bias, epsilon, factor[, running_mean, running_var]) ->
// out = (x - mean) * (scale * reciprocal(sqrt(var + epsilon))) + bias, mean, invstd,
// running_mean * (1.0 - factor) + mean * factor,
// running_var * (1.0 - factor) + (m / (m - 1)) * var * factor   (m = prod(x.shape) /
// prod(scale.shape) as floatX)
Replacement TrainRule(const FunctionGraph&, Apply& node) {
  const std::vector<VariablePtr>& in = node.inputs();
  const std::vector<int>& axes = node.op().As<AbstractBatchNormTrain>()->attrs().axes;
  const Var x(in[0]), scale(in[1]), bias(in[2]), factor(in[4]);
  const Var mean_ = mean(x, Axes(axes), true);
  const Var var_ = var(x, Axes(axes), true);
  const Var invstd = reciprocal(sqrt(var_ + EpsilonFor(var_, Var(in[3]))));
  const Var out = (x - mean_) * (scale * invstd) + bias;
  std::vector<Var> results = {out, mean_, invstd};
  if (in.size() == 7) {
    results.push_back(Var(in[5]) * (1.0 - factor) + mean_ * factor);
    const Var m = cast(prod(shape(x)) / prod(shape(scale)), kFloatX);
    results.push_back(Var(in[6]) * (1.0 - factor) + (m / (m - int64_t{1})) * var_ * factor);
  }
  return FitAll(results, node);
}

// AbstractBatchNormTrainGrad{axes}(x, dy, scale, x_mean, x_invstd, epsilon) ->
// scale * (c - mean(c)), sum(dy * x_invstd * x_diff), sum(dy)   with x_diff = x - x_mean,
// c = dy * x_invstd - x_diff * (mean(dy * x_diff) * x_invstd ** 3)
Replacement TrainGradRule(const FunctionGraph&, Apply& node) {
  const std::vector<VariablePtr>& in = node.inputs();
  const Axes axes(node.op().As<AbstractBatchNormTrainGrad>()->attrs().axes);
  const Var x(in[0]), dy(in[1]), scale(in[2]), x_mean(in[3]), x_invstd(in[4]);
  const Var x_diff = x - x_mean;
  const Var mean_dy_x_diff = mean(dy * x_diff, axes, true);
  const Var c = dy * x_invstd - x_diff * (mean_dy_x_diff * pow(x_invstd, 3));
  return FitAll({scale * (c - mean(c, axes, true)), sum(dy * x_invstd * x_diff, axes, true),
                 sum(dy, axes, true)},
                node);
}

// AbstractBatchNormInference(x, scale, bias, mean, variance, epsilon) ->
// (x - mean) * (scale / sqrt(variance + epsilon)) + bias
Replacement InferenceRule(const FunctionGraph&, Apply& node) {
  const std::vector<VariablePtr>& in = node.inputs();
  const Var variance(in[4]);
  return FitAll({(Var(in[0]) - Var(in[3])) *
                     (Var(in[1]) / sqrt(variance + EpsilonFor(variance, Var(in[5])))) +
                 Var(in[2])},
                node);
}

}  // namespace

std::vector<RewriteRule> BatchNormRules(const std::string& phase) {
  std::vector<RewriteRule> rules = {
      // AbstractBatchNormTrain -> its elementwise graph
      PhaseRule("local_abstract_batch_norm_train", phase, {OpClassIdOf<AbstractBatchNormTrain>()},
                TrainRule),
      // AbstractBatchNormTrainGrad -> its elementwise graph
      PhaseRule("local_abstract_batch_norm_train_grad", phase,
                {OpClassIdOf<AbstractBatchNormTrainGrad>()}, TrainGradRule),
      // AbstractBatchNormInference -> its elementwise graph
      PhaseRule("local_abstract_batch_norm_inference", phase,
                {OpClassIdOf<AbstractBatchNormInference>()}, InferenceRule),
  };
  // Aesara registers them for fast_compile as well as fast_run.
  for (RewriteRule& r : rules) r.tags.insert(r.tags.end(), {"fast_compile", "fast_run"});
  return rules;
}

}  // namespace kiln
