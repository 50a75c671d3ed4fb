#include "server/memory_trim.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include "core/tensor/allocator.h"
#include "server/request_budget.h"

namespace kiln::server {
namespace {

// True when less than an eighth of the machine's memory is available (/proc/meminfo).
bool MemoryIsShort() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t value = 0, total = 0, available = -1;
  std::string unit;
  while (meminfo >> key >> value >> unit) {
    if (key == "MemTotal:") total = value;
    if (key == "MemAvailable:") available = value;
  }
  return total > 0 && available >= 0 && available < total / 8;
}

}  // namespace

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
}

MemoryTrimmer::MemoryTrimmer(absl::Duration idle)
    : sweeper_(idle, [seconds = absl::ToDoubleSeconds(idle)] {
        const double wait = MemoryIsShort() ? 0 : seconds;
        if (TrimBufferCacheIfIdle(wait) > 0) ReleaseFreeMemory();
      }) {}

}  // namespace kiln::server
