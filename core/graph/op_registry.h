// Ops by Aesara class name: each op registers how to build itself from its wire attributes
// (KILN_REGISTER_OP, in the op's own source file), and deserialization (the wire format, the
// compiled-function cache) finds it here. There is no central list of ops.
#ifndef KILN_CORE_GRAPH_OP_REGISTRY_H_
#define KILN_CORE_GRAPH_OP_REGISTRY_H_

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph/basic.h"
#include "core/graph/op.h"
#include "core/graph/op_attrs.h"

namespace kiln {

// Builds an op from its attributes, or INVALID_ARGUMENT naming the bad attribute.
using OpFactory = absl::StatusOr<OpPtr> (*)(const OpAttrs& attrs);

// One attribute of a registered op (Aesara's __props__ entry): its wire name and the value an op
// built without it takes (nullopt: none, the attribute stays unset).
struct OpField {
  std::string name;
  std::optional<AttrValue> default_value;
};
// A registered op's attributes, in wire order (what Python generates its op class from).
using OpFieldsFn = std::vector<OpField> (*)();

// Adds `type_name`'s factory and field list; returns true so it can initialize a static.
// Registering one name twice aborts at start-up: it is a programming error, not an input.
bool RegisterOp(absl::string_view type_name, OpFactory factory, OpFieldsFn fields);

// The op called `type_name` with `attrs`, or INVALID_ARGUMENT naming the op and the bad attribute
// (or saying that no op has that name).
absl::StatusOr<OpPtr> MakeOp(absl::string_view type_name, const OpAttrs& attrs);

// Every registered class name, sorted.
std::vector<std::string> RegisteredOps();

// The fields of the op called `type_name`, or INVALID_ARGUMENT if no op has that name.
absl::StatusOr<std::vector<OpField>> FieldsOfOp(absl::string_view type_name);

// The fields of an op whose attrs() is a struct with a Fields() list (every DeclaredOp, Scan,
// OpFromGraph); the defaults are those of a default-built struct.
template <typename Class>
std::vector<OpField> FieldsFromAttrsStruct() {
  using A = std::remove_cvref_t<decltype(std::declval<const Class&>().attrs())>;
  const OpAttrs defaults = EncodeAttrs(A{});
  std::vector<OpField> fields;
  std::apply(
      [&](const auto&... f) {
        (fields.push_back(OpField{std::string(f.name), std::nullopt}), ...);
      },
      A::Fields());
  for (OpField& f : fields) {
    for (const auto& [key, value] : defaults.values()) {
      if (key == f.name) f.default_value = value;
    }
  }
  return fields;
}

}  // namespace kiln

// Registers `Class` (an op with a static kTypeName and FromAttrs, see core/graph/op_decl.h) under
// its Aesara class name, with the fields of its attributes struct. Written once, in the op's
// source file.
#define KILN_REGISTER_OP(Class)                                                       \
  [[maybe_unused]] static const bool kiln_registered_##Class = ::kiln::RegisterOp(    \
      Class::kTypeName, &Class::FromAttrs, &::kiln::FieldsFromAttrsStruct<Class>)

// Registers `Class`, an op that encodes its attributes by hand, with the names of its fields
// (string literals, in wire order).
#define KILN_REGISTER_OP_FIELDS(Class, ...)                                            \
  [[maybe_unused]] static const bool kiln_registered_##Class = ::kiln::RegisterOp(     \
      Class::kTypeName, &Class::FromAttrs, +[]() -> std::vector<::kiln::OpField> {     \
        std::vector<::kiln::OpField> fields;                                           \
        for (const char* name : {__VA_ARGS__}) fields.push_back({name, std::nullopt}); \
        return fields;                                                                 \
      })

#endif  // KILN_CORE_GRAPH_OP_REGISTRY_H_

