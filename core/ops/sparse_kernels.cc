// The sparse ops' kernels. Each checks the structure it is given before it reads through it
// (coordinates in range, indptr from 0 and nondecreasing, indices sorted where it merges), sizes
// its outputs with CheckShape before allocating them (all from the call's budget), and polls the
// call's interrupt where its work is not bounded by its inputs' and outputs' sizes.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/ops/op_util.h"
#include "core/ops/sparse.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/dtype_dispatch.h"
#include "core/tensor/parallel.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

// `t` as a contiguous tensor of `dtype` (itself when it is one already).
Tensor Dense(const Tensor& t, DType dtype) {
  return t.dtype() == dtype ? t.Contiguous() : t.AsType(dtype);
}

// An integer vector input as int64 values (its pointer and length read once: kernels index it
// in their inner loops).
class Ints {
 public:
  explicit Ints(const Tensor& t)
      : tensor_(Dense(t, DType::kInt64)), data_(tensor_.data<int64_t>()), size_(tensor_.size()) {}
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t size() const { return size_; }
  int64_t operator[](int64_t k) const { return data_[k]; }

 private:
  Tensor tensor_;
  const int64_t* data_;
  int64_t size_;
};

std::string InputName(int i, const char* name) {
  return absl::StrCat("input ", i, " (", name, ")");
}

// Input i has as many entries as the data it indexes.
absl::Status CheckLength(const Op& op, const Ints& v, int i, const char* name, int64_t n,
                         const char* of) {
  if (v.size() == n) return absl::OkStatus();
  return Invalid(
      op, absl::StrCat(InputName(i, name), " has ", v.size(), " entries but ", of, " has ", n));
}

// Every entry of input i in [0, bound).
absl::Status CheckInRange(const Op& op, const Ints& v, int i, const char* name, int64_t bound,
                          const char* bound_what) {
  for (int64_t k = 0; k < v.size(); ++k) {
    if (v[k] < 0 || v[k] >= bound) {
      return Invalid(op, absl::StrCat(InputName(i, name), " has ", v[k], " at entry ", k,
                                      ", outside [0, ", bound, ") (", bound_what, ")"));
    }
  }
  return absl::OkStatus();
}

// An indptr (input i) over `nnz` entries: at least one entry, from 0, nondecreasing, up to nnz.
absl::Status CheckIndptr(const Op& op, const Ints& indptr, int i, int64_t nnz) {
  if (indptr.size() == 0 || indptr[0] != 0) {
    return Invalid(op, absl::StrCat(InputName(i, "indptr"), " must start at 0"));
  }
  for (int64_t k = 1; k < indptr.size(); ++k) {
    if (indptr[k] < indptr[k - 1]) {
      return Invalid(op, absl::StrCat(InputName(i, "indptr"), " decreases at entry ", k));
    }
  }
  if (indptr[indptr.size() - 1] != nnz) {
    return Invalid(op, absl::StrCat(InputName(i, "indptr"), " ends at ", indptr[indptr.size() - 1],
                                    " but there are ", nnz, " indices"));
  }
  return absl::OkStatus();
}

// A compressed structure (indices input i, indptr input i + 1) whose indices are sorted and
// unique within each row, as the merges need.
absl::Status CheckSortedStructure(const Op& op, const Ints& indices, const Ints& indptr, int i) {
  RETURN_IF_ERROR(CheckIndptr(op, indptr, i + 1, indices.size()));
  for (int64_t r = 0; r + 1 < indptr.size(); ++r) {
    for (int64_t k = indptr[r] + 1; k < indptr[r + 1]; ++k) {
      if (indices[k] <= indices[k - 1]) {
        return Invalid(
            op, absl::StrCat(InputName(i, "indices"), " are not sorted and unique in row ", r,
                             " (entry ", k, ")"));
      }
    }
  }
  return absl::OkStatus();
}

