#include "core/tensor/tensor.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/tensor/check.h"
#include "core/tensor/status_macros.h"
#include "core/tensor/allocator.h"
#include "core/tensor/dtype_dispatch.h"
#include "core/tensor/tensor_format.h"

namespace kiln {
namespace {

// Calls f(flat_index, element_offset, length, stride) for every row of (shape, strides) in C
// order: `length` elements `stride` apart, after merging the dims that step over each other
// whole (a transposed leading pair leaves its rows contiguous) and dropping dims of size 1.
template <typename F>
void ForEachRow(const Shape& shape, const Shape& strides, F&& f) {
  if (ShapeSize(shape) == 0) return;
  absl::InlinedVector<int64_t, 6> dims, steps;  // merged, outermost first
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!dims.empty() && steps.back() == strides[d] * shape[d]) {
      dims.back() *= shape[d];
      steps.back() = strides[d];
    } else {
      dims.push_back(shape[d]);
      steps.push_back(strides[d]);
    }
  }
  if (dims.empty()) {  // one element
    f(0, 0, 1, 1);
    return;
  }
  const int outer = static_cast<int>(dims.size()) - 1;
  const int64_t length = dims[outer], stride = steps[outer];
  absl::InlinedVector<int64_t, 6> index(outer, 0);
  int64_t offset = 0;
  for (int64_t flat = 0, n = ShapeSize(shape); flat < n; flat += length) {
    f(flat, offset, length, stride);
    for (int d = outer - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) {
        offset += steps[d];
        break;
      }
      offset -= steps[d] * (dims[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace

Shape ContiguousStrides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

int64_t ShapeSize(const Shape& shape) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d == 0) return 0;  // (2^62, 2^62, 0) is empty, though its other dims' product overflows
    overflow = overflow || __builtin_mul_overflow(n, d, &n);
  }
  // Saturated, so that no overflowing shape passes for a small one (see the header).
  return overflow ? std::numeric_limits<int64_t>::max() : n;
}

namespace {

// CheckShape's rule for elements of `element_bytes`; the message of a shape over the limit ends
// with " <limit_verb> <kMaxTensorBytes> <limit_unit>".
absl::Status CheckBounded(const std::string& what, const Shape& shape, int64_t element_bytes,
                          const char* limit_verb, const char* limit_unit) {
  int64_t bytes = element_bytes;
  // Known before the loop: (2^46, 0) is as empty as (0, 2^46), whatever the order of its dims.
  const bool zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": negative dimension in shape ", ShapeToString(shape)));
    }
    if (!zero && (d > kMaxTensorBytes || bytes > kMaxTensorBytes / d)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": shape ", ShapeToString(shape), " ", limit_verb, " ",
                       kMaxTensorBytes, " ", limit_unit));
    }
    if (!zero) bytes *= d;
  }
  // A zero dim makes the tensor empty, but each dim must still be representable, and so must
  // the product of the others (as in NumPy), so that no stride or partial size overflows.
  int64_t nonzero = 1;
  for (int64_t d : shape) {
    if (d > kMaxTensorBytes) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": dimension ", d, " of shape ",
                                                     ShapeToString(shape), " is too large"));
    }
    if (d > 0 && nonzero > kMaxTensorBytes / d) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": shape ", ShapeToString(shape), " is too large"));
    }
    if (d > 0) nonzero *= d;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckShape(const std::string& what, const Shape& shape, DType dtype) {
  return CheckBounded(what, shape, DTypeSize(dtype), "needs more than", "bytes");
}

absl::Status CheckBoolBytes(const std::string& what, std::string_view bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (static_cast<unsigned char>(bytes[i]) > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": bool element ", i, " is neither 0 nor 1"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckStaticShape(const std::string& what, const Shape& known) {
  return CheckBounded(what, known, 1, "has more than", "elements");
}

absl::StatusOr<Tensor> Tensor::FromBytes(DType dtype, Shape shape, std::string_view bytes,
                                         std::string_view what) {
  const std::string name(what);
  RETURN_IF_ERROR(CheckShape(name, shape, dtype));
  const int64_t expected = ShapeSize(shape) * DTypeSize(dtype);
  if (static_cast<int64_t>(bytes.size()) != expected) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", DTypeName(dtype), " data of shape ",
                                                   ShapeToString(shape), " needs ", expected,
                                                   " bytes but ", bytes.size(), " were given"));
  }
  if (dtype == DType::kBool) RETURN_IF_ERROR(CheckBoolBytes(name, bytes));
  Tensor t = Empty(dtype, std::move(shape));
  if (expected > 0) std::memcpy(t.raw_data(), bytes.data(), expected);
  return t;
}

std::optional<Tensor> Tensor::BroadcastTo(const Shape& shape) const {
  const int pad = static_cast<int>(shape.size()) - ndim();
  if (pad < 0) return std::nullopt;
  Shape strides(shape.size(), 0);
  for (int d = 0; d < ndim(); ++d) {
    if (shape_[d] == shape[pad + d]) {
      strides[pad + d] = strides_[d];
    } else if (shape_[d] != 1) {
      return std::nullopt;
    }
  }
  return View(shape, std::move(strides));
}

std::string ShapeToString(const Shape& shape) {
  return absl::StrCat("(", absl::StrJoin(shape, ", "), shape.size() == 1 ? ",)" : ")");
}

