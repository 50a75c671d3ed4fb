// The cache tier every replica shares, and the compile lease that lets one replica compile a
// graph while the others wait for its result. Redis implements it (redis_cache.h); the function
// cache sees only this interface.
#ifndef KILN_SERVER_SHARED_TIER_H_
#define KILN_SERVER_SHARED_TIER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln::server {

class SharedTier {
 public:
  virtual ~SharedTier() = default;
  // The entry's bytes: NOT_FOUND when absent, DATA_LOSS when corrupt (then removed),
  // UNAVAILABLE when the tier cannot be reached.
  virtual absl::StatusOr<std::string> Load(const std::string& id) = 0;
  virtual absl::Status Store(const std::string& id, std::string_view bytes) = 0;
  // True when this replica now holds the compile lease of `id` (kept alive until Release);
  // false when another replica holds it.
  virtual absl::StatusOr<bool> TryLease(const std::string& id) = 0;
  virtual void Release(const std::string& id) = 0;
  // Counts a load of `id` into some replica's memory: the hottest ids warm new replicas.
  virtual void Touch(const std::string& id) = 0;
  // The `n` ids loaded most often.
  virtual absl::StatusOr<std::vector<std::string>> Hottest(int n) = 0;
  // False while the tier cannot be reached.
  virtual bool up() const = 0;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_SHARED_TIER_H_
