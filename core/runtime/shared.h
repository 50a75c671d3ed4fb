// Shared variables (Aesara's shared): graph leaves whose value lives in a container that every
// function using them reads, and that function updates replace atomically.
#ifndef KILN_CORE_RUNTIME_SHARED_H_
#define KILN_CORE_RUNTIME_SHARED_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/graph/basic.h"
#include "core/graph/var.h"
#include "core/tensor/tensor.h"

namespace kiln {

// The value of a shared variable; functions lock it to read it and to replace it.
struct SharedContainer {
  absl::Mutex mutex;
  Tensor value ABSL_GUARDED_BY(mutex);
};

class SharedVariable final : public Variable {
 public:
  // A shared variable of `value`'s dtype and rank (every dim of unknown size, as Aesara's shared).
  static std::shared_ptr<SharedVariable> Make(Tensor value, std::string name);
  const std::shared_ptr<SharedContainer>& container() const { return container_; }
  // Clones share the container: a function's copy of the graph reads and updates the same value.
  VariablePtr CloneDetached() const override;

 private:
  SharedVariable(TypePtr type, std::string name, std::shared_ptr<SharedContainer> container)
      : Variable(std::move(type), nullptr, 0, std::move(name)), container_(std::move(container)) {}
  std::shared_ptr<SharedContainer> container_;
};

// Aesara's shared(value, name).
Var shared(Tensor value, std::string name = "");
// The variable's current value (a copy the caller may write to).
absl::StatusOr<Tensor> get_value(const Var& shared_var);
// Replaces the value; it must have the variable's dtype and rank.
absl::Status set_value(const Var& shared_var, Tensor value);
// The shared variable behind v, or nullptr.
const SharedVariable* AsShared(const Variable& v);

}  // namespace kiln

#endif  // KILN_CORE_RUNTIME_SHARED_H_
