// The kernels of AdvancedSubtensor and AdvancedIncSubtensor. An index list becomes a plan: the
// offset of x[idx]'s first element, and a loop over x[idx] whose dims are the slices' and new
// axes' (a stride each) and one dim for the arrays' broadcast elements (a table of offsets into
// x, built once). Reads gather along the plan; writes scatter along it in order, so a repeated
// index accumulates (inc) or takes the last value (set). One integer vector followed by full
// slices is numpy.take along axis 0 and goes to the take kernels (indexing_kernels.h).
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ops/advanced_indexing.h"
#include "core/ops/indexing_kernels.h"
#include "core/ops/add_as_numpy.h"
#include "core/ops/op_util.h"
#include "core/ops/slice_bounds.h"
#include "core/tensor/dtype_dispatch.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

// One dim of the loop over x[idx]: its size and stride in x, or the table's dim.
struct LoopDim {
  int64_t size = 0;
  int64_t stride = 0;
  bool table = false;
};

struct Plan {
  Shape shape;                // x[idx]'s shape
  std::vector<LoopDim> dims;  // the loop over it (the arrays' dims merged into the table dim)
  Tensor table;               // int64 x offsets of the arrays' broadcast elements, C order
  int64_t base = 0;           // x offset of the first element the slices select
  Shape shape_of_arrays;      // the arrays' broadcast shape
};

// An integer index array along one axis of x, its values made non-negative.
struct IndexArray {
  Tensor values;  // int64, contiguous
  int axis = 0;
};

std::string ShapeText(const Shape& s) {
  return absl::StrCat("(", absl::StrJoin(s, ","), s.size() == 1 ? ",)" : ")");
}

// The int64 values of an integer array indexing an axis of size `len`, negative ones counted
// from the end, or NumPy's IndexError text for the first one out of range.
absl::StatusOr<Tensor> Normalized(const Op& op, const Tensor& raw, int64_t len, int axis) {
  auto out_of_range = [&](const std::string& value) {
    return Invalid(
        op, absl::StrCat("index ", value, " is out of bounds for axis ", axis, " with size ", len));
  };
  if (raw.dtype() == DType::kUInt64) {
    const Tensor c = raw.Contiguous();
    const uint64_t* u = c.data<uint64_t>();
    for (int64_t i = 0, n = c.size(); i < n; ++i) {
      if (u[i] >= static_cast<uint64_t>(len)) return out_of_range(absl::StrCat(u[i]));
    }
  }
  Tensor v = raw.AsType(DType::kInt64);  // a copy: written below
  int64_t* p = v.data<int64_t>();
  const int64_t n = v.size();  // hoisted: the writes through p could alias the shape
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] < -len || p[i] >= len) return out_of_range(absl::StrCat(p[i]));
    if (p[i] < 0) p[i] += len;
  }
  return v;
}

// The coordinates of a boolean mask's True elements over x's dims from `axis` on, one int64
// vector per mask dim (numpy.nonzero), after checking the mask's shape against those dims.
absl::StatusOr<std::vector<IndexArray>> MaskIndices(const Op& op, const Tensor& mask,
                                                    const Shape& x_shape, int axis) {
  if (mask.ndim() == 0 || axis + mask.ndim() > static_cast<int>(x_shape.size())) {
    return Invalid(op, absl::StrCat("a boolean index of shape ", ShapeText(mask.shape()),
                                    " does not fit x of shape ", ShapeText(x_shape),
                                    " from dimension ", axis));
  }
  for (int j = 0; j < mask.ndim(); ++j) {
    if (mask.shape()[j] != x_shape[axis + j]) {
      return Invalid(op, absl::StrCat("boolean index did not match indexed array along "
                                      "dimension ",
                                      axis + j, "; dimension is ", x_shape[axis + j],
                                      " but corresponding boolean dimension is ", mask.shape()[j]));
    }
  }
  const Tensor m = mask.Contiguous();
  const bool* p = m.data<bool>();
  const int64_t count = std::count(p, p + m.size(), true);
  std::vector<IndexArray> out;
  for (int j = 0; j < m.ndim(); ++j) {
    out.push_back({Tensor::Empty(DType::kInt64, {count}), axis + j});
  }
  const std::vector<int64_t> strides = ContiguousStrides(m.shape());
  int64_t n = 0;
  for (int64_t i = 0, size = m.size(); i < size; ++i) {
    if (!p[i]) continue;
    for (int j = 0; j < m.ndim(); ++j) {
      out[j].values.data<int64_t>()[n] = i / strides[j] % m.shape()[j];
    }
    ++n;
  }
  return out;
}

