#include "core/ops/memory_check.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "core/tensor/call_limits.h"

namespace kiln {
namespace {

// The machine's physical memory in bytes (0 when the system does not say).
int64_t MachineBytes() {
  static const int64_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? int64_t{pages} * page : int64_t{0};
  }();
  return bytes;
}

// Sizes below this are not probed (a kernel checks each batch item's matrices): a budget is
// not that close to its limit for long, and the allocator refuses those that go past it.
constexpr int64_t kCheckedFrom = int64_t{1} << 20;

}  // namespace

absl::Status CheckBytesFit(int64_t bytes, absl::FunctionRef<std::string()> what) {
  if (bytes >= 0 && bytes < kCheckedFrom) return absl::OkStatus();
  if (bytes < 0) {
    return absl::ResourceExhaustedError(absl::StrCat(what(), " needs more than 2^63 bytes"));
  }
  if (const int64_t machine = MachineBytes(); machine > 0 && bytes > machine) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what(), " needs ", bytes, " bytes, more than the machine's memory of ", machine, " bytes"));
  }
  if (const std::shared_ptr<MemoryBudget>& budget = CurrentBudget(); budget != nullptr) {
    if (absl::Status s = budget->Charge(bytes); !s.ok()) {
      return absl::ResourceExhaustedError(absl::StrCat(what(), " needs ", bytes, " bytes, but ",
                                                       s.message()));
    }
    budget->Release(bytes);
  }
  return absl::OkStatus();
}

}  // namespace kiln
