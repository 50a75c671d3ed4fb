// Ops from their kind and typed attributes: the inverse of Op::Attrs, for deserialization (the
// compiled-function cache, the wire format).
#ifndef KILN_CORE_OPS_OP_REGISTRY_H_
#define KILN_CORE_OPS_OP_REGISTRY_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/graph/op.h"
#include "core/graph/op_attrs.h"

namespace kiln {

// The op of `kind` with `attrs`, or INVALID_ARGUMENT naming the op and the bad attribute.
absl::StatusOr<OpPtr> MakeOp(OpKind kind, const OpAttrs& attrs);

// The kind of an Aesara class name ("Elemwise"), or nullopt.
std::optional<OpKind> ParseOpKind(const std::string& name);

}  // namespace kiln

#endif  // KILN_CORE_OPS_OP_REGISTRY_H_
