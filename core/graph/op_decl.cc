#include "core/graph/op_decl.h"

namespace kiln {

absl::Status CheckDimIndex(absl::string_view name, int64_t value) {
  if (value >= 0 && value <= 64) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("attribute '", name, "' must be a dimension in [0, 64], not ", value));
}

}  // namespace kiln
