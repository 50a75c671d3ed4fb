#include "core/graph/op_registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

struct Registered {
  OpFactory factory;
  OpFieldsFn fields;
};

// Filled by static initializers before main, read-only afterwards: no lock needed.
absl::flat_hash_map<std::string, Registered>& Registry() {
  static auto* registry = new absl::flat_hash_map<std::string, Registered>();
  return *registry;
}

}  // namespace

bool RegisterOp(absl::string_view type_name, OpFactory factory, OpFieldsFn fields) {
  if (!Registry().emplace(std::string(type_name), Registered{factory, fields}).second) {
    std::fprintf(stderr, "kiln: op '%.*s' registered twice\n", static_cast<int>(type_name.size()),
                 type_name.data());
    std::abort();
  }
  return true;
}

absl::StatusOr<OpPtr> MakeOp(absl::string_view type_name, const OpAttrs& attrs) {
  auto it = Registry().find(type_name);
  if (it == Registry().end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown op '", type_name, "'"));
  }
  absl::StatusOr<OpPtr> op = it->second.factory(attrs);
  if (!op.ok() && !absl::StartsWith(op.status().message(), type_name)) {
    return absl::InvalidArgumentError(absl::StrCat(type_name, ": ", op.status().message()));
  }
  return op;
}

std::vector<std::string> RegisteredOps() {
  std::vector<std::string> names;
  for (const auto& [name, registered] : Registry()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<std::vector<OpField>> FieldsOfOp(absl::string_view type_name) {
  auto it = Registry().find(type_name);
  if (it == Registry().end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown op '", type_name, "'"));
  }
  return it->second.fields();
}

}  // namespace kiln