// A new int64 vector of n entries, from the call's budget.
absl::StatusOr<Tensor> NewInts(const Op& op, int64_t n) {
  RETURN_IF_ERROR(CheckOutputShape(op, {n}, DType::kInt64));
  return Tensor::Empty(DType::kInt64, {n});
}

// Calls f(TypeTag<T>{}) for float32 and float64, the dtypes of the products.
template <typename F>
void DispatchFloat(DType dtype, F&& f) {
  if (dtype == DType::kFloat32) {
    f(TypeTag<float>{});
  } else {
    f(TypeTag<double>{});
  }
}

DType OutputDType(const Apply& node, int i = 0) {
  return node.outputs()[i]->tensor_type()->dtype();
}

}  // namespace

namespace {

// Work is cut in pieces of about 2^16 multiply-adds (~30 us) that run a few per thread at a time,
// the call's interrupt polled between rounds (the pool's threads do not see it).
constexpr int64_t kPieceWork = int64_t{1} << 16;

// Entry pieces of a product: each ends where `key` (the output row) changes, so that pieces never
// share a row and can run on different threads. A row longer than two pieces is cut anyway, and
// then the pieces must run one after another (`disjoint` false).
struct Pieces {
  Pieces(int64_t n, int64_t width, const int64_t* key) {
    const int64_t piece = std::max<int64_t>(1, kPieceWork / (width + 1));
    bounds.push_back(0);
    while (bounds.back() < n) {
      const int64_t cut = std::min(n, bounds.back() + piece);
      int64_t next = cut;
      while (key != nullptr && next < n && key[next] == key[next - 1] && next - cut < piece) ++next;
      if (key != nullptr && next < n && key[next] == key[next - 1]) next = cut, disjoint = false;
      bounds.push_back(next);
    }
  }
  // Row pieces of a CSR product: consecutive rows of about kPieceWork together.
  Pieces(const Ints& indptr, int64_t width) {
    bounds.push_back(0);
    const int64_t rows = indptr.size() - 1;
    for (int64_t r = 0, work = 0; r < rows; ++r) {
      int64_t cost;  // saturated: a piece ends at the first row past kPieceWork anyway
      if (__builtin_mul_overflow(indptr[r + 1] - indptr[r] + 1, width + 1, &cost))
        cost = kPieceWork;
      work += std::min(cost, kPieceWork);
      if (work >= kPieceWork || r + 1 == rows) bounds.push_back(r + 1), work = 0;
    }
  }
  std::vector<int64_t> bounds;  // piece i is [bounds[i], bounds[i + 1])
  bool disjoint = true;
};

// Runs fn(begin, end) over the pieces, in parallel when `parallel` and they are disjoint.
template <typename Fn>
absl::Status ForEachPiece(const Pieces& pieces, bool parallel, Fn fn) {
  const int64_t count = static_cast<int64_t>(pieces.bounds.size()) - 1;
  const int64_t per_round = parallel && pieces.disjoint ? 4 * NumThreads() : 1;
  for (int64_t first = 0; first < count; first += per_round) {
    ParallelFor(std::min(per_round, count - first), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = first + begin; i < first + end; ++i) {
        fn(pieces.bounds[i], pieces.bounds[i + 1]);
      }
    });
    RETURN_IF_ERROR(PollInterrupt());
  }
  return absl::OkStatus();
}

// rows[k] in [0, n_rows) and cols[k] in [0, n_cols) for every k, in one pass; whether rows is
// sorted (then the product's threads can split it by rows).
absl::StatusOr<bool> CheckCoordinates(const Op& op, const Ints& rows, int rows_input,
                                      int64_t n_rows, const char* rows_bound, const Ints& cols,
                                      int cols_input, int64_t n_cols, const char* cols_bound) {
  // Branch-free passes the compiler vectorizes; a negative index is a huge unsigned one.
  const auto* r = reinterpret_cast<const uint64_t*>(rows.begin());
  const auto* c = reinterpret_cast<const uint64_t*>(cols.begin());
  bool out_of_range = false, unsorted = false;
  for (int64_t k = 0; k < rows.size(); ++k) {
    out_of_range |=
        (r[k] >= static_cast<uint64_t>(n_rows)) | (c[k] >= static_cast<uint64_t>(n_cols));
  }
  for (int64_t k = 1; k < rows.size(); ++k) unsorted |= rows[k] < rows[k - 1];
  const bool sorted = !unsorted, in_range = !out_of_range;
  if (!in_range) {  // name the first bad entry
    RETURN_IF_ERROR(CheckInRange(op, rows, rows_input, "rows", n_rows, rows_bound));
    RETURN_IF_ERROR(CheckInRange(op, cols, cols_input, "cols", n_cols, cols_bound));
  }
  return sorted;
}

}  // namespace

