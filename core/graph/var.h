// Var: the handle users build expressions with (Aesara's TensorVariable). A Var holds a graph
// variable or, when building it failed, the error; operations on a failed Var pass its error on,
// so `auto y = (x + z) * 2.0;` needs no checks until the result is used.
#ifndef KILN_CORE_GRAPH_VAR_H_
#define KILN_CORE_GRAPH_VAR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/graph/basic.h"

namespace kiln {

class Var {
 public:
  // A Var that holds nothing (its status says so).
  Var() = default;
  // A Var for an existing variable.
  Var(VariablePtr v) : ptr_(std::move(v)) {}  // NOLINT: implicit by design
  // A failed Var carrying `error` (which must not be OK).
  Var(absl::Status error);             // NOLINT: implicit by design
  Var(absl::StatusOr<VariablePtr> v);  // NOLINT: implicit by design

  // True when the Var holds a variable.
  bool ok() const { return ptr_ != nullptr; }
  // OK, or why the expression could not be built.
  absl::Status status() const;

  // The variable; the Var must be ok().
  const VariablePtr& ptr() const;
  Variable* operator->() const { return ptr().get(); }
  Variable& operator*() const { return *ptr(); }

  // Aesara's TensorVariable attributes; the Var must be ok() and tensor-typed.
  const TensorType& type() const;
  int ndim() const { return type().ndim(); }
  DType dtype() const { return type().dtype(); }
  // Aesara's str(var).
  std::string ToString() const { return ok() ? ptr_->ToString() : status().ToString(); }

 private:
  VariablePtr ptr_;
  absl::Status error_;
};

// The Var's variable or its error, for functions that return a Status.
absl::StatusOr<VariablePtr> Unwrap(const Var& v);

// Output 0 of `op` applied to `inputs`: the first error among the op and the inputs, or the
// op's MakeNode error, or the new variable.
Var ApplyOp(const absl::StatusOr<OpPtr>& op, std::vector<Var> inputs);

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_VAR_H_
