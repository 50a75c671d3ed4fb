// The product kernels: 2-D blocks on OpenBLAS (float32, float64, complex) or Eigen (integers,
// bool, float16 via float32), batched over broadcast leading dims.
#include <cblas.h>

#include <Eigen/Core>
#include <algorithm>
#include <complex>

#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "core/ops/elemwise_loops.h"
#include "core/ops/linalg.h"
#include "core/ops/op_util.h"
#include "core/tensor/dtype_dispatch.h"

namespace kiln {
namespace {

// One 2-D operand: data and element strides (rows, cols).
template <typename T>
struct Mat {
  const T* data;
  int64_t rows, cols, rs, cs;
};

// BLAS takes a row-major operand with unit column stride, or its transpose with unit row stride.
template <typename T>
bool BlasLayout(const Mat<T>& m, CBLAS_TRANSPOSE* trans, int64_t* ld) {
  if (m.cs == 1 && m.rs >= std::max<int64_t>(1, m.cols)) {
    *trans = CblasNoTrans;
    *ld = m.rs;
    return true;
  }
  if (m.rs == 1 && m.cs >= std::max<int64_t>(1, m.rows)) {
    *trans = CblasTrans;
    *ld = m.cs;
    return true;
  }
  return false;
}

template <typename T>
constexpr bool kHasBlas =
    std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// y (contiguous) = alpha * op(m) @ x + beta * y, where op(m) is m (rows x cols) or, when
// transpose is set, its transpose; x has element stride incx (> 0).
template <typename T>
void Gemv(const Mat<T>& m, bool transpose, const T* x, int64_t incx, T alpha, T beta, T* y) {
  CBLAS_TRANSPOSE t;
  int64_t ld;
  BlasLayout(m, &t, &ld);
  // BLAS sees the stored matrix: rows x cols when untransposed, cols x rows otherwise.
  const bool stored_trans = t == CblasTrans;
  const int64_t rows = stored_trans ? m.cols : m.rows, cols = stored_trans ? m.rows : m.cols;
  const CBLAS_TRANSPOSE op = stored_trans != transpose ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemv(CblasRowMajor, op, rows, cols, alpha, m.data, ld, x, incx, beta, y, 1);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemv(CblasRowMajor, op, rows, cols, alpha, m.data, ld, x, incx, beta, y, 1);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    cblas_cgemv(CblasRowMajor, op, rows, cols, &alpha, m.data, ld, x, incx, &beta, y, 1);
  } else {
    cblas_zgemv(CblasRowMajor, op, rows, cols, &alpha, m.data, ld, x, incx, &beta, y, 1);
  }
}

// c (m x n, contiguous) = alpha * a @ b + beta * c. Written in full even when beta is 0, so c
// may start uninitialised.
template <typename T>
void Gemm2D(const Mat<T>& a, const Mat<T>& b, T alpha, T beta, T* c) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) >= sizeof(int)) {
    // Integer products wrap around, as in NumPy and the elementwise kernels: in unsigned
    // arithmetic, which gives the same bits without signed overflow.
    using U = std::make_unsigned_t<T>;
    auto as_unsigned = [](const Mat<T>& x) {
      return Mat<U>{reinterpret_cast<const U*>(x.data), x.rows, x.cols, x.rs, x.cs};
    };
    return Gemm2D<U>(as_unsigned(a), as_unsigned(b), static_cast<U>(alpha), static_cast<U>(beta),
                     reinterpret_cast<U*>(c));
  }
  const int64_t m = a.rows, n = b.cols, k = a.cols;
  if (m == 0 || n == 0) return;
  if constexpr (kHasBlas<T>) {
    CBLAS_TRANSPOSE ta, tb;
    int64_t lda, ldb;
    // A matrix times a vector: BLAS's gemm packs its operands, gemv streams the matrix once.
    if (k > 0 && n == 1 && b.rs > 0 && BlasLayout(a, &ta, &lda)) {
      return Gemv(a, false, b.data, b.rs, alpha, beta, c);
    }
    if (k > 0 && m == 1 && a.cs > 0 && BlasLayout(b, &tb, &ldb)) {
      return Gemv(b, true, a.data, a.cs, alpha, beta, c);
    }
    if (k > 0 && BlasLayout(a, &ta, &lda) && BlasLayout(b, &tb, &ldb)) {
      if constexpr (std::is_same_v<T, float>) {
        cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a.data, lda, b.data, ldb, beta, c, n);
      } else if constexpr (std::is_same_v<T, double>) {
        cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a.data, lda, b.data, ldb, beta, c, n);
      } else if constexpr (std::is_same_v<T, std::complex<float>>) {
        cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, &alpha, a.data, lda, b.data, ldb, &beta, c, n);
      } else {
        cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, &alpha, a.data, lda, b.data, ldb, &beta, c, n);
      }
      return;
    }
  }
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Strided = Eigen::Map<const Matrix, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
  Strided ma(a.data, m, k, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(a.rs, a.cs));
  Strided mb(b.data, k, n, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(b.rs, b.cs));
  Eigen::Map<Matrix> mc(c, m, n);
  if (beta == T(0)) {
    mc.noalias() = alpha * (ma * mb);
  } else {
    mc = beta * mc;
    mc.noalias() += alpha * (ma * mb);
  }
}