// One row's share of a product: out[0, width) += data[k] * b[cols[k], :] for k in [begin, end).
template <typename T>
void AddRow(T* out, const T* data, const int64_t* cols, const T* b, int64_t width, int64_t begin,
            int64_t end) {
  if (width == 1) {  // a matrix times a vector: the row summed in a register
    T acc = 0;
    for (int64_t k = begin; k < end; ++k) acc += data[k] * b[cols[k]];
    out[0] += acc;
    return;
  }
  for (int64_t k = begin; k < end; ++k) {
    const T v = data[k];
    const T* s = b + cols[k] * width;
    for (int64_t j = 0; j < width; ++j) out[j] += v * s[j];
  }
}

absl::Status SparseDot::Perform(const Apply& node, std::span<const Tensor> in,
                                std::vector<Tensor>& out) const {
  const DType dtype = OutputDType(node);
  const Ints rows(in[1]), cols(in[2]);
  const int64_t nnz = in[0].size(), n_rows = ScalarInt(in[3]);
  const Tensor& b = in[4];
  RETURN_IF_ERROR(CheckLength(*this, cols, 2, "cols", nnz, "input 0 (data)"));
  if (n_rows < 0) return Invalid(*this, absl::StrCat("input 3 (n_rows) is negative: ", n_rows));
  bool sorted = true;
  if (attrs().compressed) {
    RETURN_IF_ERROR(CheckIndptr(*this, rows, 1, nnz));
    if (rows.size() - 1 != n_rows) {  // (not n_rows + 1, which an attacker's n_rows overflows)
      return Invalid(*this, absl::StrCat("input 1 (indptr) has ", rows.size(),
                                         " entries but input 3 (n_rows) is ", n_rows));
    }
    RETURN_IF_ERROR(CheckInRange(*this, cols, 2, "cols", b.shape()[0], "the rows of input 4 (b)"));
  } else {
    RETURN_IF_ERROR(CheckLength(*this, rows, 1, "rows", nnz, "input 0 (data)"));
    ASSIGN_OR_RETURN(sorted, CheckCoordinates(*this, rows, 1, n_rows, "n_rows", cols, 2,
                                              b.shape()[0], "the rows of input 4 (b)"));
  }
  const int64_t width = b.shape()[1];
  RETURN_IF_ERROR(CheckOutputShape(*this, {n_rows, width}, dtype));
  Tensor result = Tensor::Zeros(dtype, {n_rows, width});
  const Tensor data = Dense(in[0], dtype), dense = Dense(b, dtype);
  absl::Status status;
  DispatchFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* d = data.data<T>();
    const T* src = dense.data<T>();
    T* dst = result.data<T>();
    const int64_t *r = rows.begin(), *c = cols.begin();
    if (attrs().compressed) {  // pieces of whole rows
      status = ForEachPiece(Pieces(rows, width), true, [&](int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i)
          AddRow(dst + i * width, d, c, src, width, r[i], r[i + 1]);
      });
      return;
    }
    // Runs of one row within each piece of entries.
    status = ForEachPiece(Pieces(nnz, width, r), sorted, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end;) {
        int64_t run = k + 1;
        while (run < end && r[run] == r[k]) ++run;
        AddRow(dst + r[k] * width, d, c, src, width, k, run);
        k = run;
      }
    });
  });
  RETURN_IF_ERROR(status);
  out[0] = std::move(result);
  return absl::OkStatus();
}

