#include "core/graph/op_attrs.h"

#include "absl/strings/str_cat.h"

namespace kiln {

void OpAttrs::Set(std::string key, AttrValue value) {
  for (auto& [k, v] : values_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  values_.emplace_back(std::move(key), std::move(value));
}

const AttrValue* OpAttrs::Find(const std::string& key) const {
  for (const auto& [k, v] : values_) {
    if (k == key) return &v;
  }
  return nullptr;
}

namespace {
template <typename T>
absl::StatusOr<T> Get(const AttrValue* v, const std::string& key, const char* type) {
  if (v == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("missing attribute '", key, "'"));
  if (const T* t = std::get_if<T>(v)) return *t;
  return absl::InvalidArgumentError(absl::StrCat("attribute '", key, "' must be ", type));
}
}  // namespace

absl::StatusOr<int64_t> OpAttrs::Int(const std::string& key) const {
  return Get<int64_t>(Find(key), key, "an integer");
}
absl::StatusOr<double> OpAttrs::Double(const std::string& key) const {
  return Get<double>(Find(key), key, "a float");
}
absl::StatusOr<std::string> OpAttrs::String(const std::string& key) const {
  return Get<std::string>(Find(key), key, "a string");
}
absl::StatusOr<std::vector<int64_t>> OpAttrs::Ints(const std::string& key) const {
  return Get<std::vector<int64_t>>(Find(key), key, "a list of integers");
}

}  // namespace kiln