// numpy.matmul of a (..., m, k) and b (..., k, n), both already of rank >= 2, into out
// (batch..., m, n), scaled: out = alpha * a @ b + beta * out.
template <typename T>
void BatchedMatMul(const Tensor& a, const Tensor& b, Tensor& out, T alpha, T beta) {
  const int nd = out.ndim();
  const Shape batch(out.shape().begin(), out.shape().end() - 2);
  auto batch_strides = [&](const Tensor& t) {
    Shape s(batch.size(), 0);
    const int pad = static_cast<int>(batch.size()) - (t.ndim() - 2);
    for (int d = 0; d < t.ndim() - 2; ++d) {
      if (t.shape()[d] == batch[pad + d]) s[pad + d] = t.strides()[d];
    }
    return s;
  };
  const Shape sa = batch_strides(a), sb = batch_strides(b);
  const int64_t m = out.shape()[nd - 2], n = out.shape()[nd - 1], k = a.shape()[a.ndim() - 1];
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  // One matrix b for every batch, and a's batch dims stepping over its rows evenly (a stack of
  // rows, as a (batch..., m, k) activation times a weight matrix is): one GEMM of all the rows.
  const int64_t row_stride = a.strides()[a.ndim() - 2];
  bool rows = a.ndim() == nd && std::all_of(sb.begin(), sb.end(), [](int64_t v) { return v == 0; });
  for (int64_t d = nd - 3, span = m; rows && d >= 0; span *= a.shape()[d], --d) {
    rows = a.shape()[d] == batch[d] && (a.shape()[d] == 1 || a.strides()[d] == row_stride * span);
  }
  const Mat<T> mb{pb, k, n, b.strides()[b.ndim() - 2], b.strides()[b.ndim() - 1]};
  if (rows && nd > 2) {
    Mat<T> ma{pa, ShapeSize(batch) * m, k, row_stride, a.strides()[a.ndim() - 1]};
    Gemm2D(ma, mb, alpha, beta, po);
    return;
  }
  // A (batch, m, k) stack stored as (m, batch, k), as a transposed sequence-first activation is:
  // one GEMM of the rows in memory order, each result row then copied to its place.
  const int64_t stack = nd == 3 ? out.shape()[0] : 0;
  if (nd == 3 && a.ndim() == 3 && beta == T(0) && a.shape()[0] == stack && stack > 1 && m > 1 &&
      sb[0] == 0 && a.strides()[1] == stack * a.strides()[0]) {
    std::vector<T> by_rows(static_cast<size_t>(m * stack * n));
    Gemm2D(Mat<T>{pa, m * stack, k, a.strides()[0], a.strides()[2]}, mb, alpha, T(0),
           by_rows.data());
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t s = 0; s < stack; ++s) {
        std::copy_n(by_rows.data() + (i * stack + s) * n, n, po + (s * m + i) * n);
      }
    }
    return;
  }
  const int64_t block = m * n;
  auto run = [&](int64_t flat, int64_t count, auto& off) {
    for (int64_t i = 0; i < count; ++i) {
      const int64_t ia = off[0] + i * (sa.empty() ? 0 : sa.back());
      const int64_t ib = off[1] + i * (sb.empty() ? 0 : sb.back());
      Mat<T> ma{pa + ia, m, k, a.strides()[a.ndim() - 2], a.strides()[a.ndim() - 1]};
      Mat<T> mb{pb + ib, k, n, b.strides()[b.ndim() - 2], b.strides()[b.ndim() - 1]};
      Gemm2D(ma, mb, alpha, beta, po + (flat + i) * block);
    }
  };
  loops::ForEachRun<2>(batch, {&sa, &sb}, 0, ShapeSize(batch), run);
}

// The tensor as a matrix view: 1-D as a row (first operand) or a column (second operand). The
// added dim gets a stride that keeps a contiguous vector acceptable to BLAS.
Tensor AsMatrix(const Tensor& t, bool first) {
  if (t.ndim() >= 2) return t;
  const int64_t n = t.shape()[0], s = t.strides()[0];
  if (first) return t.View({1, n}, {std::max<int64_t>(1, n * s), s});
  return t.View({n, 1}, {s, 1});
}

// What a product kernel computes: a@b, or Gemm's or Gemv's scaled update of input 0.
enum class ProductForm { kPlain, kGemm, kGemv };

