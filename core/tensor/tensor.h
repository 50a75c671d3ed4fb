// Tensor: a dtype, a shape and element strides over a shared 64-byte-aligned buffer; views share
// it.
#ifndef KILN_CORE_TENSOR_TENSOR_H_
#define KILN_CORE_TENSOR_TENSOR_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "core/tensor/dtype.h"

namespace kiln {

// A tensor's dims, or its strides: up to four held inline (no allocation for the tensors of
// small-node graphs), more on the heap. Converts to and from std::vector<int64_t>.
class Shape : public absl::InlinedVector<int64_t, 4> {
  using Base = absl::InlinedVector<int64_t, 4>;

 public:
  using Base::Base;
  Shape() = default;
  Shape(const std::vector<int64_t>& dims) : Base(dims.begin(), dims.end()) {}  // NOLINT
  operator std::vector<int64_t>() const { return {begin(), end()}; }           // NOLINT

  friend bool operator==(const Shape& a, const Shape& b) {
    return static_cast<const Base&>(a) == static_cast<const Base&>(b);
  }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
};

// Alignment of every buffer, in bytes: a cache line and an AVX-512 register.
inline constexpr size_t kTensorAlignment = 64;

class Tensor {
 public:
  // A tensor without a buffer; use the factories below.
  Tensor() = default;

  // A contiguous (C-order) tensor with uninitialised contents. A shape past kMaxTensorBytes
  // (even one whose size overflows) throws BufferLimitExceeded: kernels check with CheckShape.
  static Tensor Empty(DType dtype, Shape shape);
  // A contiguous tensor filled with zero bytes.
  static Tensor Zeros(DType dtype, Shape shape);
  // A contiguous tensor holding `values` converted to `dtype` (their count must equal the
  // shape's size). Instantiated for bool, int32_t, int64_t, uint64_t, float and double.
  template <typename T>
  static absl::StatusOr<Tensor> FromValues(DType dtype, Shape shape, std::span<const T> values);
  // A contiguous tensor holding `bytes`, the C-order elements in this machine's layout. Checks
  // the shape (CheckShape), the byte count, and that every bool is 0 or 1; `what` names the
  // tensor in the error.
  static absl::StatusOr<Tensor> FromBytes(DType dtype, Shape shape, std::string_view bytes,
                                          std::string_view what = "tensor");
  // A tensor over memory it does not own (a NumPy array's, say): `data` holds its first element
  // and stays valid while `owner` lives; strides in elements. Kiln never writes into inputs, so
  // a function's arguments may be such views.
  static Tensor Wrap(DType dtype, Shape shape, Shape strides, void* data,
                     std::shared_ptr<void> owner);
  // Same, from a braced list: Tensor::Of<double>(DType::kFloat64, {3}, {0, 1, 2}).
  template <typename T>
  static absl::StatusOr<Tensor> Of(DType dtype, Shape shape, std::initializer_list<T> values) {
    return FromValues<T>(dtype, std::move(shape),
                         std::span<const T>(values.begin(), values.size()));
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  // Strides in elements (not bytes); 0 on broadcast views.
  const Shape& strides() const { return strides_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  // Number of elements.
  int64_t size() const;
  // Bytes the elements take when contiguous.
  int64_t nbytes() const { return size() * DTypeSize(dtype_); }
  bool is_contiguous() const;
  // Bytes of the buffer this tensor keeps alive (more than nbytes() for a small view of a large
  // one); -1 for wrapped memory of unknown size.
  int64_t buffer_bytes() const { return buffer_bytes_; }
  // A tensor that keeps alive no more memory than it shows: itself when it spans its whole
  // buffer, else a contiguous copy (what a value stored for long should be).
  Tensor Compact() const;
  // True when both share one buffer (a view of the other, or the same tensor).
  bool SharesBufferWith(const Tensor& other) const { return buffer_ == other.buffer_; }

  // Pointer to the first element (buffer start plus the view's offset).
  void* raw_data() { return static_cast<char*>(buffer_.get()) + offset_ * DTypeSize(dtype_); }
  const void* raw_data() const {
    return static_cast<const char*>(buffer_.get()) + offset_ * DTypeSize(dtype_);
  }
  template <typename T>
  T* data() {
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }

  // A view with new shape and element strides at an element offset from this view's start.
  Tensor View(Shape shape, Shape strides, int64_t offset = 0) const;
  // A C-contiguous copy, or this tensor itself when already contiguous.
  Tensor Contiguous() const;
  // A view broadcast to `shape` (dims aligned on the right, stride 0 where this tensor has 1),
  // or nullopt when the shapes do not broadcast.
  std::optional<Tensor> BroadcastTo(const Shape& shape) const;
  // A contiguous copy converted to `dtype` with C++ conversions (NumPy's astype).
  Tensor AsType(DType dtype) const;
  // The element at a flat C-order index, converted to double (tests and printing).
  double ElementAsDouble(int64_t flat_index) const;
  // Bitwise equality of dtype, shape and elements (so NaN equals NaN and -0.0 differs from 0.0).
  bool BitwiseEquals(const Tensor& other) const;
  // NumPy's str(array): "2.0", "[0 1 2]", "[[1. 2.]\n [3. 4.]]".
  std::string ToString() const;

 private:
  DType dtype_ = DType::kFloat64;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
  int64_t buffer_bytes_ = -1;
  std::shared_ptr<void> buffer_;
};

// C-order strides for a shape, in elements.
Shape ContiguousStrides(const Shape& shape);
// Product of the dims: 0 when one is 0, else INT64_MAX when the product overflows.
int64_t ShapeSize(const Shape& shape);
// The largest tensor Kiln allocates, in bytes (2^46, 64 TiB: past any machine, short of overflow).
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 46;
// Checks a shape that comes from user values before anything is allocated: no negative dim and
// at most kMaxTensorBytes of `dtype` (so no product overflows). `what` prefixes the error.
absl::Status CheckShape(const std::string& what, const Shape& shape, DType dtype);
// Checks raw bool data from outside: every byte 0 or 1 (INVALID_ARGUMENT naming `what` and the
// first element that is not).
absl::Status CheckBoolBytes(const std::string& what, std::string_view bytes);
// Checks the known dims of a type: at most kMaxTensorBytes elements, so that no product of them
// overflows, in elements or in bytes. A type only describes values; allocating them is what
// CheckShape and the allocator's limit bound (a float64 gradient of an int8 input of 2^46
// elements has a valid type).
absl::Status CheckStaticShape(const std::string& what, const Shape& known);
// "(2, 3)", as Python prints a shape tuple.
std::string ShapeToString(const Shape& shape);

// Whether a condition's value picks the then branch: nonzero (NaN counts as nonzero).
bool IsTrue(const Tensor& cond);

}  // namespace kiln

#endif  // KILN_CORE_TENSOR_TENSOR_H_