Tensor Tensor::Empty(DType dtype, Shape shape) {
  // One pass from the last dim: the checks, ShapeSize's product (0 with a zero dim, saturated on
  // overflow) and ContiguousStrides' strides, written in place.
  const int ndim = static_cast<int>(shape.size());
  Tensor t;
  t.strides_.resize(ndim);
  int64_t stride = 1;
  bool zero = false, overflow = false;
  for (int d = ndim - 1; d >= 0; --d) {
    const int64_t n = shape[d];
    KILN_CHECK(n >= 0) << "negative dimension in " << ShapeToString(shape);
    t.strides_[d] = stride;
    zero = zero || n == 0;
    overflow = __builtin_mul_overflow(stride, n, &stride) || overflow;  // wraps, as strides did
  }
  const int64_t size = zero ? 0 : overflow ? std::numeric_limits<int64_t>::max() : stride;
  // The last line of defence for a size no kernel checked: never a wrapped, small buffer.
  const int64_t element = DTypeSize(dtype);
  int64_t bytes = 0;  // (a multiplication, not kMaxTensorBytes / element: a division per tensor)
  if (__builtin_mul_overflow(size, element, &bytes) || bytes > kMaxTensorBytes) {
    throw BufferLimitExceeded(size == std::numeric_limits<int64_t>::max()
                                  ? std::numeric_limits<size_t>::max()
                                  : static_cast<size_t>(size) * element,
                              static_cast<size_t>(kMaxTensorBytes));
  }
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.buffer_bytes_ = bytes;
  t.buffer_ = AllocateBuffer(static_cast<size_t>(t.buffer_bytes_));
  return t;
}

Tensor Tensor::Zeros(DType dtype, Shape shape) {
  Tensor t = Empty(dtype, std::move(shape));
  std::memset(t.raw_data(), 0, t.nbytes());
  return t;
}

template <typename T>
absl::StatusOr<Tensor> Tensor::FromValues(DType dtype, Shape shape, std::span<const T> values) {
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError("negative dimension in " + ShapeToString(shape));
  }
  if (ShapeSize(shape) != static_cast<int64_t>(values.size())) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", ShapeToString(shape), " needs ",
                                                   ShapeSize(shape), " values but ", values.size(),
                                                   " were given"));
  }
  Tensor t = Empty(dtype, std::move(shape));
  DispatchDType(dtype, [&](auto tag) {
    using Out = typename decltype(tag)::type;
    Out* out = t.data<Out>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = ConvertElement<Out>(values[i]);
  });
  return t;
}

template absl::StatusOr<Tensor> Tensor::FromValues(DType, Shape, std::span<const bool>);
template absl::StatusOr<Tensor> Tensor::FromValues(DType, Shape, std::span<const int32_t>);
template absl::StatusOr<Tensor> Tensor::FromValues(DType, Shape, std::span<const int64_t>);
template absl::StatusOr<Tensor> Tensor::FromValues(DType, Shape, std::span<const uint64_t>);
template absl::StatusOr<Tensor> Tensor::FromValues(DType, Shape, std::span<const float>);
template absl::StatusOr<Tensor> Tensor::FromValues(DType, Shape, std::span<const double>);

int64_t Tensor::size() const { return ShapeSize(shape_); }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int d = ndim() - 1; d >= 0; --d) {
    if (shape_[d] != 1 && strides_[d] != expected) return false;
    expected *= shape_[d];
  }
  return true;
}

Tensor Tensor::Wrap(DType dtype, Shape shape, Shape strides, void* data,
                    std::shared_ptr<void> owner) {
  KILN_CHECK(shape.size() == strides.size());
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.buffer_ = std::shared_ptr<void>(std::move(owner), data);
  return t;
}

Tensor Tensor::View(Shape shape, Shape strides, int64_t offset) const {
  KILN_CHECK(shape.size() == strides.size());
  Tensor t;  // (not a copy of *this: its shape and strides would be allocated to be replaced)
  t.dtype_ = dtype_;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.offset_ = offset_ + offset;
  t.buffer_bytes_ = buffer_bytes_;
  t.buffer_ = buffer_;
  return t;
}

Tensor Tensor::Compact() const {
  if (offset_ == 0 && buffer_bytes_ == nbytes() && is_contiguous()) return *this;
  return AsType(dtype_);
}

Tensor Tensor::Contiguous() const {
  if (is_contiguous()) return *this;
  return AsType(dtype_);
}

Tensor Tensor::AsType(DType dtype) const {
  Tensor out = Empty(dtype, shape_);
  const bool contiguous = is_contiguous();
  if (contiguous && dtype == dtype_) {
    std::memcpy(out.raw_data(), raw_data(), nbytes());
    return out;
  }
  DispatchDType(dtype_, [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    DispatchDType(dtype, [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      const In* in = data<In>();
      Out* o = out.data<Out>();
      if (contiguous) {  // a flat loop the compiler vectorizes
        const int64_t n = size();
        for (int64_t i = 0; i < n; ++i) o[i] = ConvertElement<Out>(in[i]);
        return;
      }
      ForEachRow(shape_, strides_, [&](int64_t flat, int64_t off, int64_t n, int64_t step) {
        Out* dst = o + flat;
        const In* src = in + off;
        if constexpr (std::is_same_v<In, Out>) {
          if (step == 1) {
            std::memcpy(dst, src, n * sizeof(Out));
            return;
          }
        }
        for (int64_t i = 0; i < n; ++i) dst[i] = ConvertElement<Out>(src[i * step]);
      });
    });
  });
  return out;
}

double Tensor::ElementAsDouble(int64_t flat_index) const {
  const Tensor c = Contiguous();
  return DispatchDType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return ConvertElement<double>(c.data<T>()[flat_index]);
  });
}

bool Tensor::BitwiseEquals(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  const Tensor a = Contiguous();
  const Tensor b = other.Contiguous();
  return std::memcmp(a.raw_data(), b.raw_data(), nbytes()) == 0;
}

std::string Tensor::ToString() const { return FormatTensor(*this); }

bool IsTrue(const Tensor& cond) { return cond.AsType(DType::kBool).data<bool>()[0]; }

}  // namespace kiln
