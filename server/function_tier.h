// One level of the function cache: memory (memory_tier.h), the tier every replica shares and the
// disk (stored_tiers.h). The cache walks its tiers in order: the first holding an id answers,
// and the tiers above it are filled; a compile is stored in every tier.
#ifndef KILN_SERVER_FUNCTION_TIER_H_
#define KILN_SERVER_FUNCTION_TIER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"

namespace kiln::server {

struct CompiledFunction;
class SharedTier;

// Where the cache found a function: compiled here, or the tier that held it.
enum class CacheSource { kCompiled, kMemory, kDisk, kShared };
// The Compile response's `source` and the metrics' label: compiled, memory, disk or redis.
const char* CacheSourceName(CacheSource source);

class FunctionTier {
 public:
  virtual ~FunctionTier() = default;
  // What a hit in this tier reports as its source.
  virtual CacheSource source() const = 0;
  // The function stored under `id`; null when the tier has none, or none it can read.
  virtual std::shared_ptr<const CompiledFunction> Find(const std::string& id) = 0;
  // Keeps `f` under its id; an error says why it could not (the tiers above still hold it).
  virtual absl::Status Store(const std::shared_ptr<const CompiledFunction>& f) = 0;
  // The tier that hands out compile leases to the replicas sharing this one (shared_tier.h);
  // null for a tier of this replica alone.
  virtual SharedTier* lease() { return nullptr; }
};

}  // namespace kiln::server

#endif  // KILN_SERVER_FUNCTION_TIER_H_
