// Eigen matrices in and out of the client: a dense Eigen expression as a Tensor (copied, C
// order) and a 1-D or 2-D Tensor as a row-major Eigen matrix. Separate from client.h so that
// only callers who use Eigen include it.
#ifndef KILN_CLIENT_CPP_EIGEN_H_
#define KILN_CLIENT_CPP_EIGEN_H_

#include <Eigen/Core>
#include <cstdint>
#include <type_traits>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/tensor/tensor.h"

namespace kiln::client {

// The DType of an Eigen scalar Kiln can hold.
template <typename T>
constexpr DType EigenDType() {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float> ||
                    std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t>,
                "Kiln takes double, float, int64_t or int32_t matrices");
  if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  return DType::kInt32;
}

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A (rows, cols) tensor of the expression's values; a vector stays 2-D (n, 1) or (1, n).
template <typename Derived>
Tensor FromEigen(const Eigen::DenseBase<Derived>& m) {
  using T = typename Derived::Scalar;
  Tensor t = Tensor::Empty(EigenDType<T>(), {m.rows(), m.cols()});
  Eigen::Map<RowMajorMatrix<T>>(t.data<T>(), m.rows(), m.cols()) = m;
  return t;
}

// The tensor as a row-major matrix: 2-D as is, 1-D as one column, 0-D as 1x1.
// INVALID_ARGUMENT for another rank or dtype.
template <typename T>
absl::StatusOr<RowMajorMatrix<T>> ToEigen(const Tensor& t) {
  if (t.dtype() != EigenDType<T>()) {
    return absl::InvalidArgumentError(absl::StrCat("ToEigen: the tensor has dtype ",
                                                   DTypeName(t.dtype()), ", not ",
                                                   DTypeName(EigenDType<T>())));
  }
  if (t.ndim() > 2) {
    return absl::InvalidArgumentError(absl::StrCat("ToEigen: the tensor has ", t.ndim(), " dims"));
  }
  const Tensor c = t.Contiguous();
  const int64_t rows = c.ndim() == 0 ? 1 : c.shape()[0];
  const int64_t cols = c.ndim() == 2 ? c.shape()[1] : 1;
  return RowMajorMatrix<T>(Eigen::Map<const RowMajorMatrix<T>>(c.data<T>(), rows, cols));
}

}  // namespace kiln::client

#endif  // KILN_CLIENT_CPP_EIGEN_H_
