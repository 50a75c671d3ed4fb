#include "core/ops/bn_composite.h"

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/composite.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(BNComposite);

namespace {

constexpr const char* kInputNames[] = {"x", "mean", "std", "gamma", "beta"};

// The Elemwise{Composite} op of ((i0 - i1) / i2) * i3 + i4 over inputs of these dtypes, built once
// per dtype combination (at most 256 kept).
absl::StatusOr<OpPtr> CompositeFor(const std::vector<DType>& dtypes) {
  static std::mutex mu;
  static auto* built = new std::map<std::vector<DType>, OpPtr>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = built->find(dtypes); it != built->end()) return it->second;
  std::vector<Var> in;
  for (DType d : dtypes) in.push_back(tensor(d, {}));
  const Var out = ((in[0] - in[1]) / in[2]) * in[3] + in[4];
  RETURN_IF_ERROR(out.status());
  ASSIGN_OR_RETURN(std::shared_ptr<const ScalarProgram> program,
                   ScalarProgram::FromGraph(in, {out}));
  OpPtr op = Elemwise::Make(ScalarOp(ScalarOpKind::kComposite, DType::kFloat64, program));
  if (built->size() >= 256) built->clear();  // dtype mixes a client sends stay bounded
  built->emplace(dtypes, op);
  return op;
}

// The Elemwise{Composite} node BNComposite's node stands for, on the same inputs.
absl::StatusOr<ApplyPtr> CompositeNode(const std::vector<VariablePtr>& inputs) {
  std::vector<DType> dtypes;
  for (const VariablePtr& v : inputs) dtypes.push_back(v->tensor_type()->dtype());
  ASSIGN_OR_RETURN(OpPtr op, CompositeFor(dtypes));
  return op->MakeNode(inputs);
}

}  // namespace

std::string BNComposite::Name() const {
  return "Elemwise{Composite{((((i0 - i1) / i2) * i3) + i4)}}";
}

absl::StatusOr<ApplyPtr> BNComposite::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 5) {
    return Invalid(*this, absl::StrCat("BNComposite expects 5 inputs (x, mean, std, gamma, "
                                       "beta), got ",
                                       inputs.size()));
  }
  for (int i = 0; i < 5; ++i) {
    const TensorType* t = inputs[i]->tensor_type();
    if (t == nullptr) {
      return Invalid(*this,
                     absl::StrCat("input ", i, " (", kInputNames[i], ") has type ",
                                  inputs[i]->type()->ToString(), ", which is not a TensorType"));
    }
    if (t->ndim() != inputs[0]->tensor_type()->ndim()) {
      return Invalid(*this,
                     absl::StrCat("input ", i, " (", kInputNames[i], ") has type ", t->ToString(),
                                  " but input 0 (x) has ", inputs[0]->type()->ToString(),
                                  ": the inputs must have one rank"));
    }
    if (IsComplex(t->dtype())) {
      return Invalid(*this, absl::StrCat("input ", i, " (", kInputNames[i], ") has type ",
                                         t->ToString(), ": complex values are not supported"));
    }
  }
  // The type (and the broadcasting errors) of the Elemwise{Composite} it prints as.
  ASSIGN_OR_RETURN(ApplyPtr composite, CompositeNode(inputs));
  TypePtr out = composite->output(0)->type();
  return Apply::Make(self(), std::move(inputs), {std::move(out)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> BNComposite::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  ASSIGN_OR_RETURN(ApplyPtr composite, CompositeNode(node.inputs()));
  return composite->op().InferShape(*composite, in);
}

absl::Status BNComposite::Perform(const Apply& node, std::span<const Tensor> inputs,
                                  std::vector<Tensor>& outputs) const {
  ASSIGN_OR_RETURN(ApplyPtr composite, CompositeNode(node.inputs()));
  return composite->op().Perform(*composite, inputs, outputs);
}

// BNComposite.grad: with top the output gradient, x - mean and top * gamma shared,
// dx = top * gamma / std, dmean = -dx, dstd = -(top * gamma * (x - mean)) / (std * std),
// dgamma = top * (x - mean) / std, dbeta = top; each summed over the dims its input was
// broadcast along (Elemwise's L_op).
std::vector<Var> BNComposite::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]), mean(node.inputs()[1]), std(node.inputs()[2]),
      gamma(node.inputs()[3]);
  const Var& top = g[0];
  const Var top_gamma = top * gamma;
  const Var x_mean = x - mean;
  const Var dx = top_gamma / std;
  std::vector<Var> grads = {dx, -dx, -(top_gamma * x_mean) / (std * std), top * x_mean / std, top};
  const StaticShape& out_shape = node.output_ptr(0)->tensor_type()->shape();
  for (int i = 0; i < 5; ++i) {
    const StaticShape& in_shape = node.inputs()[i]->tensor_type()->shape();
    std::vector<int> to_sum;
    for (size_t d = 0; d < in_shape.size(); ++d) {
      if (in_shape[d] == StaticDim(1) && out_shape[d] != StaticDim(1)) {
        to_sum.push_back(static_cast<int>(d));
      }
    }
    if (!to_sum.empty()) grads[i] = sum(grads[i], to_sum, /*keepdims=*/true);
  }
  return grads;
}

Var bn_composite(const Var& x, const Var& mean, const Var& std, const Var& gamma, const Var& beta) {
  std::vector<Var> inputs = {x, mean, std, gamma, beta};
  int ndim = 0;
  for (const Var& v : inputs) {
    if (!v.ok()) return v;
    if (v->tensor_type() != nullptr) ndim = std::max(ndim, v->tensor_type()->ndim());
  }
  for (Var& v : inputs) {
    const TensorType* t = v->tensor_type();
    if (t == nullptr || t->ndim() == ndim) continue;
    std::vector<int> order(ndim - t->ndim(), kX);
    for (int d = 0; d < t->ndim(); ++d) order.push_back(d);
    v = dimshuffle(v, std::move(order));
  }
  const DType dtype = x->tensor_type() != nullptr ? x->tensor_type()->dtype() : DType::kFloat64;
  return ApplyOp(OpPtr(std::make_shared<BNComposite>(BNCompositeAttrs{dtype})), inputs);
}

}  // namespace kiln