// The kernel of the five product ops; `inplace` lets Gemm and Gemv write into input 0.
absl::Status RunProduct(const Op& op, ProductForm form, bool inplace, const Apply& node,
                        std::span<const Tensor> inputs, std::vector<Tensor>& outputs) {
  const TensorType* out_type = node.output_ptr(0)->tensor_type();
  const DType out_dtype = out_type->dtype();
  const bool scaled = form != ProductForm::kPlain;
  const bool gemv = form == ProductForm::kGemv;
  const Tensor& a_in = scaled ? inputs[2] : inputs[0];
  const Tensor& b_in = scaled ? inputs[3] : inputs[1];
  Tensor a = AsMatrix(a_in, true), b = AsMatrix(b_in, false);
  const int64_t ka = a.shape()[a.ndim() - 1], kb = b.shape()[b.ndim() - 2];
  if (ka != kb) {
    return absl::InvalidArgumentError(
        absl::StrCat(op.Name(), ": shapes ", ShapeToString(a_in.shape()), " and ",
                     ShapeToString(b_in.shape()), " not aligned: ", ka, " (dim ", a_in.ndim() - 1,
                     ") != ", kb, " (dim ", b_in.ndim() >= 2 ? b_in.ndim() - 2 : 0, ")"));
  }
  // The output shape: broadcast batch dims, then (m, n).
  const int nd = std::max(a.ndim(), b.ndim());
  Shape shape(nd, 1);
  for (int d = 0; d < nd - 2; ++d) {
    const int da = d - (nd - a.ndim()), db = d - (nd - b.ndim());
    const int64_t x = da >= 0 ? a.shape()[da] : 1, y = db >= 0 ? b.shape()[db] : 1;
    if (x != y && x != 1 && y != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(op.Name(), ": batch shapes ", ShapeToString(a_in.shape()), " and ",
                       ShapeToString(b_in.shape()), " do not broadcast"));
    }
    shape[d] = x == 1 ? y : x;  // a dim of 0 against 1 broadcasts to 0
  }
  shape[nd - 2] = a.shape()[a.ndim() - 2];
  shape[nd - 1] = b.shape()[b.ndim() - 1];

  const DType compute = out_dtype == DType::kFloat16 ? DType::kFloat32
                        : out_dtype == DType::kBool  ? DType::kInt64
                                                     : out_dtype;
  // Empty operands (2^46, 0) @ (0, 2^46) make a product whose size overflows: refused first.
  RETURN_IF_ERROR(CheckOutputShape(op, shape, compute));
  if (a.dtype() != compute) a = a.AsType(compute);
  if (b.dtype() != compute) b = b.AsType(compute);
  Tensor out;
  if (scaled) {
    const Tensor& z = inputs[0];
    if (z.shape() != (gemv ? Shape{shape[0]} : shape)) {
      return absl::InvalidArgumentError(absl::StrCat(
          op.Name(), ": input 0 has shape ", ShapeToString(z.shape()),
          " but the product has shape ", ShapeToString(gemv ? Shape{shape[0]} : shape)));
    }
    // In place (Gemm{inplace}): z's own buffer, which the runtime hands over only when nothing
    // else reads it; otherwise a fresh copy, updated in place.
    out = inplace && z.dtype() == compute && z.is_contiguous() ? z : z.AsType(compute);
  } else {
    out = Tensor::Empty(compute, shape);  // every product kernel writes all of it
  }
  DispatchDType(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, Eigen::half> && !std::is_same_v<T, bool>) {
      T alpha(1), beta(0);
      if (scaled) {  // Gemm (z, a, x, y, b) and Gemv (y, alpha, A, x, beta)
        alpha = inputs[1].AsType(compute).template data<T>()[0];
        beta = inputs[4].AsType(compute).template data<T>()[0];
      }
      Tensor target = gemv ? out.View({shape[0], 1}, {1, 1}) : out;
      BatchedMatMul<T>(a, b, target, alpha, beta);
    }
  });
  // Drop the dims that 1-D operands gained.
  Shape final_shape;
  if (gemv) {
    final_shape = {shape[0]};
  } else {
    final_shape.assign(shape.begin(), shape.end());
    if (b_in.ndim() == 1) final_shape.erase(final_shape.end() - 1);
    if (a_in.ndim() == 1) final_shape.erase(final_shape.end() - (b_in.ndim() == 1 ? 1 : 2));
  }
  out = out.View(final_shape, ContiguousStrides(final_shape));
  if (out_dtype == DType::kBool) {
    outputs[0] = out.AsType(DType::kBool);
  } else {
    outputs[0] = out.dtype() == out_dtype ? std::move(out) : out.AsType(out_dtype);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Dot::Perform(const Apply& node, std::span<const Tensor> inputs,
                          std::vector<Tensor>& outputs) const {
  return RunProduct(*this, ProductForm::kPlain, false, node, inputs, outputs);
}
absl::Status MatMul::Perform(const Apply& node, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  return RunProduct(*this, ProductForm::kPlain, false, node, inputs, outputs);
}
absl::Status Dot22::Perform(const Apply& node, std::span<const Tensor> inputs,
                            std::vector<Tensor>& outputs) const {
  return RunProduct(*this, ProductForm::kPlain, false, node, inputs, outputs);
}
absl::Status Gemm::Perform(const Apply& node, std::span<const Tensor> inputs,
                           std::vector<Tensor>& outputs) const {
  return RunProduct(*this, ProductForm::kGemm, attrs().inplace, node, inputs, outputs);
}
absl::Status Gemv::Perform(const Apply& node, std::span<const Tensor> inputs,
                           std::vector<Tensor>& outputs) const {
  return RunProduct(*this, ProductForm::kGemv, attrs().inplace, node, inputs, outputs);
}

}  // namespace kiln
