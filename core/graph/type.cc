#include "core/graph/type.h"

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {

namespace {

// Types of at most kSharedNdim dims, each unknown or 1, are shared instances: most variables of
// a graph have one (a 500,000-node gradient then holds a few types, not 500,000).
constexpr int kSharedNdim = 3;
constexpr int kSharedPerDType = (1 << (kSharedNdim + 1)) - 1;  // 2^n patterns for n = 0..3

// The index of a shape among a dtype's shared types, or -1 when it has none.
int SharedIndex(const StaticShape& shape) {
  const int n = static_cast<int>(shape.size());
  if (n > kSharedNdim) return -1;
  int pattern = 0;
  for (int d = 0; d < n; ++d) {
    if (shape[d].has_value() && *shape[d] != 1) return -1;
    if (shape[d].has_value()) pattern |= 1 << d;
  }
  return (1 << n) - 1 + pattern;
}

}  // namespace

std::shared_ptr<const TensorType> TensorType::Make(DType dtype, StaticShape shape) {
  static const std::vector<TensorTypePtr> shared = [] {
    std::vector<TensorTypePtr> types(kNumDTypes * kSharedPerDType);
    for (int d = 0; d < kNumDTypes; ++d) {
      for (int n = 0; n <= kSharedNdim; ++n) {
        for (int pattern = 0; pattern < (1 << n); ++pattern) {
          StaticShape s(n);
          for (int i = 0; i < n; ++i) {
            if (pattern & (1 << i)) s[i] = 1;
          }
          types[d * kSharedPerDType + SharedIndex(s)] =
              std::make_shared<const TensorType>(static_cast<DType>(d), s);
        }
      }
    }
    return types;
  }();
  if (const int i = SharedIndex(shape); i >= 0) {
    return shared[static_cast<int>(dtype) * kSharedPerDType + i];
  }
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