// The arrays' common shape (NumPy's broadcasting), or NumPy's IndexError text.
absl::StatusOr<Shape> BroadcastShape(const Op& op, const std::vector<IndexArray>& arrays) {
  size_t ndim = 0;
  for (const IndexArray& a : arrays) ndim = std::max<size_t>(ndim, a.values.ndim());
  Shape shape(ndim, 1);
  for (const IndexArray& a : arrays) {
    const Shape& s = a.values.shape();
    for (size_t j = 0; j < s.size(); ++j) {
      int64_t& d = shape[ndim - s.size() + j];
      if (s[j] == d || s[j] == 1) continue;
      if (d != 1) {
        std::vector<std::string> shapes;
        for (const IndexArray& b : arrays) shapes.push_back(ShapeText(b.values.shape()));
        return Invalid(op, absl::StrCat("shape mismatch: indexing arrays could not be broadcast "
                                        "together with shapes ",
                                        absl::StrJoin(shapes, " ")));
      }
      d = s[j];
    }
  }
  return shape;
}

// The offsets into x (strides `x_strides`) of the arrays' elements broadcast to `shape` (a
// tensor, so that the process's buffer limit bounds it), summed one array at a time: a flat
// multiply-add over an array of the full shape, rows of the broadcast shape otherwise.
Tensor OffsetTable(const std::vector<IndexArray>& arrays, const Shape& shape,
                   const std::vector<int64_t>& x_strides) {
  const int64_t size = ShapeSize(shape);
  const int nd = static_cast<int>(shape.size());
  Tensor out = Tensor::Zeros(DType::kInt64, {size});
  if (size == 0) return out;
  int64_t* table = out.data<int64_t>();
  std::vector<int64_t> st(nd), at;
  for (const IndexArray& a : arrays) {
    const int64_t* v = a.values.data<int64_t>();
    const int64_t xs = x_strides[a.axis];
    const Shape& s = a.values.shape();
    if (ShapeSize(s) == size) {  // the full shape (its dims equal the broadcast ones)
      for (int64_t f = 0; f < size; ++f) table[f] += v[f] * xs;
      continue;
    }
    // The array's strides over `shape` (0 where it broadcasts).
    const std::vector<int64_t> own = ContiguousStrides(s);
    std::fill(st.begin(), st.end(), 0);
    for (size_t j = 0; j < s.size(); ++j) {
      if (s[j] != 1) st[nd - s.size() + j] = own[j];
    }
    const int64_t n = shape[nd - 1], inner = st[nd - 1];
    at.assign(nd, 0);
    for (int64_t f = 0; f < size; f += n) {
      int64_t e = 0;
      for (int d = 0; d < nd - 1; ++d) e += at[d] * st[d];
      for (int64_t j = 0; j < n; ++j) table[f + j] += v[e + j * inner] * xs;
      for (int d = nd - 2; d >= 0 && ++at[d] == shape[d]; --d) at[d] = 0;
    }
  }
  return out;
}

