#include "core/ops/diagonal_subtensor_kernels.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ops/op_util.h"
#include "core/tensor/dtype_dispatch.h"

namespace kiln {

namespace {

// The axis value `v` (input `index`, named `name`) normalized to [0, ndim), or an error.
absl::StatusOr<int> Axis(const Op& op, const Tensor& v, int index, const char* name,
                         const Shape& shape) {
  if (v.size() != 1) {
    return Invalid(op, absl::StrCat("input ", index, " (", name, ") has shape ",
                                    ShapeToString(v.shape()), " but must be a scalar"));
  }
  const int64_t ndim = static_cast<int64_t>(shape.size());
  const int64_t axis = ScalarInt(v);
  if (axis < -ndim || axis >= ndim) {
    return Invalid(op,
                   absl::StrCat("input ", index, " (", name, ") is ", axis,
                                ", out of range for input 0 (x) of shape ", ShapeToString(shape)));
  }
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

// dst[k] += src[k] over `shape` for two strided buffers of T.
template <typename T>
void AddStrided(T* dst, const std::vector<int64_t>& dst_strides, const T* src,
                const std::vector<int64_t>& src_strides, const Shape& shape) {
  const int ndim = static_cast<int>(shape.size());
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(ndim, 0);
  int64_t di = 0, si = 0;
  while (true) {
    dst[di] = static_cast<T>(dst[di] + src[si]);
    int d = ndim - 1;
    for (; d >= 0; --d) {
      ++index[d];
      di += dst_strides[d];
      si += src_strides[d];
      if (index[d] < shape[d]) break;
      di -= dst_strides[d] * shape[d];
      si -= src_strides[d] * shape[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

absl::StatusOr<Tensor> DiagonalStripe(const Op& op, const Tensor& x, const Tensor& i0,
                                      const Tensor& i1) {
  const Shape& shape = x.shape();
  absl::StatusOr<int> a0 = Axis(op, i0, 1, "i0", shape);
  if (!a0.ok()) return a0.status();
  absl::StatusOr<int> a1 = Axis(op, i1, 2, "i1", shape);
  if (!a1.ok()) return a1.status();
  const int64_t n0 = shape[*a0], n1 = shape[*a1];
  if (n0 < n1) {
    return Invalid(op, absl::StrCat("input 0 (x) has shape ", ShapeToString(shape),
                                    ": its length along i0=", *a0, " (", n0,
                                    ") is less than its length along i1=", *a1, " (", n1,
                                    "), so the diagonal stripe does not cross it"));
  }
  // NumPy's x[..., n1 - 1:, ...] along i0 (a start of -1 when n1 is 0), then the i1 stride
  // moved back by one step of i0.
  const int64_t start = n1 >= 1 ? n1 - 1 : (n0 >= 1 ? n0 - 1 : 0);
  Shape out_shape = shape;
  out_shape[*a0] = n0 - start;
  std::vector<int64_t> strides = x.strides();
  const int64_t offset = start * strides[*a0];
  if (n1 != 1) strides[*a1] -= strides[*a0];
  return x.View(std::move(out_shape), std::move(strides), offset);
}

absl::Status AddInto(const Op& op, Tensor& stripe, const Tensor& amt) {
  const Tensor cast = amt.dtype() == stripe.dtype() ? amt : amt.AsType(stripe.dtype());
  std::optional<Tensor> src = cast.BroadcastTo(stripe.shape());
  if (!src || amt.ndim() > stripe.ndim()) {
    return Invalid(op, absl::StrCat("input 3 (amt) has shape ", ShapeToString(amt.shape()),
                                    ", which does not broadcast to the diagonal stripe's shape ",
                                    ShapeToString(stripe.shape())));
  }
  DispatchDType(stripe.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    AddStrided<T>(stripe.data<T>(), stripe.strides(), src->data<T>(), src->strides(),
                  stripe.shape());
  });
  return absl::OkStatus();
}

}  // namespace kiln
