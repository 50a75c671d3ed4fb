#include "core/runtime/function.h"

#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "core/graph/op.h"
#include "core/passes/passes.h"

namespace kiln {
namespace {

absl::StatusOr<std::vector<VariablePtr>> UnwrapAll(const std::vector<Var>& vars) {
  std::vector<VariablePtr> result;
  for (const Var& v : vars) {
    absl::StatusOr<VariablePtr> p = Unwrap(v);
    if (!p.ok()) return p.status();
    result.push_back(*std::move(p));
  }
  return result;
}

// Aesara's TensorType.filter for a value bound to input `index`.
absl::StatusOr<Tensor> FilterInput(const Variable& input, int index, Tensor value) {
  const TensorType* type = input.tensor_type();
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("Bad input argument ", index, " (", input.ToString(), "): ", why));
  };
  if (type == nullptr) return bad("only tensor inputs are supported");
  if (value.ndim() != type->ndim()) {
    return bad(absl::StrCat("Wrong number of dimensions: expected ", type->ndim(), ", got ",
                            value.ndim(), " with shape ", ShapeToString(value.shape()), "."));
  }
  for (int d = 0; d < type->ndim(); ++d) {
    const StaticDim& dim = type->shape()[d];
    if (dim && *dim != value.shape()[d]) {
      return bad(absl::StrCat("The type's shape (", StaticShapeToString(type->shape()),
                              ") is not compatible with the data's (", ShapeToString(value.shape()),
                              ")"));
    }
  }
  if (value.dtype() == type->dtype()) return value;
  if (PromoteTypes(type->dtype(), value.dtype()) != type->dtype()) {
    return bad(absl::StrCat(type->ToString(), " cannot store a value of dtype ",
                            DTypeName(value.dtype()),
                            " without risking loss of precision. Cast the value to ",
                            DTypeName(type->dtype()), " first."));
  }
  return value.AsType(type->dtype());
}

}  // namespace

absl::StatusOr<Function> Function::Make(const std::vector<Var>& inputs,
                                        const std::vector<Var>& outputs,
                                        const FunctionOptions& options) {
  absl::StatusOr<std::vector<VariablePtr>> ins = UnwrapAll(inputs);
  if (!ins.ok()) return ins.status();
  absl::StatusOr<std::vector<VariablePtr>> outs = UnwrapAll(outputs);
  if (!outs.ok()) return outs.status();
  absl::StatusOr<std::unique_ptr<FunctionGraph>> fg =
      FunctionGraph::Make(*std::move(ins), *std::move(outs));
  if (!fg.ok()) return fg.status();
  RewriteOptions rewrite;
  rewrite.mode = options.mode;
  rewrite.trace = false;
  if (absl::StatusOr<RewriteReport> r = optimize(**fg, rewrite); !r.ok()) return r.status();
  Function f;
  f.schedule_ = (*fg)->Toposort();
  for (const VariablePtr& out : (*fg)->outputs()) {
    if (out->is_constant()) f.constants_.push_back(static_cast<const Constant&>(*out).data());
  }
  for (Apply* node : f.schedule_) {
    for (const VariablePtr& in : node->inputs()) {
      if (in->is_constant()) f.constants_.push_back(static_cast<const Constant&>(*in).data());
    }
  }
  f.fgraph_ = *std::move(fg);
  return f;
}

absl::StatusOr<std::vector<Tensor>> Function::operator()(std::vector<Tensor> args) const {
  const std::vector<VariablePtr>& inputs = fgraph_->inputs();
  if (args.size() != inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the function takes ", inputs.size(),
                                                   " inputs but was called with ", args.size()));
  }
  std::unordered_map<const Variable*, Tensor> values;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::StatusOr<Tensor> v = FilterInput(*inputs[i], static_cast<int>(i), std::move(args[i]));
    if (!v.ok()) return v.status();
    values[inputs[i].get()] = *std::move(v);
  }
  auto value_of = [&](const Variable* v) -> const Tensor& {
    if (v->is_constant()) return static_cast<const Constant*>(v)->data();
    return values.at(v);
  };
  for (Apply* node : schedule_) {
    std::vector<Tensor> in;
    for (const VariablePtr& v : node->inputs()) in.push_back(value_of(v.get()));
    std::vector<Tensor> out(node->num_outputs());
    if (absl::Status s = node->op().Perform(*node, in, out); !s.ok()) return s;
    for (int i = 0; i < node->num_outputs(); ++i) {
      const TensorType* t = node->output_ptr(i)->tensor_type();
      if (t != nullptr && (out[i].dtype() != t->dtype() || out[i].ndim() != t->ndim())) {
        return absl::InternalError(absl::StrCat(
            node->ToString(), ": output ", i, " has dtype ", DTypeName(out[i].dtype()),
            " and shape ", ShapeToString(out[i].shape()), " but its type is ", t->ToString()));
      }
      values[node->output_ptr(i)] = std::move(out[i]);
    }
  }
  // Outputs never alias the caller's arguments, the graph's constants or each other (as
  // Aesara's deep copy of outputs): a caller may write to what it gets back.
  std::vector<Tensor> results;
  for (const VariablePtr& out : fgraph_->outputs()) {
    Tensor value = value_of(out.get());
    bool shared = false;
    for (const VariablePtr& in : inputs) shared |= values.at(in.get()).SharesBufferWith(value);
    for (const Tensor& c : constants_) shared |= c.SharesBufferWith(value);
    for (const Tensor& previous : results) shared |= previous.SharesBufferWith(value);
    results.push_back(shared ? value.AsType(value.dtype()) : std::move(value));
  }
  return results;
}

}  // namespace kiln
