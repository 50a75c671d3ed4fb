// Elemwise's reference kernel: NumPy broadcasting over strided inputs, one scalar op at a time.
#include <array>
#include <cmath>
#include <complex>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/ops/elemwise.h"
#include "core/runtime/dtype_dispatch.h"

namespace kiln {
namespace {

// Integer arithmetic wraps around as in NumPy (and without C++'s signed-overflow UB).
template <typename T>
T Wrap(uint64_t v) {
  return static_cast<T>(v);
}

template <typename T>
T IntPow(T base, T exp) {
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return Wrap<T>(result);
}

template <typename T>
constexpr bool kIsIntegral = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
constexpr bool kIsFloating = std::is_floating_point_v<T> || IsComplexType<T>::value;

// One binary scalar op on values of the compute type T.
template <typename T>
T Binary(ScalarOpKind op, T a, T b) {
  if constexpr (std::is_same_v<T, Eigen::half>) {
    return T(Binary<float>(op, static_cast<float>(a), static_cast<float>(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return op == ScalarOpKind::kMul ? (a && b) : (a || b);  // add is or, mul is and
  } else if constexpr (kIsIntegral<T>) {
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    switch (op) {
      case ScalarOpKind::kAdd: return Wrap<T>(x + y);
      case ScalarOpKind::kSub: return Wrap<T>(x - y);
      case ScalarOpKind::kMul: return Wrap<T>(x * y);
      case ScalarOpKind::kPow: return IntPow(a, b);
      default: return T(0);  // true_div never computes in an integer type
    }
  } else {
    switch (op) {
      case ScalarOpKind::kAdd: return a + b;
      case ScalarOpKind::kSub: return a - b;
      case ScalarOpKind::kMul: return a * b;
      case ScalarOpKind::kTrueDiv: return a / b;
      case ScalarOpKind::kPow: return std::pow(a, b);
      default: return T(0);
    }
  }
}

// One unary scalar op on values of the compute type T.
template <typename T>
T Unary(ScalarOpKind op, T a) {
  if constexpr (std::is_same_v<T, Eigen::half>) {
    return T(Unary<float>(op, static_cast<float>(a)));
  } else if constexpr (kIsIntegral<T>) {
    return Wrap<T>(uint64_t{0} - static_cast<uint64_t>(a));  // neg; exp/log compute in floats
  } else if constexpr (kIsFloating<T>) {
    switch (op) {
      case ScalarOpKind::kNeg: return -a;
      case ScalarOpKind::kExp: return std::exp(a);
      case ScalarOpKind::kLog: return std::log(a);
      default: return T(0);
    }
  } else {
    return a;
  }
}

// Calls f(out_flat_index, offsets) over `shape` in C order; offsets[k] walks strides[k].
template <size_t N, typename F>
void BroadcastLoop(const Shape& shape, const std::array<std::vector<int64_t>, N>& strides, F&& f) {
  const int64_t total = ShapeSize(shape);
  if (total == 0) return;
  const int ndim = static_cast<int>(shape.size());
  std::vector<int64_t> index(ndim, 0);
  std::array<int64_t, N> off{};
  const int64_t inner = ndim == 0 ? 1 : shape[ndim - 1];
  std::array<int64_t, N> inner_stride{};
  for (size_t k = 0; k < N; ++k) inner_stride[k] = ndim == 0 ? 0 : strides[k][ndim - 1];
  for (int64_t flat = 0; flat < total; flat += inner) {
    std::array<int64_t, N> o = off;
    for (int64_t i = 0; i < inner; ++i) {
      f(flat + i, o);
      for (size_t k = 0; k < N; ++k) o[k] += inner_stride[k];
    }
    for (int d = ndim - 2; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

// Strides of `t` seen through the output shape: 0 along broadcast dims.
std::vector<int64_t> BroadcastStrides(const Tensor& t, const Shape& out_shape) {
  std::vector<int64_t> s(out_shape.size(), 0);
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (t.shape()[d] == out_shape[d]) s[d] = t.strides()[d];
  }
  return s;
}

}  // namespace

absl::Status Elemwise::Perform(const Apply& node, std::span<const Tensor> inputs,
                               std::vector<Tensor>& outputs) const {
  const DType out_dtype = node.output_ptr(0)->tensor_type()->dtype();
  const size_t ndim = node.output_ptr(0)->tensor_type()->ndim();

  Shape shape(ndim, 1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (static_cast<size_t>(inputs[i].ndim()) != ndim) {
      return absl::InvalidArgumentError(absl::StrCat(Name(), ": input ", i, " has shape ",
                                                     ShapeToString(inputs[i].shape()), " but ",
                                                     ndim, " dims were expected"));
    }
    for (size_t d = 0; d < ndim; ++d) {
      const int64_t dim = inputs[i].shape()[d];
      if (dim == shape[d] || dim == 1) continue;
      if (shape[d] != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            Name(), ": input ", i, " has shape ", ShapeToString(inputs[i].shape()),
            ", which does not broadcast with the other inputs on dim ", d, " (size ", shape[d],
            " vs ", dim, ")"));
      }
      shape[d] = dim;
    }
  }

  // Compute in the output dtype (float16 in float32), except true_div of integers, which
  // already has a float output dtype.
  const DType compute = out_dtype == DType::kFloat16 ? DType::kFloat32 : out_dtype;
  std::vector<Tensor> cast;
  for (const Tensor& in : inputs) cast.push_back(in.dtype() == compute ? in : in.AsType(compute));

  Tensor out = Tensor::Empty(compute, shape);
  absl::Status status = DispatchDType(compute, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    if (cast.size() == 1) {
      const T* a = cast[0].data<T>();
      BroadcastLoop<1>(shape, {BroadcastStrides(cast[0], shape)},
                       [&](int64_t i, const std::array<int64_t, 1>& off) {
                         o[i] = Unary<T>(scalar_op_, a[off[0]]);
                       });
      return absl::OkStatus();
    }
    if constexpr (std::is_signed_v<T> && kIsIntegral<T>) {
      if (scalar_op_ == ScalarOpKind::kPow) {
        const Tensor e = cast[1].Contiguous();
        for (int64_t k = 0; k < e.size(); ++k) {
          if (e.data<T>()[k] < 0) {
            return absl::InvalidArgumentError(
                absl::StrCat(Name(), ": integers to negative integer powers are not allowed"));
          }
        }
      }
    }
    // Fold n-ary add/mul left to right: out = in0 op in1, then out = out op in2, ...
    const T* a = cast[0].data<T>();
    const T* b = cast[1].data<T>();
    BroadcastLoop<2>(shape, {BroadcastStrides(cast[0], shape), BroadcastStrides(cast[1], shape)},
                     [&](int64_t i, const std::array<int64_t, 2>& off) {
                       o[i] = Binary<T>(scalar_op_, a[off[0]], b[off[1]]);
                     });
    for (size_t k = 2; k < cast.size(); ++k) {
      const T* c = cast[k].data<T>();
      BroadcastLoop<1>(shape, {BroadcastStrides(cast[k], shape)},
                       [&](int64_t i, const std::array<int64_t, 1>& off) {
                         o[i] = Binary<T>(scalar_op_, o[i], c[off[0]]);
                       });
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  outputs[0] = compute == out_dtype ? std::move(out) : out.AsType(out_dtype);
  return absl::OkStatus();
}

}  // namespace kiln
