#include "core/graph/op.h"

#include "absl/hash/hash.h"

namespace kiln {

std::string OpKindName(OpKind kind) {
  switch (kind) {
#define KILN_OP_KIND_NAME(e, name) \
  case OpKind::e:                  \
    return name;
    KILN_OP_KINDS(KILN_OP_KIND_NAME)
#undef KILN_OP_KIND_NAME
  }
  return "?";
}

size_t Op::Hash() const { return absl::HashOf(static_cast<int>(kind()), Props()); }

}  // namespace kiln
