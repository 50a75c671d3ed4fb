#include "core/ops/batchnorm.h"

#include <cmath>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/op_registry.h"
#include "core/ops/batchnorm_kernels.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(AbstractBatchNormTrain);
KILN_REGISTER_OP(AbstractBatchNormInference);
KILN_REGISTER_OP(AbstractBatchNormTrainGrad);

namespace {

// The inputs' names, for errors.
constexpr const char* kTrainNames[] = {
    "x", "scale", "bias", "epsilon", "running_average_factor", "running_mean", "running_var"};
constexpr const char* kInferenceNames[] = {
    "x", "scale", "bias", "estimated_mean", "estimated_variance", "epsilon"};
constexpr const char* kGradNames[] = {"x", "dy", "scale", "x_mean", "x_invstd", "epsilon"};

// Checks the inputs of a batch-normalization node: `tensors` (indices) real float tensors of x's
// rank, `scalars` real scalars, the axes within x's rank; then casts the tensors to their common
// dtype, as Aesara's as_common_dtype does. Returns that dtype.
absl::StatusOr<DType> CheckInputs(const Op& op, const std::vector<int>& axes,
                                  std::vector<VariablePtr>& in, const char* const* names,
                                  const std::vector<int>& tensors,
                                  const std::vector<int>& scalars) {
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i]->tensor_type() == nullptr) {
      return Invalid(op, absl::StrCat("input ", i, " (", names[i], ") has type ",
                                      in[i]->type()->ToString(), ", which is not a TensorType"));
    }
  }
  const TensorType& x = *in[0]->tensor_type();
  DType dtype = x.dtype();
  for (int i : tensors) {
    const TensorType& t = *in[i]->tensor_type();
    if (!IsFloat(t.dtype())) {
      return Invalid(op, absl::StrCat("input ", i, " (", names[i], ") has type ", t.ToString(),
                                      " but a float tensor is needed"));
    }
    if (t.ndim() != x.ndim()) {
      return Invalid(op, absl::StrCat("input ", i, " (", names[i], ") has type ", t.ToString(),
                                      " but input 0 (x) has ", x.ToString(),
                                      ": they must have the same number of dimensions"));
    }
    dtype = PromoteTypes(dtype, t.dtype());
  }
  for (int i : scalars) {
    const TensorType& t = *in[i]->tensor_type();
    if (t.ndim() != 0 || !(IsFloat(t.dtype()) || IsInteger(t.dtype()))) {
      return Invalid(op, absl::StrCat("input ", i, " (", names[i], ") has type ", t.ToString(),
                                      " but a real scalar is needed"));
    }
  }
  for (int a : axes) {
    if (a < 0 || a >= x.ndim()) {
      return Invalid(op, absl::StrCat("axes should be less than ndim (<", x.ndim(), "), but (",
                                      absl::StrJoin(axes, ", "), axes.size() == 1 ? ",)" : ")",
                                      " given: input 0 (x) has type ", x.ToString()));
    }
  }
  for (int i : tensors) {
    if (in[i]->tensor_type()->dtype() == dtype) continue;
    const Var cast_input = cast(Var(in[i]), dtype);
    if (!cast_input.ok()) return cast_input.status();
    in[i] = cast_input.ptr();
  }
  return dtype;
}

TypePtr TypeOf(const VariablePtr& v) {
  return TensorType::Make(v->tensor_type()->dtype(), v->tensor_type()->shape());
}

// Operand i of a kernel as float64 values with its strides over `target`, or an error when a
// dim is neither 1 nor target's (`what` names the shape it is read over).
absl::StatusOr<batchnorm::Operand> OperandOf(const Op& op, const Tensor& t, int i,
                                             const char* const* names, const Shape& target,
                                             const char* what, std::vector<Tensor>& keep) {
  if (t.ndim() != static_cast<int>(target.size())) {
    return Invalid(
        op, absl::StrCat("input ", i, " (", names[i], ") has shape ", ShapeToString(t.shape()),
                         " but ", what, " have shape ", ShapeToString(target)));
  }
  for (int d = 0; d < t.ndim(); ++d) {
    if (t.shape()[d] != 1 && t.shape()[d] != target[d]) {
      return Invalid(op, absl::StrCat("input ", i, " (", names[i], ") has shape ",
                                      ShapeToString(t.shape()), " but ", what, " have shape ",
                                      ShapeToString(target), ": each dim must be 1 or theirs"));
    }
  }
  keep.push_back(t.AsType(DType::kFloat64));
  return batchnorm::Operand{keep.back().data<double>(),
                            batchnorm::BroadcastStrides(t.shape(), target)};
}

