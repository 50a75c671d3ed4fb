// The batched kernels (batch_kernel.h) of Cholesky, Solve, SolveTriangular and CholeskySolve for
// float32/float64 matrices of n <= small_linalg::kMaxDim: each item gathered (and checked finite)
// into a contiguous buffer, solved by small_linalg's kernels straight into its output slot, the
// items split over the cores. An item the kernels cannot settle (non-finite input, not positive
// definite, singular) is left to the op's Perform, which gives its exact result or error.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <type_traits>

#include "core/ops/batch_kernel.h"
#include "core/ops/slinalg.h"
#include "core/ops/small_linalg.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/parallel.h"

namespace kiln {
namespace {

namespace sl = small_linalg;

// Items per interrupt poll.
constexpr int64_t kPollItems = 256;

// A core matrix (or vector: one column) of an input: its dims and element strides.
struct CoreDims {
  int rows = 0, cols = 1;
  int64_t row_stride = 0, col_stride = 0;
};

// Input t's core dims, given their count (1 or 2); false when a dim passes int's range.
bool CoreOf(const Tensor& t, int core_ndim, CoreDims* d) {
  const int nd = t.ndim();
  const int64_t rows = t.shape()[nd - core_ndim];
  const int64_t cols = core_ndim == 2 ? t.shape()[nd - 1] : 1;
  if (rows > std::numeric_limits<int>::max() || cols > std::numeric_limits<int>::max()) {
    return false;
  }
  d->rows = static_cast<int>(rows);
  d->cols = static_cast<int>(cols);
  d->row_stride = t.strides()[nd - core_ndim];
  d->col_stride = core_ndim == 2 ? t.strides()[nd - 1] : 0;
  return true;
}

// Copies the strided rows x cols matrix at src into the contiguous dst, transposed when asked;
// true when every element is finite (|v| <= max is false for infinities and NaN; the flags are
// OR-ed, so no chain of floating-point adds holds the copy up).
template <typename T>
bool Gather(const T* src, const CoreDims& d, bool transpose, T* dst) {
  constexpr T kMax = std::numeric_limits<T>::max();
  bool bad = false;
  if (!transpose && d.col_stride == 1) {
    for (int i = 0; i < d.rows; ++i) {
      const T* s = src + i * d.row_stride;
      T* o = dst + i * d.cols;
      for (int j = 0; j < d.cols; ++j) {
        o[j] = s[j];
        bad |= !(std::abs(s[j]) <= kMax);
      }
    }
  } else {
    for (int i = 0; i < d.rows; ++i) {
      for (int j = 0; j < d.cols; ++j) {
        const T v = src[i * d.row_stride + j * d.col_stride];
        dst[transpose ? j * d.rows + i : i * d.cols + j] = v;
        bad |= !(std::abs(v) <= kMax);
      }
    }
  }
  return !bad;
}

// Runs item(cursor, b, scratch) over the batch's items on the cores; each item it returns false
// for goes into `redo` (ascending). The call's interrupt (the calling thread's) is polled before,
// every kPollItems items of the chunks that thread runs, and after.
template <typename T, typename Item>
absl::Status ForEachItem(const OpBatch& batch, int n, std::vector<int64_t>& redo, Item item) {
  if (absl::Status s = PollInterrupt(); !s.ok()) return s;
  std::mutex mu;
  std::atomic<bool> stop{false};
  absl::Status status;
  const int64_t grain = std::max<int64_t>(1, 8192 / (int64_t{n} * n * n + 1));
  ParallelFor(batch.items, grain, [&](int64_t begin, int64_t end) {
    T scratch[sl::kMaxDim * sl::kMaxDim];
    std::vector<int64_t> left;
    BatchCursor cursor(batch, begin);
    for (int64_t b = begin; b < end; ++b, cursor.Next()) {
      if ((b - begin) % kPollItems == 0) {
        if (stop.load(std::memory_order_relaxed)) return;
        if (absl::Status s = PollInterrupt(); !s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          status = std::move(s);
          stop.store(true);
          return;
        }
      }
      if (!item(cursor, b, scratch)) left.push_back(b);
    }
    if (left.empty()) return;
    std::lock_guard<std::mutex> lock(mu);
    redo.insert(redo.end(), left.begin(), left.end());
  });
  if (!status.ok()) return status;
  // The interrupt is the calling thread's, which may have run no chunk: asked once more.
  if (absl::Status s = PollInterrupt(); !s.ok()) return s;
  std::sort(redo.begin(), redo.end());
  return absl::OkStatus();
}

// f(std::integral_constant<int, N>()) with N = n when 2 <= n <= kMaxFixedDim (the kernels'
// loops unrolled for it), else N = 0 (n at run time).
template <typename F>
auto WithFixedDim(int n, F f) {
  using std::integral_constant;
  switch (n) {
    case 2:
      return f(integral_constant<int, 2>());
    case 3:
      return f(integral_constant<int, 3>());
    case 4:
      return f(integral_constant<int, 4>());
    case 5:
      return f(integral_constant<int, 5>());
    case 6:
      return f(integral_constant<int, 6>());
    case 7:
      return f(integral_constant<int, 7>());
    case 8:
      return f(integral_constant<int, 8>());
    default:
      return f(integral_constant<int, 0>());
  }
}
static_assert(sl::kMaxFixedDim == 8, "WithFixedDim's cases");

// True when the inputs and outputs have `dtype`, float32 or float64.
bool RealDTypes(const OpBatch& batch, std::span<Tensor> outputs) {
  const DType d = outputs[0].dtype();
  if (d != DType::kFloat32 && d != DType::kFloat64) return false;
  for (const Tensor& t : batch.inputs) {
    if (t.dtype() != d) return false;
  }
  return true;
}

// The shared checks of the solvers' batches: a square n x n of n <= kMaxDim, b with n rows and
// x of b's core shape. The core dims of a and b (b: 1 or 2 of them) on success.
bool SolverDims(const Apply& core_node, const OpBatch& batch, std::span<Tensor> outputs,
                CoreDims* a, CoreDims* b) {
  if (batch.inputs.size() != 2 || outputs.size() != 1 || !RealDTypes(batch, outputs)) return false;
  const TensorType* bt = core_node.inputs()[1]->tensor_type();
  if (bt == nullptr || (bt->ndim() != 1 && bt->ndim() != 2)) return false;
  if (batch.inputs[0].ndim() < 2 || batch.inputs[1].ndim() < bt->ndim()) return false;
  if (!CoreOf(batch.inputs[0], 2, a) || !CoreOf(batch.inputs[1], bt->ndim(), b)) return false;
  if (a->rows != a->cols || a->rows < 1 || a->rows > sl::kMaxDim || b->rows != a->rows) {
    return false;
  }
  const Tensor& x = outputs[0];
  const int nd = x.ndim();
  return nd >= bt->ndim() && x.shape()[nd - bt->ndim()] == b->rows &&
         (bt->ndim() == 1 || x.shape()[nd - 1] == b->cols) && b->cols > 0;
}

// A solver's batch: per item, b gathered into x's slot and a into the scratch buffer (both
// checked finite when asked), then solve(dim, scratch, n, x, k) with dim WithFixedDim's (false:
// leave the item to Perform).
template <typename T, typename SolveItem>
absl::StatusOr<bool> RunSolver(const OpBatch& batch, const CoreDims& a, const CoreDims& b,
                               bool check_finite, bool transpose_a, std::span<Tensor> outputs,
                               std::vector<int64_t>& redo, SolveItem solve) {
  const T* a_data = batch.inputs[0].data<T>();
  const T* b_data = batch.inputs[1].data<T>();
  T* x_data = outputs[0].data<T>();
  const int64_t x_size = int64_t{b.rows} * b.cols;
  absl::Status st = WithFixedDim(a.rows, [&](auto dim) {
    return ForEachItem<T>(batch, a.rows, redo, [&](const BatchCursor& cur, int64_t item, T* w) {
      T* x = x_data + item * x_size;
      const bool finite_b = Gather(b_data + cur.offset(1), b, false, x);
      const bool finite_a = Gather(a_data + cur.offset(0), a, transpose_a, w);
      if (check_finite && !(finite_a && finite_b)) return false;
      return solve(dim, w, a.rows, x, b.cols);
    });
  });
  if (!st.ok()) return st;
  return true;
}

// a's layout as the LAPACK path sees it: C order (LAPACK then factors a^T).
bool RowMajor(const CoreDims& a) { return a.col_stride == 1 && a.row_stride != 1; }

// The symmetric matrix of w's `lower` (else upper) triangle, in w.
template <typename T>
void Symmetrize(T* w, int n, bool lower) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < i; ++j) {
      if (lower) {
        w[j * n + i] = w[i * n + j];
      } else {
        w[i * n + j] = w[j * n + i];
      }
    }
  }
}

