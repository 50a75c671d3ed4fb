// Sessions in Redis, so that any replica serves any session and a replica's death loses none.
// A session is the hash `kiln:session:<tenant>/<id>`: `v` its version, `b` its bytes, `qb` its
// tenant's byte quota, `s:<name>` each variable as a serialized kiln.v1.Tensor; it expires after
// the TTL idle. `kiln:tenant:<tenant>:sessions` (by expiry) and `:bytes` count each tenant's. A
// write is a Lua script that applies only if `v` is still the version the call read
// (compare-and-set), so two replicas updating one session at once never lose an update: the later
// one computes again.
#ifndef KILN_SERVER_REDIS_SESSIONS_H_
#define KILN_SERVER_REDIS_SESSIONS_H_

#include <memory>
#include <string>
#include <unordered_map>

#include "absl/synchronization/mutex.h"
#include "server/redis.h"
#include "server/sessions.h"

namespace kiln::server {

class RedisSessionStore final : public SessionStore {
 public:
  // The tenants' session quotas hold across replicas (each tenant's sessions and their bytes are
  // kept in Redis beside them); max_sessions and max_total_bytes are left to Redis: its
  // maxmemory, with the noeviction policy, answers a write past it with RESOURCE_EXHAUSTED.
  RedisSessionStore(std::shared_ptr<Redis> redis, SessionLimits limits);

  absl::StatusOr<std::string> Create(const SessionOwner& owner = {}) override;
  absl::StatusOr<std::shared_ptr<Session>> Get(const std::string& id) override;
  absl::Status Delete(const std::string& id) override;
  size_t size() const override { return 0; }  // Redis counts them: not this replica's
  int64_t bytes() const override { return 0; }
  uint64_t expired() const override { return 0; }
  bool in_memory() const override { return false; }

 private:
  // The idle expiry in ms, "0" for none.
  std::string TtlMs() const;

  const std::shared_ptr<Redis> redis_;
  const SessionLimits limits_;
  // The sessions some call on this replica holds, so that concurrent calls on one session share
  // its update mutex (they take turns here instead of failing each other's compare-and-set).
  absl::Mutex mutex_;
  std::unordered_map<std::string, std::weak_ptr<Session>> live_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace kiln::server

#endif  // KILN_SERVER_REDIS_SESSIONS_H_
