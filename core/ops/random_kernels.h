// The samplers behind Aesara's RandomVariable ops, on Philox (core/ops/philox.h): each batch
// element of a call draws from its own counter, so results depend on the seed and the call's
// counter only, never on the thread count.
#ifndef KILN_CORE_OPS_RANDOM_KERNELS_H_
#define KILN_CORE_OPS_RANDOM_KERNELS_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/tensor/tensor.h"

namespace kiln::random {

// What Aesara's RandomVariable subclass declares: name, ndim_supp, ndims_params, dtype.
struct Distribution {
  const char* name;               // "normal": the op prints as normal_rv
  int ndim_supp;                  // dims of one draw (1 for dirichlet)
  std::vector<int> ndims_params;  // dims of one draw's value of each parameter
  const char* dtype;              // "floatX", "int64" or "None" (the first parameter's dtype)
  std::vector<const char*> params;  // Aesara's parameter names, for errors: {"loc", "scale"}
  uint32_t integer_params = 0;  // bit k: parameter k is sampled as int64 (binomial's n)
  int supp_param = 0;           // the parameter whose last dims give a draw's (multinomial: p)
  bool IsIntegerParam(size_t k) const { return (integer_params >> k) & 1; }
};

// The distribution named `name`, or nullptr.
const Distribution* FindDistribution(absl::string_view name);
// Every distribution, for tests and errors.
std::span<const Distribution> Distributions();

// One parameter of a call, broadcast to the batch: its float64 values (contiguous) and, per
// batch dim, its stride in one-draw units (0 where it is broadcast).
struct Param {
  Tensor values;  // float64; int64 for the distribution's integer parameters (IsIntegerParam)
  std::vector<int64_t> batch_strides;
  Shape supp_shape;  // its last ndims_params dims
};

// Checks the parameters' values (scale >= 0, 0 <= p <= 1...) and draws every batch element of a
// call into `out` (float64 or int64, contiguous, batch shape + support shape), from counters
// counter to counter + batch size - 1.
absl::Status Sample(const Distribution& dist, uint64_t key, uint64_t counter, const Shape& batch,
                    std::span<const Param> params, Tensor& out);

// A permutation of [0, n) as an int64 vector (Fisher-Yates on the stream of `counter`); polls the
// call's interrupt.
absl::StatusOr<Tensor> Permutation(uint64_t key, uint64_t counter, int64_t n);

// n indices into a population of `len`, weighted by p (empty: uniform), with or without
// replacement (then n <= len). With replacement index i draws from counter + i.
// The indices are an int64 vector; every buffer is a tensor (charged to the call's budget), and
// the draw without replacement by weight, quadratic, polls the call's interrupt.
absl::StatusOr<Tensor> Choice(uint64_t key, uint64_t counter, int64_t len,
                              std::span<const double> p, bool replace, int64_t n);

}  // namespace kiln::random

#endif  // KILN_CORE_OPS_RANDOM_KERNELS_H_