template <typename T>
absl::StatusOr<bool> CholeskyBatch(const OpBatch& batch, bool lower, std::span<Tensor> outputs,
                                   std::vector<int64_t>& redo) {
  CoreDims d;
  CoreOf(batch.inputs[0], 2, &d);  // n <= kMaxDim, checked by the caller
  const T* x_data = batch.inputs[0].data<T>();
  T* out = outputs[0].data<T>();
  const int n = d.rows;
  absl::Status st = WithFixedDim(n, [&](auto dim) {
    constexpr int N = decltype(dim)::value;
    return ForEachItem<T>(batch, n, redo, [&](const BatchCursor& cur, int64_t item, T*) {
      T* l = out + item * n * n;
      // The upper factor is the lower one of a^T, transposed.
      if (!Gather(x_data + cur.offset(0), d, !lower, l)) return false;  // scipy's check_finite
      if (sl::CholeskyLower<T, N>(l, n) != 0) return false;
      if (!lower) {
        for (int i = 0; i < n; ++i) {
          for (int j = 0; j < i; ++j) std::swap(l[i * n + j], l[j * n + i]);
        }
      }
      return true;
    });
  });
  if (!st.ok()) return st;
  return true;
}

template <typename T>
absl::StatusOr<bool> SolveBatch(const OpBatch& batch, const CoreDims& a, const CoreDims& b,
                                const SolveAttrs& at, std::span<Tensor> outputs,
                                std::vector<int64_t>& redo) {
  const bool check = at.check_finite;
  if (at.assume_a == "pos") {
    // posv: the lower factor of the symmetric matrix of a's triangle, two triangular solves.
    return RunSolver<T>(batch, a, b, check, !at.lower, outputs, redo,
                        [](auto dim, T* w, int n, T* x, int k) {
                          constexpr int N = decltype(dim)::value;
                          if (sl::CholeskyLower<T, N>(w, n) != 0) return false;
                          sl::TriangularSolve<T, N>(w, n, true, false, false, x, k);
                          sl::TriangularSolve<T, N>(w, n, true, true, false, x, k);
                          return true;
                        });
  }
  if (at.assume_a == "gen") {
    // getrf/getrs as LAPACK gets a C-order a: a^T factored, then a solve with its transpose.
    const bool t = RowMajor(a);
    return RunSolver<T>(batch, a, b, check, t, outputs, redo,
                        [t](auto dim, T* w, int n, T* x, int k) {
                          constexpr int N = decltype(dim)::value;
                          int piv[sl::kMaxDim];
                          if (sl::LuFactor<T, N>(w, n, piv) != 0) return false;
                          sl::LuSolve<T, N>(w, piv, n, t, x, k);
                          return true;
                        });
  }
  // sym, her (real: sym): LU of the symmetric matrix of a's triangle; a singular one is left to
  // sysv (Perform), whose error names its own factor.
  const bool lower = at.lower;
  return RunSolver<T>(batch, a, b, check, false, outputs, redo,
                      [lower](auto dim, T* w, int n, T* x, int k) {
                        constexpr int N = decltype(dim)::value;
                        int piv[sl::kMaxDim];
                        Symmetrize(w, n, lower);
                        if (sl::LuFactor<T, N>(w, n, piv) != 0) return false;
                        sl::LuSolve<T, N>(w, piv, n, false, x, k);
                        return true;
                      });
}