absl::Status SampledDot::Perform(const Apply& node, std::span<const Tensor> in,
                                 std::vector<Tensor>& out) const {
  const DType dtype = OutputDType(node);
  const Ints rows(in[0]), cols(in[1]);
  const Tensor x = Dense(in[2], dtype), y = Dense(in[3], dtype);
  const int64_t nnz = rows.size(), width = x.shape()[1];
  RETURN_IF_ERROR(CheckLength(*this, cols, 1, "cols", nnz, "input 0 (rows)"));
  if (y.shape()[1] != width) {
    return Invalid(*this, absl::StrCat("input 2 (x) has shape ", ShapeToString(x.shape()),
                                       " but input 3 (y) has ", ShapeToString(y.shape()),
                                       ": x and y need as many columns"));
  }
  RETURN_IF_ERROR(CheckCoordinates(*this, rows, 0, x.shape()[0], "the rows of input 2 (x)", cols, 1,
                                   y.shape()[0], "the rows of input 3 (y)")
                      .status());
  RETURN_IF_ERROR(CheckOutputShape(*this, {nnz}, dtype));
  Tensor result = Tensor::Empty(dtype, {nnz});
  absl::Status status;
  DispatchFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xs = x.data<T>();
    const T* ys = y.data<T>();
    T* dst = result.data<T>();
    // Each entry is its own output: any split works.
    status = ForEachPiece(Pieces(nnz, width, nullptr), true, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const T* a = xs + rows[k] * width;
        const T* b = ys + cols[k] * width;
        T sum = 0;
        for (int64_t j = 0; j < width; ++j) sum += a[j] * b[j];
        dst[k] = sum;
      }
    });
  });
  RETURN_IF_ERROR(status);
  out[0] = std::move(result);
  return absl::OkStatus();
}

absl::Status SparseToDense::Perform(const Apply&, std::span<const Tensor> in,
                                    std::vector<Tensor>& out) const {
  const Tensor data = in[0].Contiguous();
  const Ints rows(in[1]), cols(in[2]), shape(in[3]);
  const int64_t nnz = data.size();
  if (shape.size() != 2 || shape[0] < 0 || shape[1] < 0) {
    return Invalid(*this, absl::StrCat("input 3 (shape) must be 2 sizes, not ",
                                       ShapeToString(Shape(shape.begin(), shape.end()))));
  }
  RETURN_IF_ERROR(CheckLength(*this, rows, 1, "rows", nnz, "input 0 (data)"));
  RETURN_IF_ERROR(CheckLength(*this, cols, 2, "cols", nnz, "input 0 (data)"));
  RETURN_IF_ERROR(CheckInRange(*this, rows, 1, "rows", shape[0], "shape[0]"));
  RETURN_IF_ERROR(CheckInRange(*this, cols, 2, "cols", shape[1], "shape[1]"));
  RETURN_IF_ERROR(CheckOutputShape(*this, {shape[0], shape[1]}, data.dtype()));
  Tensor result = Tensor::Zeros(data.dtype(), {shape[0], shape[1]});
  DispatchDType(data.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* d = data.data<T>();
    T* dst = result.data<T>();
    for (int64_t k = 0; k < nnz; ++k) {
      T& o = dst[rows[k] * shape[1] + cols[k]];
      if constexpr (std::is_same_v<T, bool>) {
        o = o || d[k];
      } else {
        o += d[k];  // repeated coordinates add up, as SciPy's
      }
    }
  });
  out[0] = std::move(result);
  return absl::OkStatus();
}

