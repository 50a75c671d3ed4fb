// Giving memory back: the freed-buffer cache is emptied once the server has been idle for a
// while, or at once when the machine runs short, and the allocator's free pages are returned to
// the system, so that the resident size falls back to idle a few seconds after any call.
#ifndef KILN_SERVER_MEMORY_TRIM_H_
#define KILN_SERVER_MEMORY_TRIM_H_

#include <cstdint>
#include <memory>

#include "absl/time/time.h"
#include "server/sweeper.h"

namespace kiln::server {

// The machine's physical memory in bytes (0 when unknown).
int64_t PhysicalMemoryBytes();

// Trims every `idle` / 4 (at least once a second) while it lives.
class MemoryTrimmer {
 public:
  explicit MemoryTrimmer(absl::Duration idle);

 private:
  Sweeper sweeper_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_MEMORY_TRIM_H_