absl::StatusOr<bool> CholeskyKernel(const Op& op, const Apply&, const OpBatch& batch,
                                    std::span<Tensor> outputs, std::vector<int64_t>& redo) {
  const CholeskyAttrs& attrs = static_cast<const Cholesky&>(op).attrs();
  if (batch.inputs.size() != 1 || outputs.size() != 1 || !RealDTypes(batch, outputs)) return false;
  const Tensor& x = batch.inputs[0];
  if (x.ndim() < 2 || outputs[0].ndim() != x.ndim()) return false;
  const int64_t n = x.shape()[x.ndim() - 1];
  const Tensor& l = outputs[0];
  if (n < 1 || n > sl::kMaxDim || x.shape()[x.ndim() - 2] != n || l.shape()[l.ndim() - 1] != n ||
      l.shape()[l.ndim() - 2] != n) {
    return false;
  }
  if (outputs[0].dtype() == DType::kFloat32) {
    return CholeskyBatch<float>(batch, attrs.lower, outputs, redo);
  }
  return CholeskyBatch<double>(batch, attrs.lower, outputs, redo);
}

absl::StatusOr<bool> SolveKernel(const Op& op, const Apply& core_node, const OpBatch& batch,
                                 std::span<Tensor> outputs, std::vector<int64_t>& redo) {
  const SolveAttrs& attrs = static_cast<const Solve&>(op).attrs();
  CoreDims a, b;
  if (!SolverDims(core_node, batch, outputs, &a, &b)) return false;
  if (outputs[0].dtype() == DType::kFloat32) {
    return SolveBatch<float>(batch, a, b, attrs, outputs, redo);
  }
  return SolveBatch<double>(batch, a, b, attrs, outputs, redo);
}