// The number of values each statistic of x over `axes` averages.
double CountOver(const Shape& shape, const std::vector<int>& axes) {
  double n = 1;
  for (int a : axes) n *= static_cast<double>(shape[a]);
  return n;
}

// A float64 tensor of `shape` for a kernel, its size checked as output `dtype` first.
absl::StatusOr<Tensor> Doubles(const Op& op, const Shape& shape, DType dtype) {
  RETURN_IF_ERROR(CheckOutputShape(op, shape, dtype));
  RETURN_IF_ERROR(CheckOutputShape(op, shape, DType::kFloat64));
  return Tensor::Empty(DType::kFloat64, shape);
}

Tensor AsOutput(Tensor t, const Apply& node, int k) {
  const DType dtype = node.output(k)->tensor_type()->dtype();
  return dtype == DType::kFloat64 ? std::move(t) : t.AsType(dtype);
}

// The op with these axes applied, all its n outputs (or the error in each).
template <typename T>
std::vector<Var> ApplyBatchNorm(std::vector<int> axes, const std::vector<Var>& inputs, size_t n) {
  BatchNormAttrs attrs{std::move(axes)};
  if (absl::Status s = attrs.Check(); !s.ok()) {
    return std::vector<Var>(
        n, Var(absl::InvalidArgumentError(absl::StrCat(T::kTypeName, ": ", s.message()))));
  }
  std::vector<VariablePtr> in;
  for (const Var& v : inputs) {
    if (!v.ok()) return std::vector<Var>(n, v);
    in.push_back(v.ptr());
  }
  absl::StatusOr<ApplyPtr> node = std::make_shared<T>(std::move(attrs))->MakeNode(std::move(in));
  if (!node.ok()) return std::vector<Var>(n, Var(node.status()));
  std::vector<Var> out;
  for (size_t i = 0; i < n; ++i) out.push_back(Var((*node)->output(i)));
  return out;
}

}  // namespace

absl::Status BatchNormAttrs::Check() const {
  if (axes.empty())
    return absl::InvalidArgumentError("there should be at least one axis in 'axes'");
  for (int a : axes) RETURN_IF_ERROR(CheckDimIndex("axes", a));
  return absl::OkStatus();
}

// --- AbstractBatchNormTrain -------------------------------------------------------------------

std::vector<std::vector<bool>> AbstractBatchNormTrain::ConnectionPattern(const Apply& node) const {
  const int n_out = node.num_outputs();
  std::vector<std::vector<bool>> p(node.num_inputs(), std::vector<bool>(n_out, false));
  for (int o = 0; o < n_out; ++o) p[0][o] = true;
  for (int i : {1, 2}) {
    for (int o = 0; o < 3; ++o) p[i][o] = true;
  }
  for (int i = 5; i < node.num_inputs(); ++i) p[i][i - 2] = true;
  return p;
}

absl::StatusOr<ApplyPtr> AbstractBatchNormTrain::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 5 && inputs.size() != 7) {
    return Invalid(*this, absl::StrCat("expects 5 or 7 inputs (x, scale, bias, epsilon, "
                                       "running_average_factor[, running_mean, running_var]), "
                                       "got ",
                                       inputs.size()));
  }
  std::vector<int> tensors = {0, 1, 2};
  if (inputs.size() == 7) tensors.insert(tensors.end(), {5, 6});
  RETURN_IF_ERROR(CheckInputs(*this, attrs().axes, inputs, kTrainNames, tensors, {3, 4}).status());
  std::vector<TypePtr> types = {TypeOf(inputs[0])};
  for (size_t k = 1; k < (inputs.size() == 7 ? 5u : 3u); ++k) types.push_back(TypeOf(inputs[1]));
  return Apply::Make(self(), std::move(inputs), std::move(types));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> AbstractBatchNormTrain::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  std::vector<ShapeVars> out = {in[0]};
  for (int k = 1; k < node.num_outputs(); ++k) out.push_back(in[1]);
  return out;
}

