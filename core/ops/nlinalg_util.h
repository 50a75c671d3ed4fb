// What the nlinalg ops share (included by nlinalg*.cc only): input checks worded for the op, the
// dtype a kernel computes in, and tensors seen as the kernels' strided matrices.
#ifndef KILN_CORE_OPS_NLINALG_UTIL_H_
#define KILN_CORE_OPS_NLINALG_UTIL_H_

#include <complex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/graph/basic.h"
#include "core/graph/op.h"
#include "core/graph/type.h"
#include "core/graph/var.h"
#include "core/ops/nlinalg_kernels.h"
#include "core/tensor/tensor.h"

namespace kiln::nlinalg {

// The dtype the kernels compute in for `dtype`: float32 for float16 and float32, complex64 and
// complex128 as they are, float64 for the rest (bool, integers, float64).
DType ComputeDType(DType dtype);

// Input i as a tensor of rank `ndim`, or INVALID_ARGUMENT: "input 0 has type ... but a matrix is
// needed".
absl::StatusOr<const TensorType*> ExpectRank(const Op& op, const std::vector<VariablePtr>& in,
                                             size_t i, int ndim);

// INVALID_ARGUMENT when the static shape of input 0 (a matrix) is known not to be square.
absl::Status CheckStaticSquare(const Op& op, const TensorType& x);

// INVALID_ARGUMENT (numpy's words) when the matrix value x is not square; RESOURCE_EXHAUSTED
// as CheckFits says.
absl::Status CheckSquare(const Op& op, const Tensor& x);

// RESOURCE_EXHAUSTED, before anything is allocated, when the copy of the matrix value x (input 0)
// that the kernels make in the compute dtype would not fit the call's memory (a broadcast view of
// a 10^6-square matrix).
absl::Status CheckFits(const Op& op, const Tensor& x);

// x in `dtype`: x itself when it has it (any strides), else a contiguous converted copy.
Tensor InDType(const Tensor& x, DType dtype);

// A kernel's error with the op's name first (INTERNAL and budget errors pass unchanged).
absl::Status OpError(const Op& op, const absl::Status& status);

// The matrix view of a 2-d tensor, or of a 1-d one as a column.
template <typename T>
MatrixRef<const T> ConstMatrix(const Tensor& t) {
  const auto& st = t.strides();
  if (t.ndim() == 1) return {t.data<T>(), t.shape()[0], 1, st[0], 1};
  return {t.data<T>(), t.shape()[0], t.shape()[1], st[0], st[1]};
}
template <typename T>
MatrixRef<T> MutableMatrix(Tensor& t) {
  const auto& st = t.strides();
  if (t.ndim() == 1) return {t.data<T>(), t.shape()[0], 1, st[0], 1};
  return {t.data<T>(), t.shape()[0], t.shape()[1], st[0], st[1]};
}

// Calls fn(T()) with T the C++ type of `compute` (float32, float64, complex64 or complex128).
template <typename Fn>
absl::Status DispatchCompute(DType compute, Fn&& fn) {
  switch (compute) {
    case DType::kFloat32:
      return fn(float());
    case DType::kComplex64:
      return fn(std::complex<float>());
    case DType::kComplex128:
      return fn(std::complex<double>());
    default:
      return fn(double());
  }
}

// The real dtype of a compute dtype (float32 for complex64).
DType RealDType(DType compute);

// Every output of `node`, as Vars.
std::vector<Var> OutputsOf(const ApplyPtr& node);

}  // namespace kiln::nlinalg

#endif  // KILN_CORE_OPS_NLINALG_UTIL_H_
