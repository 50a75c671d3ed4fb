#include "core/graph/var.h"

#include "core/tensor/check.h"
#include "core/graph/op.h"

namespace kiln {

Var::Var(absl::Status error) : error_(std::move(error)) {
  KILN_CHECK(!error_.ok()) << "a failed Var needs an error";
}

Var::Var(absl::StatusOr<VariablePtr> v) {
  if (v.ok()) {
    ptr_ = *std::move(v);
  } else {
    error_ = v.status();
  }
}

absl::Status Var::status() const {
  if (ok()) return absl::OkStatus();
  if (!error_.ok()) return error_;
  return absl::FailedPreconditionError("the Var holds no variable");
}

const VariablePtr& Var::ptr() const {
  KILN_CHECK(ok()) << "using a failed Var: " << status();
  return ptr_;
}

const TensorType& Var::type() const {
  const TensorType* t = ptr()->tensor_type();
  KILN_CHECK(t != nullptr) << ptr_->ToString() << " is not a tensor";
  return *t;
}

absl::StatusOr<VariablePtr> Unwrap(const Var& v) {
  if (!v.ok()) return v.status();
  return v.ptr();
}

Var ApplyOp(const absl::StatusOr<OpPtr>& op, std::vector<Var> inputs) {
  if (!op.ok()) return Var(op.status());
  std::vector<VariablePtr> vars;
  for (const Var& v : inputs) {
    if (!v.ok()) return v;
    vars.push_back(v.ptr());
  }
  absl::StatusOr<ApplyPtr> node = (*op)->MakeNode(std::move(vars));
  if (!node.ok()) return Var(node.status());
  return Var((*node)->output(0));
}

}  // namespace kiln