absl::Status AbstractBatchNormTrain::Perform(const Apply& node, std::span<const Tensor> inputs,
                                             std::vector<Tensor>& outputs) const {
  const Tensor x = inputs[0].AsType(DType::kFloat64);
  const Shape& shape = x.shape();
  const Shape reduced = batchnorm::ReducedShape(shape, attrs().axes);
  std::vector<Tensor> keep;
  ASSIGN_OR_RETURN(batchnorm::Operand scale,
                   OperandOf(*this, inputs[1], 1, kTrainNames, reduced, "the statistics", keep));
  ASSIGN_OR_RETURN(batchnorm::Operand bias,
                   OperandOf(*this, inputs[2], 2, kTrainNames, reduced, "the statistics", keep));
  // Read over x's shape: their dims are 1 along the axes.
  scale.strides = batchnorm::BroadcastStrides(inputs[1].shape(), shape);
  bias.strides = batchnorm::BroadcastStrides(inputs[2].shape(), shape);
  const double epsilon = inputs[3].ElementAsDouble(0);
  const double factor = inputs[4].ElementAsDouble(0);
  const double count = CountOver(shape, attrs().axes);

  ASSIGN_OR_RETURN(Tensor out, Doubles(*this, shape, node.output(0)->tensor_type()->dtype()));
  ASSIGN_OR_RETURN(Tensor mean, Doubles(*this, reduced, DType::kFloat64));
  ASSIGN_OR_RETURN(Tensor var, Doubles(*this, reduced, DType::kFloat64));
  RETURN_IF_ERROR(batchnorm::MeanVar(shape, x.data<double>(), reduced, count, mean.data<double>(),
                                     var.data<double>()));
  Tensor invstd = Tensor::Empty(DType::kFloat64, reduced);
  const int64_t n = invstd.size();
  for (int64_t r = 0; r < n; ++r) {
    invstd.data<double>()[r] = 1.0 / std::sqrt(var.data<double>()[r] + epsilon);
  }
  RETURN_IF_ERROR(batchnorm::Normalize(shape, x.data<double>(), reduced, mean.data<double>(),
                                       invstd.data<double>(), scale, bias, out.data<double>()));
  if (node.num_outputs() == 5) {
    ASSIGN_OR_RETURN(batchnorm::Operand rm,
                     OperandOf(*this, inputs[5], 5, kTrainNames, reduced, "the statistics", keep));
    ASSIGN_OR_RETURN(batchnorm::Operand rv,
                     OperandOf(*this, inputs[6], 6, kTrainNames, reduced, "the statistics", keep));
    // Aesara's m: the size of x over the size of scale.
    const double m = static_cast<double>(x.size()) / static_cast<double>(inputs[1].size());
    Tensor new_mean = Tensor::Empty(DType::kFloat64, reduced);
    Tensor new_var = Tensor::Empty(DType::kFloat64, reduced);
    // The statistics are contiguous of the reduced shape: walk them by their flat index.
    std::vector<int64_t> index(reduced.size(), 0);
    for (int64_t r = 0; r < n; ++r) {
      int64_t off_m = 0, off_v = 0;
      for (size_t d = 0; d < reduced.size(); ++d) {
        off_m += index[d] * rm.strides[d];
        off_v += index[d] * rv.strides[d];
      }
      new_mean.data<double>()[r] =
          rm.data[off_m] * (1.0 - factor) + mean.data<double>()[r] * factor;
      new_var.data<double>()[r] =
          rv.data[off_v] * (1.0 - factor) + (m / (m - 1)) * var.data<double>()[r] * factor;
      for (int d = static_cast<int>(reduced.size()) - 1; d >= 0; --d) {
        if (++index[d] < reduced[d]) break;
        index[d] = 0;
      }
    }
    outputs[3] = AsOutput(std::move(new_mean), node, 3);
    outputs[4] = AsOutput(std::move(new_var), node, 4);
  }
  outputs[0] = AsOutput(std::move(out), node, 0);
  outputs[1] = AsOutput(std::move(mean), node, 1);
  outputs[2] = AsOutput(std::move(invstd), node, 2);
  return absl::OkStatus();
}

// --- AbstractBatchNormInference ---------------------------------------------------------------

absl::StatusOr<ApplyPtr> AbstractBatchNormInference::MakeNode(
    std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 6) {
    return Invalid(*this, absl::StrCat("expects 6 inputs (x, scale, bias, estimated_mean, "
                                       "estimated_variance, epsilon), got ",
                                       inputs.size()));
  }
  RETURN_IF_ERROR(
      CheckInputs(*this, attrs().axes, inputs, kInferenceNames, {0, 1, 2, 3, 4}, {5}).status());
  TypePtr type = TypeOf(inputs[0]);
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> AbstractBatchNormInference::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0]};
}

