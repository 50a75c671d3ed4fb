#include "core/graph/type.h"

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {

std::shared_ptr<const TensorType> TensorType::Make(DType dtype, StaticShape shape) {
  return std::make_shared<const TensorType>(dtype, std::move(shape));
}

std::shared_ptr<const TensorType> TensorType::FromBroadcastable(
    DType dtype, std::span<const bool> broadcastable) {
  StaticShape shape;
  for (bool b : broadcastable) shape.push_back(b ? StaticDim(1) : std::nullopt);
  return Make(dtype, std::move(shape));
}

std::vector<bool> TensorType::broadcastable() const {
  std::vector<bool> result;
  for (const StaticDim& d : shape_) result.push_back(d == 1);
  return result;
}

std::string StaticShapeToString(const StaticShape& shape) {
  std::string dims = absl::StrJoin(shape, ", ", [](std::string* out, const StaticDim& d) {
    absl::StrAppend(out, d ? absl::StrCat(*d) : "?");
  });
  return absl::StrCat("(", dims, shape.size() == 1 ? ",)" : ")");
}

std::string TensorType::ToString() const {
  return absl::StrCat("TensorType(", DTypeName(dtype_), ", ", StaticShapeToString(shape_), ")");
}

bool TensorType::Equals(const Type& other) const {
  const auto* t = dynamic_cast<const TensorType*>(&other);
  return t != nullptr && t->dtype_ == dtype_ && t->shape_ == shape_;
}

size_t TensorType::Hash() const {
  size_t h = absl::HashOf(static_cast<int>(dtype_), shape_.size());
  for (const StaticDim& d : shape_) h = absl::HashOf(h, d.value_or(-1));
  return h;
}

}  // namespace kiln
