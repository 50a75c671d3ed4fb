// Aesara's verify_grad: checks a symbolic gradient against one-sided finite differences of a
// random projection of the output, for tests and users.
#ifndef KILN_CORE_GRAD_VERIFY_GRAD_H_
#define KILN_CORE_GRAD_VERIFY_GRAD_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "core/graph/op.h"
#include "core/graph/var.h"
#include "core/tensor/tensor.h"

namespace kiln {

struct VerifyGradOptions {
  int n_tests = 2;
  uint64_t seed = 42;
  // Step and tolerances; by default from the inputs' dtypes (float64: eps 1e-7, tolerance 1e-4;
  // float32: 3e-4, 1e-2; float16: 1e-1, 5e-2).
  std::optional<double> eps, abs_tol, rel_tol;
};

// OK when, at the point `pt`, the gradient of sum(u * fun(inputs)) for random u in [0.5, 1.5)
// matches finite differences within abs_tol or rel_tol at every element; else an error in
// Aesara's GradientError format naming the argument, the position and both values.
absl::Status verify_grad(const std::function<Var(const std::vector<Var>&)>& fun,
                         const std::vector<Tensor>& pt, const VerifyGradOptions& options = {});
// The same for an op applied to the inputs (its first output).
absl::Status verify_grad(const OpPtr& op, const std::vector<Tensor>& pt,
                         const VerifyGradOptions& options = {});

}  // namespace kiln

#endif  // KILN_CORE_GRAD_VERIFY_GRAD_H_
