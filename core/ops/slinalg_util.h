// Private to the slinalg ops' sources: the dtype rules of scipy.linalg, the checks of matrix
// inputs (types at make_node, values at run time) and the dispatch of a kernel on LAPACK's four
// element types.
#ifndef KILN_CORE_OPS_SLINALG_UTIL_H_
#define KILN_CORE_OPS_SLINALG_UTIL_H_

#include <complex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/graph/op.h"
#include "core/graph/type.h"
#include "core/ops/slinalg_kernels.h"
#include "core/tensor/tensor.h"

namespace kiln::slinalg {

// The LAPACK dtype scipy.linalg computes a and b in (find_best_lapack_type): float32 for dtypes
// float32 holds exactly (float16, small ints, bool), else float64; complex when either is.
DType LapackDType(DType a, DType b);
// The same for one input.
inline DType LapackDType(DType a) { return LapackDType(a, a); }

// Input i of a node as a tensor of `ndim` dims (or of one of {1, 2} when ndim is -1: a vector or
// a matrix), of a numeric dtype; else INVALID_ARGUMENT naming the op, the input and its type.
absl::StatusOr<const TensorType*> MatrixInput(const Op& op, const std::vector<VariablePtr>& in,
                                              size_t i, const char* name, int ndim);

// OK unless the matrix type t (input i, `name`) has two known dims that differ.
absl::Status CheckStaticSquare(const Op& op, const TensorType& t, size_t i, const char* name);

// OK when the value of input i (`name`) is a square matrix; else Aesara's words.
absl::Status CheckSquare(const Op& op, const Tensor& t, int i, const char* name);

// OK when the value of input i has every dim at most kMaxLapackDim.
absl::Status CheckLapackDims(const Op& op, const Tensor& t, int i, const char* name);

// OK when every element of t is finite; else scipy's check_finite error.
absl::Status CheckFinite(const Op& op, const Tensor& t, int i, const char* name);

// t of dtype `dtype` (converted when it is not), as a matrix view: a vector is one column.
template <typename T>
MatrixRef<const T> ConstRef(const Tensor& t) {
  if (t.ndim() == 1) return {t.data<T>(), t.shape()[0], 1, t.strides()[0], 1};
  return {t.data<T>(), t.shape()[0], t.shape()[1], t.strides()[0], t.strides()[1]};
}

// A writable matrix view of a contiguous tensor (a vector is one column).
template <typename T>
MatrixRef<T> MutRef(Tensor& t) {
  if (t.ndim() == 1) return {t.data<T>(), t.shape()[0], 1, 1, 1};
  return {t.data<T>(), t.shape()[0], t.shape()[1], t.shape()[1], 1};
}

// f(T{}) for the element type of a LAPACK dtype (float32, float64, complex64, complex128).
template <typename F>
auto DispatchLapack(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      return f(float{});
    case DType::kComplex64:
      return f(std::complex<float>{});
    case DType::kComplex128:
      return f(std::complex<double>{});
    default:
      return f(double{});
  }
}

// t converted to `dtype` when it has another one (a view of t itself otherwise).
inline Tensor Converted(const Tensor& t, DType dtype) {
  return t.dtype() == dtype ? t : t.AsType(dtype);
}

}  // namespace kiln::slinalg

#endif  // KILN_CORE_OPS_SLINALG_UTIL_H_
