// Types: the constraints a Variable's value satisfies. TensorType is Aesara's dtype + static shape.
#ifndef KILN_CORE_GRAPH_TYPE_H_
#define KILN_CORE_GRAPH_TYPE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/tensor/dtype.h"

namespace kiln {

// A Type names a set of values; equal types accept the same values.
class Type {
 public:
  virtual ~Type() = default;
  // Aesara's str(type), e.g. "TensorType(float64, (?, 3))".
  virtual std::string ToString() const = 0;
  // Structural equality.
  virtual bool Equals(const Type& other) const = 0;
  // Hash consistent with Equals.
  virtual size_t Hash() const = 0;
};

using TypePtr = std::shared_ptr<const Type>;

// One dimension of a static shape: a known size or nullopt for unknown ("?").
using StaticDim = std::optional<int64_t>;
using StaticShape = std::vector<StaticDim>;

// Aesara's TensorType: a dtype and a static shape whose dims may be unknown; a dim of static size
// 1 is broadcastable.
class TensorType final : public Type {
 public:
  TensorType(DType dtype, StaticShape shape) : dtype_(dtype), shape_(std::move(shape)) {}

  // Shared instance constructor used throughout the graph code.
  static std::shared_ptr<const TensorType> Make(DType dtype, StaticShape shape);
  // The type whose broadcastable dims are 1 and the others unknown, as Aesara's
  // TensorType(dtype, broadcastable=...).
  static std::shared_ptr<const TensorType> FromBroadcastable(DType dtype,
                                                             std::span<const bool> broadcastable);

  DType dtype() const { return dtype_; }
  const StaticShape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  // Aesara's broadcastable pattern: true where the static size is 1.
  std::vector<bool> broadcastable() const;

  // "TensorType(int32, (1, ?))".
  std::string ToString() const override;
  bool Equals(const Type& other) const override;
  size_t Hash() const override;

 private:
  DType dtype_;
  StaticShape shape_;
};

using TensorTypePtr = std::shared_ptr<const TensorType>;

// "(2, ?)" for a static shape, as Aesara prints it ("(?,)" for one dim, "()" for none).
std::string StaticShapeToString(const StaticShape& shape);

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_TYPE_H_