absl::StatusOr<bool> SolveTriangularKernel(const Op& op, const Apply& core_node,
                                           const OpBatch& batch, std::span<Tensor> outputs,
                                           std::vector<int64_t>& redo) {
  CoreDims a, b;
  if (!SolverDims(core_node, batch, outputs, &a, &b)) return false;
  const SolveTriangularAttrs& at = static_cast<const SolveTriangular&>(op).attrs();
  auto run = [&](auto zero) {
    using T = decltype(zero);
    return RunSolver<T>(batch, a, b, at.check_finite, false, outputs, redo,
                        [&at](auto dim, T* w, int n, T* x, int k) {
                          constexpr int N = decltype(dim)::value;
                          if (!at.unit_diagonal && sl::ZeroDiagonal(w, n) != 0) return false;
                          sl::TriangularSolve<T, N>(w, n, at.lower, at.trans != 0, at.unit_diagonal,
                                                    x, k);
                          return true;
                        });
  };
  return outputs[0].dtype() == DType::kFloat32 ? run(float{}) : run(double{});
}

absl::StatusOr<bool> CholeskySolveKernel(const Op& op, const Apply& core_node, const OpBatch& batch,
                                         std::span<Tensor> outputs, std::vector<int64_t>& redo) {
  const CholeskySolveAttrs& attrs = static_cast<const CholeskySolve&>(op).attrs();
  CoreDims a, b;
  if (!SolverDims(core_node, batch, outputs, &a, &b)) return false;
  const bool lower = attrs.lower;
  auto run = [&](auto zero) {
    using T = decltype(zero);
    // potrs: (c c^T) x = b or (c^T c) x = b, no check of c's diagonal.
    return RunSolver<T>(batch, a, b, attrs.check_finite, false, outputs, redo,
                        [lower](auto dim, T* w, int n, T* x, int k) {
                          constexpr int N = decltype(dim)::value;
                          sl::TriangularSolve<T, N>(w, n, lower, !lower, false, x, k);
                          sl::TriangularSolve<T, N>(w, n, lower, lower, false, x, k);
                          return true;
                        });
  };
  return outputs[0].dtype() == DType::kFloat32 ? run(float{}) : run(double{});
}

[[maybe_unused]] const bool kRegistered =
    RegisterBatchKernel(OpClassIdOf<Cholesky>(), CholeskyKernel) &&
    RegisterBatchKernel(OpClassIdOf<Solve>(), SolveKernel) &&
    RegisterBatchKernel(OpClassIdOf<SolveTriangular>(), SolveTriangularKernel) &&
    RegisterBatchKernel(OpClassIdOf<CholeskySolve>(), CholeskySolveKernel);

}  // namespace
}  // namespace kiln
