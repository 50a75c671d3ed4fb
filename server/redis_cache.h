// The shared cache tier in Redis: `kiln:fn:<id>` holds a function's checksummed bytes with an
// expiry (Redis's maxmemory policy evicts the least recently used), `kiln:lease:<id>` the compile
// lease (set if absent, with an expiry that its holder renews while it compiles, so a lease whose
// holder died lapses), and the sorted set `kiln:hot` how often each id was loaded.
#ifndef KILN_SERVER_REDIS_CACHE_H_
#define KILN_SERVER_REDIS_CACHE_H_

#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/redis.h"
#include "server/shared_tier.h"

namespace kiln::server {

class RedisCache final : public SharedTier {
 public:
  // `ttl`: the expiry of an entry, refreshed by every load; `lease`: the lease's expiry.
  RedisCache(std::shared_ptr<Redis> redis, absl::Duration ttl, absl::Duration lease);
  ~RedisCache() override;

  absl::StatusOr<std::string> Load(const std::string& id) override;
  absl::Status Store(const std::string& id, std::string_view bytes) override;
  absl::StatusOr<bool> TryLease(const std::string& id) override;
  void Release(const std::string& id) override;
  void Touch(const std::string& id) override;
  absl::StatusOr<std::vector<std::string>> Hottest(int n) override;
  bool up() const override { return redis_->up(); }

 private:
  // Renews the held leases every third of their expiry.
  void RenewLoop();

  const std::shared_ptr<Redis> redis_;
  const std::string ttl_ms_, lease_ms_;
  const absl::Duration lease_;
  const std::string owner_;  // this process's lease token: host, pid and 64 random bits
  absl::Mutex mutex_;
  absl::CondVar cv_;
  std::set<std::string> held_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread renewer_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_REDIS_CACHE_H_