absl::Status SparseGather::Perform(const Apply&, std::span<const Tensor> in,
                                   std::vector<Tensor>& out) const {
  const Tensor x = in[0].Contiguous();
  const Ints rows(in[1]), cols(in[2]);
  const int64_t nnz = rows.size(), width = x.shape()[1];
  RETURN_IF_ERROR(CheckLength(*this, cols, 2, "cols", nnz, "input 1 (rows)"));
  RETURN_IF_ERROR(CheckInRange(*this, rows, 1, "rows", x.shape()[0], "the rows of input 0 (x)"));
  RETURN_IF_ERROR(CheckInRange(*this, cols, 2, "cols", width, "the columns of input 0 (x)"));
  RETURN_IF_ERROR(CheckOutputShape(*this, {nnz}, x.dtype()));
  Tensor result = Tensor::Empty(x.dtype(), {nnz});
  const int64_t size = DTypeSize(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(result.raw_data());
  for (int64_t k = 0; k < nnz; ++k) {
    std::memcpy(dst + k * size, src + (rows[k] * width + cols[k]) * size, size);
  }
  out[0] = std::move(result);
  return absl::OkStatus();
}

absl::Status ExpandIndptr::Perform(const Apply&, std::span<const Tensor> in,
                                   std::vector<Tensor>& out) const {
  const Ints indptr(in[0]);
  const int64_t nnz = indptr.size() == 0 ? 0 : indptr[indptr.size() - 1];
  RETURN_IF_ERROR(CheckIndptr(*this, indptr, 0, nnz));
  ASSIGN_OR_RETURN(Tensor rows, NewInts(*this, nnz));
  int64_t* r = rows.data<int64_t>();
  for (int64_t i = 0; i + 1 < indptr.size(); ++i) std::fill(r + indptr[i], r + indptr[i + 1], i);
  out[0] = std::move(rows);
  return absl::OkStatus();
}

absl::Status CompressIndptr::Perform(const Apply&, std::span<const Tensor> in,
                                     std::vector<Tensor>& out) const {
  const Ints rows(in[0]);
  const int64_t n = ScalarInt(in[1]);
  if (n < 0 || n >= kMaxTensorBytes) {
    return Invalid(*this, absl::StrCat("input 1 (n) is out of range: ", n));
  }
  RETURN_IF_ERROR(CheckInRange(*this, rows, 0, "rows", n, "n"));
  if (!std::is_sorted(rows.begin(), rows.end())) {
    return Invalid(*this, "input 0 (rows) is not sorted");
  }
  ASSIGN_OR_RETURN(Tensor indptr, NewInts(*this, n + 1));
  int64_t* p = indptr.data<int64_t>();
  // p[i] = the number of rows below i.
  for (int64_t i = 0, k = 0; i <= n; ++i) {
    while (k < rows.size() && rows[k] < i) ++k;
    p[i] = k;
  }
  out[0] = std::move(indptr);
  return absl::OkStatus();
}

namespace {

// The two structures a merge reads: (indices_a, indptr_a, indices_b, indptr_b), checked.
struct TwoStructures {
  explicit TwoStructures(std::span<const Tensor> in) : ia(in[0]), pa(in[1]), ib(in[2]), pb(in[3]) {}
  absl::Status Check(const Op& op) const {
    RETURN_IF_ERROR(CheckSortedStructure(op, ia, pa, 0));
    RETURN_IF_ERROR(CheckSortedStructure(op, ib, pb, 2));
    if (pa.size() != pb.size()) {
      return Invalid(op, absl::StrCat("input 1 (indptr_a) has ", pa.size(),
                                      " entries but input 3 "
                                      "(indptr_b) has ",
                                      pb.size(),
                                      ": the matrices need as many "
                                      "rows"));
    }
    return absl::OkStatus();
  }
  int64_t rows() const { return pa.size() - 1; }
  Ints ia, pa, ib, pb;
};

// Walks row r of both structures in index order: on_a(k) for an index only a has, on_b(l) for
// one only b has, on_both(k, l) for one both have.
template <typename A, typename B, typename AB>
void MergeRow(const TwoStructures& s, int64_t r, A on_a, B on_b, AB on_both) {
  int64_t k = s.pa[r], l = s.pb[r];
  const int64_t k_end = s.pa[r + 1], l_end = s.pb[r + 1];
  while (k < k_end || l < l_end) {
    if (l == l_end || (k < k_end && s.ia[k] < s.ib[l])) {
      on_a(k++);
    } else if (k == k_end || s.ib[l] < s.ia[k]) {
      on_b(l++);
    } else {
      on_both(k++, l++);
    }
  }
}

}  // namespace

absl::Status SparseUnion::Perform(const Apply&, std::span<const Tensor> in,
                                  std::vector<Tensor>& out) const {
  const TwoStructures s(in);
  RETURN_IF_ERROR(s.Check(*this));
  int64_t nnz = 0;
  for (int64_t r = 0; r < s.rows(); ++r) {
    MergeRow(
        s, r, [&](int64_t) { ++nnz; }, [&](int64_t) { ++nnz; }, [&](int64_t, int64_t) { ++nnz; });
  }
  ASSIGN_OR_RETURN(Tensor indices, NewInts(*this, nnz));
  ASSIGN_OR_RETURN(Tensor indptr, NewInts(*this, s.rows() + 1));
  ASSIGN_OR_RETURN(Tensor pos_a, NewInts(*this, s.ia.size()));
  ASSIGN_OR_RETURN(Tensor pos_b, NewInts(*this, s.ib.size()));
  int64_t *idx = indices.data<int64_t>(), *ptr = indptr.data<int64_t>();
  int64_t *in_a = pos_a.data<int64_t>(), *in_b = pos_b.data<int64_t>();
  int64_t n = 0;
  ptr[0] = 0;
  for (int64_t r = 0; r < s.rows(); ++r) {
    MergeRow(
        s, r, [&](int64_t k) { idx[n] = s.ia[k], in_a[k] = n++; },
        [&](int64_t l) { idx[n] = s.ib[l], in_b[l] = n++; },
        [&](int64_t k, int64_t l) { idx[n] = s.ia[k], in_a[k] = n, in_b[l] = n++; });
    ptr[r + 1] = n;
  }
  out = {std::move(indices), std::move(indptr), std::move(pos_a), std::move(pos_b)};
  return absl::OkStatus();
}

absl::Status SparseIntersection::Perform(const Apply&, std::span<const Tensor> in,
                                         std::vector<Tensor>& out) const {
  const TwoStructures s(in);
  RETURN_IF_ERROR(s.Check(*this));
  auto none = [](int64_t) {};
  int64_t nnz = 0;
  for (int64_t r = 0; r < s.rows(); ++r) {
    MergeRow(s, r, none, none, [&](int64_t, int64_t) { ++nnz; });
  }
  ASSIGN_OR_RETURN(Tensor indices, NewInts(*this, nnz));
  ASSIGN_OR_RETURN(Tensor indptr, NewInts(*this, s.rows() + 1));
  ASSIGN_OR_RETURN(Tensor take_a, NewInts(*this, nnz));
  ASSIGN_OR_RETURN(Tensor take_b, NewInts(*this, nnz));
  int64_t *idx = indices.data<int64_t>(), *ptr = indptr.data<int64_t>();
  int64_t *from_a = take_a.data<int64_t>(), *from_b = take_b.data<int64_t>();
  int64_t n = 0;
  ptr[0] = 0;
  for (int64_t r = 0; r < s.rows(); ++r) {
    MergeRow(s, r, none, none,
             [&](int64_t k, int64_t l) { idx[n] = s.ia[k], from_a[n] = k, from_b[n++] = l; });
    ptr[r + 1] = n;
  }
  out = {std::move(indices), std::move(indptr), std::move(take_a), std::move(take_b)};
  return absl::OkStatus();
}

// Gustavson's product. The pairs are counted first (one add per entry of a) and their tables
// taken from the budget before any work that grows with them; then one pass counts each row's
// distinct columns, and a second writes the sorted columns and every pair's output entry. A
// column's last row seen (`seen`) and its entry in the current row (`slot`) are n_cols-long tables.
absl::Status SparseProductPairs::Perform(const Apply&, std::span<const Tensor> in,
                                         std::vector<Tensor>& out) const {
  const Ints ia(in[0]), pa(in[1]), ib(in[2]), pb(in[3]);
  const int64_t n_cols = ScalarInt(in[4]);
  RETURN_IF_ERROR(CheckIndptr(*this, pa, 1, ia.size()));
  RETURN_IF_ERROR(CheckIndptr(*this, pb, 3, ib.size()));
  RETURN_IF_ERROR(CheckInRange(*this, ia, 0, "indices_a", pb.size() - 1, "the rows of b"));
  if (n_cols < 0) return Invalid(*this, absl::StrCat("input 4 (n_cols) is negative: ", n_cols));
  RETURN_IF_ERROR(CheckInRange(*this, ib, 2, "indices_b", n_cols, "n_cols"));
  const int64_t rows = pa.size() - 1;
  // b's entries in row r of b: [pb[r], pb[r + 1]).
  auto b_row = [&](int64_t k) { return std::pair(pb[ia[k]], pb[ia[k] + 1]); };
  int64_t pairs = 0;
  for (int64_t k = 0; k < ia.size(); ++k) {
    const auto [first, last] = b_row(k);
    if (__builtin_add_overflow(pairs, last - first, &pairs)) {
      return Invalid(*this, "the product takes more than 2^63 multiplications");
    }
  }
  ASSIGN_OR_RETURN(Tensor pair_a, NewInts(*this, pairs));
  ASSIGN_OR_RETURN(Tensor pair_b, NewInts(*this, pairs));
  ASSIGN_OR_RETURN(Tensor pair_out, NewInts(*this, pairs));
  ASSIGN_OR_RETURN(Tensor seen_t, NewInts(*this, n_cols));
  ASSIGN_OR_RETURN(Tensor slot_t, NewInts(*this, n_cols));
  int64_t *seen = seen_t.data<int64_t>(), *slot = slot_t.data<int64_t>();
  InterruptPoller poller;
  // Calls f(k, l) for each pair of row r, polling as the pairs go.
  auto for_pairs = [&](int64_t r, auto f) -> absl::Status {
    for (int64_t k = pa[r]; k < pa[r + 1]; ++k) {
      const auto [first, last] = b_row(k);
      for (int64_t l = first; l < last; ++l) f(k, l);
      RETURN_IF_ERROR(poller.Tick(last - first + 1));
    }
    return absl::OkStatus();
  };
  std::fill(seen, seen + n_cols, -1);
  int64_t nnz = 0;
  for (int64_t r = 0; r < rows; ++r) {
    RETURN_IF_ERROR(for_pairs(r, [&](int64_t, int64_t l) {
      if (seen[ib[l]] != r) seen[ib[l]] = r, ++nnz;
    }));
  }
  ASSIGN_OR_RETURN(Tensor indices, NewInts(*this, nnz));
  ASSIGN_OR_RETURN(Tensor indptr, NewInts(*this, rows + 1));
  int64_t *idx = indices.data<int64_t>(), *ptr = indptr.data<int64_t>();
  int64_t *from_a = pair_a.data<int64_t>(), *from_b = pair_b.data<int64_t>();
  int64_t* to = pair_out.data<int64_t>();
  std::fill(seen, seen + n_cols, -1);
  int64_t n = 0, p = 0;
  ptr[0] = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t start = n;
    RETURN_IF_ERROR(for_pairs(r, [&](int64_t, int64_t l) {
      if (seen[ib[l]] != r) seen[ib[l]] = r, idx[n++] = ib[l];
    }));
    std::sort(idx + start, idx + n);
    for (int64_t e = start; e < n; ++e) slot[idx[e]] = e;
    RETURN_IF_ERROR(for_pairs(
        r, [&](int64_t k, int64_t l) { from_a[p] = k, from_b[p] = l, to[p++] = slot[ib[l]]; }));
    ptr[r + 1] = n;
  }
  out = {std::move(indices), std::move(indptr), std::move(pair_a), std::move(pair_b),
         std::move(pair_out)};
  return absl::OkStatus();
}

}  // namespace kiln