absl::Status AbstractBatchNormInference::Perform(const Apply& node, std::span<const Tensor> inputs,
                                                 std::vector<Tensor>& outputs) const {
  const Tensor x = inputs[0].AsType(DType::kFloat64);
  const Shape& shape = x.shape();
  std::vector<Tensor> keep;
  std::vector<batchnorm::Operand> params;
  for (int i = 1; i <= 4; ++i) {
    ASSIGN_OR_RETURN(batchnorm::Operand p,
                     OperandOf(*this, inputs[i], i, kInferenceNames, shape, "x's values", keep));
    params.push_back(std::move(p));
  }
  ASSIGN_OR_RETURN(Tensor out, Doubles(*this, shape, node.output(0)->tensor_type()->dtype()));
  RETURN_IF_ERROR(batchnorm::Infer(shape, x.data<double>(), params[0], params[1], params[2],
                                   params[3], inputs[5].ElementAsDouble(0), out.data<double>()));
  outputs[0] = AsOutput(std::move(out), node, 0);
  return absl::OkStatus();
}

// --- AbstractBatchNormTrainGrad ---------------------------------------------------------------

absl::StatusOr<ApplyPtr> AbstractBatchNormTrainGrad::MakeNode(
    std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 6) {
    return Invalid(*this, absl::StrCat("expects 6 inputs (x, dy, scale, x_mean, x_invstd, "
                                       "epsilon), got ",
                                       inputs.size()));
  }
  RETURN_IF_ERROR(
      CheckInputs(*this, attrs().axes, inputs, kGradNames, {0, 1, 2, 3, 4}, {5}).status());
  TypePtr x_type = TypeOf(inputs[0]);
  TypePtr scale_type = TypeOf(inputs[2]);
  return Apply::Make(self(), std::move(inputs), {x_type, scale_type, scale_type});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> AbstractBatchNormTrainGrad::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<ShapeVars>{in[0], in[2], in[2]};
}

absl::Status AbstractBatchNormTrainGrad::Perform(const Apply& node, std::span<const Tensor> inputs,
                                                 std::vector<Tensor>& outputs) const {
  const Tensor x = inputs[0].AsType(DType::kFloat64);
  const Shape& shape = x.shape();
  const Shape reduced = batchnorm::ReducedShape(shape, attrs().axes);
  std::vector<Tensor> keep;
  std::vector<batchnorm::Operand> ops;
  for (int i = 1; i <= 4; ++i) {
    ASSIGN_OR_RETURN(batchnorm::Operand p,
                     OperandOf(*this, inputs[i], i, kGradNames, shape, "x's values", keep));
    ops.push_back(std::move(p));
  }
  ASSIGN_OR_RETURN(Tensor g_x, Doubles(*this, shape, node.output(0)->tensor_type()->dtype()));
  ASSIGN_OR_RETURN(Tensor g_scale, Doubles(*this, reduced, DType::kFloat64));
  ASSIGN_OR_RETURN(Tensor g_bias, Doubles(*this, reduced, DType::kFloat64));
  RETURN_IF_ERROR(batchnorm::TrainGrad(
      shape, x.data<double>(), reduced, CountOver(shape, attrs().axes), ops[0], ops[1], ops[2],
      ops[3], g_x.data<double>(), g_scale.data<double>(), g_bias.data<double>()));
  outputs[0] = AsOutput(std::move(g_x), node, 0);
  outputs[1] = AsOutput(std::move(g_scale), node, 1);
  outputs[2] = AsOutput(std::move(g_bias), node, 2);
  return absl::OkStatus();
}

// --- builders ---------------------------------------------------------------------------------

std::vector<Var> abstract_batch_norm_train(const Var& x, const Var& scale, const Var& bias,
                                           const Var& epsilon, const Var& running_average_factor,
                                           const Var& running_mean, const Var& running_var,
                                           std::vector<int> axes) {
  std::vector<Var> in = {x, scale, bias, epsilon, running_average_factor};
  const bool running = running_mean.ok() || running_var.ok();
  if (running) {
    in.push_back(running_mean);
    in.push_back(running_var);
  }
  return ApplyBatchNorm<AbstractBatchNormTrain>(std::move(axes), in, running ? 5 : 3);
}

Var abstract_batch_norm_inference(const Var& x, const Var& scale, const Var& bias,
                                  const Var& estimated_mean, const Var& estimated_variance,
                                  const Var& epsilon, std::vector<int> axes) {
  return ApplyBatchNorm<AbstractBatchNormInference>(
      std::move(axes), {x, scale, bias, estimated_mean, estimated_variance, epsilon}, 1)[0];
}

std::vector<Var> abstract_batch_norm_train_grad(const Var& x, const Var& dy, const Var& scale,
                                                const Var& x_mean, const Var& x_invstd,
                                                const Var& epsilon, std::vector<int> axes) {
  return ApplyBatchNorm<AbstractBatchNormTrainGrad>(std::move(axes),
                                                    {x, dy, scale, x_mean, x_invstd, epsilon}, 3);
}

}  // namespace kiln
