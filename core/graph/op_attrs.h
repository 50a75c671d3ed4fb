// An op's props as typed attributes: what serialization (the cache, the wire format) stores of
// an op, and what MakeOp (core/graph/op_registry.h) builds it back from.
#ifndef KILN_CORE_GRAPH_OP_ATTRS_H_
#define KILN_CORE_GRAPH_OP_ATTRS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>>;

class OpAttrs {
 public:
  OpAttrs() = default;
  OpAttrs(std::initializer_list<std::pair<std::string, AttrValue>> values) : values_(values) {}

  void Set(std::string key, AttrValue value);
  bool Has(const std::string& key) const { return Find(key) != nullptr; }
  // The value of `key`, or an INVALID_ARGUMENT error naming the key and the expected type.
  absl::StatusOr<int64_t> Int(const std::string& key) const;
  absl::StatusOr<double> Double(const std::string& key) const;
  absl::StatusOr<std::string> String(const std::string& key) const;
  absl::StatusOr<std::vector<int64_t>> Ints(const std::string& key) const;
  const std::vector<std::pair<std::string, AttrValue>>& values() const { return values_; }
  // The attributes as exact text, "ndim=i2;axis=l[0,1];": what op identity and the function id
  // are computed from.
  std::string Text() const;
  bool operator==(const OpAttrs&) const = default;

 private:
  const AttrValue* Find(const std::string& key) const;
  std::vector<std::pair<std::string, AttrValue>> values_;
};

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_OP_ATTRS_H_