// The plan of x[idx] for x of shape `x_shape`, strides `x_strides` and dtype `dtype`, given the
// index inputs; x[idx]'s shape is checked (CheckShape) before the table is built.
absl::StatusOr<Plan> MakePlan(const Op& op, DType dtype, const Shape& x_shape,
                              const std::vector<int64_t>& x_strides,
                              const std::vector<AdvIndexEntry>& idx,
                              std::span<const Tensor> inputs) {
  Plan plan;
  std::vector<IndexArray> arrays;
  std::vector<LoopDim> basic;
  int adv_at = -1, last = -1, axis = 0;
  bool adjacent = true;
  size_t next = 0;
  const int ndim = static_cast<int>(x_shape.size());
  auto too_many = [&] {
    return Invalid(op, absl::StrCat("too many indices for an array of shape ", ShapeText(x_shape)));
  };
  for (size_t k = 0; k < idx.size(); ++k) {
    const AdvIndexEntry& e = idx[k];
    if (e.kind == AdvIndexEntry::kNewAxis) {
      basic.push_back({1, 0, false});
      continue;
    }
    if (axis >= ndim) return too_many();
    if (e.kind == AdvIndexEntry::kSlice) {
      const int64_t len = x_shape[axis], stride = x_strides[axis];
      std::optional<int64_t> start, stop;
      if (e.has_start) start = ScalarInt(inputs[next++]);
      if (e.has_stop) stop = ScalarInt(inputs[next++]);
      const int64_t step = e.has_step ? ScalarInt(inputs[next++]) : 1;
      ASSIGN_OR_RETURN(const SliceSpan span, ClipSlice(op, len, start, stop, step));
      basic.push_back({span.count, span.count > 1 ? stride * step : stride, false});
      if (span.count > 0) plan.base += span.first * stride;
      ++axis;
      continue;
    }
    const Tensor& t = inputs[next++];
    if (t.dtype() == DType::kBool) {
      ASSIGN_OR_RETURN(std::vector<IndexArray> coords, MaskIndices(op, t, x_shape, axis));
      for (IndexArray& c : coords) arrays.push_back(std::move(c));
      axis += t.ndim();
    } else {
      ASSIGN_OR_RETURN(Tensor v, Normalized(op, t, x_shape[axis], axis));
      arrays.push_back({std::move(v), axis});
      ++axis;
    }
    if (adv_at < 0) {
      adv_at = static_cast<int>(basic.size());
    } else if (last != static_cast<int>(k) - 1) {
      adjacent = false;
    }
    last = static_cast<int>(k);
  }
  for (int d = axis; d < ndim; ++d) basic.push_back({x_shape[d], x_strides[d], false});
  for (const LoopDim& d : basic) plan.shape.push_back(d.size);
  plan.dims = basic;
  if (!arrays.empty()) {
    ASSIGN_OR_RETURN(Shape b, BroadcastShape(op, arrays));
    // The table has one int64 per broadcast element: bounded before it is allocated (arrays of
    // shapes (10^6, 1) and (1, 10^6) would ask for 10^12).
    RETURN_IF_ERROR(CheckShape(absl::StrCat(op.Name(), ": the index arrays' broadcast shape"), b,
                               DType::kInt64));
    const size_t at = adjacent ? adv_at : 0;
    plan.shape.insert(plan.shape.begin() + at, b.begin(), b.end());
    plan.dims.insert(plan.dims.begin() + at, {ShapeSize(b), 0, true});
    plan.shape_of_arrays = b;
  }
  RETURN_IF_ERROR(CheckOutputShape(op, plan.shape, dtype));
  if (!arrays.empty() && ShapeSize(plan.shape) > 0) {
    plan.table = OffsetTable(arrays, plan.shape_of_arrays, x_strides);
  }
  return plan;
}

// Calls f(flat index in x[idx], offset in x) for every element of x[idx], in C order.
template <typename F>
void ForEach(const Plan& p, F&& f) {
  for (const LoopDim& d : p.dims) {
    if (d.size == 0) return;
  }
  const int n = static_cast<int>(p.dims.size());
  if (n == 0) {
    f(int64_t{0}, p.base);
    return;
  }
  const int64_t* table = p.table.ndim() ? p.table.data<int64_t>() : nullptr;
  auto offset = [&](const LoopDim& d, int64_t i) { return d.table ? table[i] : i * d.stride; };
  std::vector<int64_t> at(n - 1, 0);
  const LoopDim& inner = p.dims[n - 1];
  int64_t flat = 0;
  while (true) {
    int64_t row = p.base;
    for (int d = 0; d < n - 1; ++d) row += offset(p.dims[d], at[d]);
    if (inner.table) {
      for (int64_t i = 0; i < inner.size; ++i) f(flat++, row + table[i]);
    } else {
      for (int64_t i = 0; i < inner.size; ++i) f(flat++, row + i * inner.stride);
    }
    int d = n - 2;
    while (d >= 0 && ++at[d] == p.dims[d].size) at[d--] = 0;
    if (d < 0) return;
  }
}

