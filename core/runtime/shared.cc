#include "core/runtime/shared.h"

#include "absl/strings/str_cat.h"

namespace kiln {

std::shared_ptr<SharedVariable> SharedVariable::Make(Tensor value, std::string name) {
  auto type = TensorType::Make(value.dtype(), StaticShape(value.ndim()));
  auto container = std::make_shared<SharedContainer>();
  {
    absl::MutexLock lock(&container->mutex);
    container->value = value.AsType(value.dtype());  // a private copy
  }
  return std::shared_ptr<SharedVariable>(
      new SharedVariable(std::move(type), std::move(name), std::move(container)));
}

VariablePtr SharedVariable::CloneDetached() const {
  return std::shared_ptr<SharedVariable>(new SharedVariable(type(), name(), container_));
}

const SharedVariable* AsShared(const Variable& v) {
  return dynamic_cast<const SharedVariable*>(&v);
}

Var shared(Tensor value, std::string name) {
  return Var(VariablePtr(SharedVariable::Make(std::move(value), std::move(name))));
}

absl::StatusOr<Tensor> get_value(const Var& shared_var) {
  if (!shared_var.ok()) return shared_var.status();
  const SharedVariable* s = AsShared(*shared_var);
  if (s == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(shared_var->ToString(), " is not shared"));
  }
  SharedContainer& c = *s->container();
  absl::MutexLock lock(&c.mutex);
  return c.value.AsType(c.value.dtype());
}

absl::Status set_value(const Var& shared_var, Tensor value) {
  if (!shared_var.ok()) return shared_var.status();
  const SharedVariable* s = AsShared(*shared_var);
  if (s == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(shared_var->ToString(), " is not shared"));
  }
  const TensorType& t = *s->tensor_type();
  if (value.dtype() != t.dtype() || value.ndim() != t.ndim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("set_value of ", s->ToString(), " (", t.ToString(), "): the value has dtype ",
                     DTypeName(value.dtype()), " and shape ", ShapeToString(value.shape())));
  }
  SharedContainer& c = *s->container();
  absl::MutexLock lock(&c.mutex);
  c.value = value.AsType(value.dtype());
  return absl::OkStatus();
}

}  // namespace kiln
