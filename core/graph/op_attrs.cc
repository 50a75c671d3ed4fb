#include "core/graph/op_attrs.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

namespace {
// One value with its type tag: i (integer), f (a double's bytes in hex), s (length-prefixed string),
// l (list of integers).
std::string ValueText(const AttrValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return absl::StrCat("i", *i);
  if (const auto* d = std::get_if<double>(&v)) {
    return absl::StrCat("f", absl::BytesToHexString(
                                 absl::string_view(reinterpret_cast<const char*>(d), sizeof *d)));
  }
  if (const auto* s = std::get_if<std::string>(&v)) return absl::StrCat("s", s->size(), ":", *s);
  return absl::StrCat("l[", absl::StrJoin(std::get<std::vector<int64_t>>(v), ","), "]");
}
}  // namespace

std::string OpAttrs::Text() const {
  std::string out;
  for (const auto& [key, value] : values_) absl::StrAppend(&out, key, "=", ValueText(value), ";");
  return out;
}

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