// The index vector when the list is one integer vector followed by full slices only: x[idx]
// along axis 0, numpy.take, which the take kernels (indexing_kernels.h) serve; else null.
const Tensor* TakeLike(const std::vector<AdvIndexEntry>& idx, std::span<const Tensor> index_inputs,
                       int ndim) {
  if (idx.empty() || idx[0].kind != AdvIndexEntry::kTensor || static_cast<int>(idx.size()) > ndim) {
    return nullptr;
  }
  for (size_t k = 1; k < idx.size(); ++k) {
    const AdvIndexEntry& e = idx[k];
    if (e.kind != AdvIndexEntry::kSlice || e.has_start || e.has_stop || e.has_step) return nullptr;
  }
  const Tensor& v = index_inputs[0];
  return v.ndim() == 1 && IsInteger(v.dtype()) ? &v : nullptr;
}

}  // namespace

absl::Status AdvancedSubtensor::Perform(const Apply&, std::span<const Tensor> inputs,
                                        std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  if (const Tensor* rows = TakeLike(idx(), inputs.subspan(1), x.ndim())) {
    ASSIGN_OR_RETURN(outputs[0], TakeRows(*this, x, *rows));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(Plan p,
                   MakePlan(*this, x.dtype(), x.shape(), x.strides(), idx(), inputs.subspan(1)));
  Tensor out = Tensor::Empty(x.dtype(), p.shape);
  DispatchDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const T* s = x.data<T>();
    ForEach(p, [&](int64_t flat, int64_t off) { o[flat] = s[off]; });
  });
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

absl::Status AdvancedIncSubtensor::Perform(const Apply&, std::span<const Tensor> inputs,
                                           std::vector<Tensor>& outputs) const {
  const Tensor& x = inputs[0];
  const bool set = attrs().set_instead_of_inc, once = attrs().ignore_duplicates;
  const Tensor* rows = TakeLike(idx(), inputs.subspan(2), x.ndim());
  if (rows != nullptr && (set || !once)) {  // numpy.add.at or a set along axis 0
    Shape target = x.shape();
    target[0] = rows->shape()[0];
    const Tensor& y = inputs[1];
    const Tensor yc = y.dtype() == x.dtype() ? y : y.AsType(x.dtype());  // converted once
    std::optional<Tensor> yb = yc.BroadcastTo(target);
    if (!yb) {
      return Invalid(
          *this,
          absl::StrCat("shape mismatch: value array of shape ", ShapeText(y.shape()),
                       " could not be broadcast to indexing result of shape ", ShapeText(target)));
    }
    Tensor out = attrs().inplace && x.is_contiguous() ? x : x.AsType(x.dtype());
    RETURN_IF_ERROR(ScatterRows(*this, out, *yb, *rows, set));
    outputs[0] = std::move(out);
    return absl::OkStatus();
  }
  // In place when x is contiguous (the runtime has made sure nothing else reads it), except
  // x[idx] += y, which reads x's values after writing; else a contiguous copy. Every error comes
  // before the first write.
  const bool in_place = attrs().inplace && x.is_contiguous() && (set || !once);
  Tensor out = in_place ? x : x.AsType(x.dtype());
  ASSIGN_OR_RETURN(
      Plan p, MakePlan(*this, x.dtype(), out.shape(), out.strides(), idx(), inputs.subspan(2)));
  const Tensor& y = inputs[1];
  std::optional<Tensor> yb = y.BroadcastTo(p.shape);
  if (!yb) {
    return Invalid(*this,
                   absl::StrCat("shape mismatch: value array of shape ", ShapeText(y.shape()),
                                " could not be broadcast to "
                                "indexing result of shape ",
                                ShapeText(p.shape)));
  }
  const Tensor values = yb->AsType(x.dtype());  // contiguous, in x[idx]'s C order
  const Tensor original = once && !set ? x.Contiguous() : Tensor();
  DispatchDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const T* v = values.data<T>();
    if (set) {
      ForEach(p, [&](int64_t flat, int64_t off) { o[off] = v[flat]; });
    } else if (once) {  // x[idx] += y: each place gets x's value plus its last y
      const T* xs = original.data<T>();
      ForEach(p, [&](int64_t flat, int64_t off) { o[off] = AddAsNumpy(xs[off], v[flat]); });
    } else {  // numpy.add.at
      ForEach(p, [&](int64_t flat, int64_t off) { o[off] = AddAsNumpy(o[off], v[flat]); });
    }
  });
  outputs[0] = std::move(out);
  return absl::OkStatus();
}

}  // namespace kiln
