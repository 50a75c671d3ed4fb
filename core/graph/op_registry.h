// Ops by Aesara class name: each op registers how to build itself from its wire attributes
// (KILN_REGISTER_OP, in the op's own source file), and deserialization (the wire format, the
// compiled-function cache) finds it here. There is no central list of ops.
#ifndef KILN_CORE_GRAPH_OP_REGISTRY_H_
#define KILN_CORE_GRAPH_OP_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph/basic.h"
#include "core/graph/op.h"
#include "core/graph/op_attrs.h"

namespace kiln {

// Builds an op from its attributes, or INVALID_ARGUMENT naming the bad attribute.
using OpFactory = absl::StatusOr<OpPtr> (*)(const OpAttrs& attrs);

// Adds `type_name`'s factory; returns true so it can initialize a static. Registering one name
// twice aborts at start-up: it is a programming error, not an input.
bool RegisterOp(absl::string_view type_name, OpFactory factory);

// The op called `type_name` with `attrs`, or INVALID_ARGUMENT naming the op and the bad attribute
// (or saying that no op has that name).
absl::StatusOr<OpPtr> MakeOp(absl::string_view type_name, const OpAttrs& attrs);

// Every registered class name, sorted.
std::vector<std::string> RegisteredOps();

}  // namespace kiln

// Registers `Class` (an op with a static kTypeName and FromAttrs, see core/graph/op_decl.h) under
// its Aesara class name. Written once, in the op's source file.
#define KILN_REGISTER_OP(Class)                                \
  [[maybe_unused]] static const bool kiln_registered_##Class = \
      ::kiln::RegisterOp(Class::kTypeName, &Class::FromAttrs)

#endif  // KILN_CORE_GRAPH_OP_REGISTRY_H_
