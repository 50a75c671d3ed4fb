// Sessions: the values of shared variables, by name, that executions read and update; in this
// process's memory here, or in Redis (redis_sessions.h). Bounded: ids are 128 bits from the
// operating system's generator, idle sessions expire, and limits cap the number of sessions and
// the bytes they hold.
#ifndef KILN_SERVER_SESSIONS_H_
#define KILN_SERVER_SESSIONS_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/tensor/tensor.h"
#include "server/sweeper.h"

namespace kiln::server {

// The store's limits (flags of kiln-server); 0 means unlimited.
struct SessionLimits {
  absl::Duration ttl = absl::Hours(1);  // idle time after which a session is dropped
  int64_t max_sessions = 10000;
  int64_t max_session_bytes = int64_t{1} << 30;
  int64_t max_total_bytes = int64_t{4} << 30;  // of every session together
};

// Shared variables read together, and the session's version when they were read.
struct SessionSnapshot {
  std::vector<Tensor> values;
  int64_t version = 0;
};

// Outputs of an updating call, kept with its writes so that a retried call (same call id) gets
// them again instead of applying its updates twice.
struct CallRecord {
  std::string call_id;
  std::string outputs;  // serialized
};

// One session's shared variables, wherever they live.
class Session {
 public:
  // Writes apply only to the version they were computed from; this one applies to any.
  static constexpr int64_t kAnyVersion = -1;
  virtual ~Session() = default;
  // The values of `names` read together; FAILED_PRECONDITION naming the first one missing.
  virtual absl::StatusOr<SessionSnapshot> Read(const std::vector<std::string>& names) const = 0;
  // Replaces several values at once: a reader sees all of them or none. ABORTED, writing none,
  // when the session changed since `if_version`; RESOURCE_EXHAUSTED when it would hold more
  // bytes than its limit. `record`, if any, is kept with the writes, atomically.
  virtual absl::Status Write(std::vector<std::pair<std::string, Tensor>> values,
                             int64_t if_version = kAnyVersion,
                             const CallRecord* record = nullptr) = 0;
  // The outputs a Write recorded for `call_id`; NOT_FOUND when none did.
  virtual absl::StatusOr<std::string> Recorded(const std::string& call_id) const = 0;
  // One value; NOT_FOUND when the session has no variable of that name.
  virtual absl::StatusOr<Tensor> Get(const std::string& name) const = 0;
  virtual absl::Status Delete(const std::string& name) = 0;
  // Every variable, by name.
  virtual absl::StatusOr<std::map<std::string, Tensor>> List() const = 0;
  // Held by this replica's calls with updates from before they read until after they write, so
  // that they take turns rather than retry each other's conflicts.
  absl::Mutex& update_mutex() { return update_mutex_; }

 private:
  absl::Mutex update_mutex_;
};

// Who creates a session, and the limits of that tenant (0: none).
struct SessionOwner {
  std::string tenant;  // "" without tokens
  int64_t max_sessions = 0;
  int64_t max_bytes = 0;  // of all its sessions together
};

// The key a tenant's session `id` is kept under: another tenant's key for the same id differs,
// so it finds nothing (NOT_FOUND, never a hint that the session exists). "" (found nowhere) for
// an id that is not 32 lowercase hex digits, as every id this server makes is.
std::string SessionKey(const std::string& tenant, const std::string& id);

// The id of a session key, as its tenant knows it (for messages).
std::string IdOf(const std::string& key);

// Every session, by key (SessionKey).
class SessionStore {
 public:
  virtual ~SessionStore() = default;
  // A new session of `owner` with a random 128-bit id (returned; kept under SessionKey);
  // RESOURCE_EXHAUSTED at max_sessions or at the owner's quota.
  virtual absl::StatusOr<std::string> Create(const SessionOwner& owner = {}) = 0;
  // The session, now used; NOT_FOUND when the key is unknown or expired.
  virtual absl::StatusOr<std::shared_ptr<Session>> Get(const std::string& key) = 0;
  virtual absl::Status Delete(const std::string& key) = 0;
  // Sessions, their bytes, and those expired, as this replica knows them (for metrics).
  virtual size_t size() const = 0;
  virtual int64_t bytes() const = 0;
  virtual uint64_t expired() const = 0;
  // True when sessions live in this process's memory (a read or write is a lock away).
  virtual bool in_memory() const = 0;
  // Every session this process holds, by key, with its variables, their last use untouched;
  // empty for a store that keeps them elsewhere (Redis).
  virtual std::vector<std::pair<std::string, std::map<std::string, Tensor>>> Contents() const {
    return {};
  }
};

// 128 bits from the kernel's cryptographic generator, as 32 hex digits.
std::string RandomId();

class MemorySessionStore;

// A session held in this process's memory.
class MemorySession final : public Session {
 public:
  MemorySession(MemorySessionStore* store, SessionOwner owner)
      : store_(store), owner_(std::move(owner)) {}
  ~MemorySession() override;
  absl::StatusOr<SessionSnapshot> Read(const std::vector<std::string>& names) const override;
  absl::Status Write(std::vector<std::pair<std::string, Tensor>> values, int64_t if_version,
                     const CallRecord* record) override;
  absl::StatusOr<std::string> Recorded(const std::string& call_id) const override;
  absl::StatusOr<Tensor> Get(const std::string& name) const override;
  absl::Status Delete(const std::string& name) override;
  absl::StatusOr<std::map<std::string, Tensor>> List() const override;

 private:
  friend class MemorySessionStore;
  MemorySessionStore* store_;
  const SessionOwner owner_;
  mutable absl::Mutex mutex_;
  std::map<std::string, Tensor> values_ ABSL_GUARDED_BY(mutex_);
  int64_t bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  int64_t version_ ABSL_GUARDED_BY(mutex_) = 0;
  std::atomic<int64_t> last_used_ns_{0};  // steady clock, refreshed by every Get of the session
};

// The sessions of this server, in its memory. A thread drops sessions idle for longer than the
// TTL.
class MemorySessionStore final : public SessionStore {
 public:
  explicit MemorySessionStore(SessionLimits limits = {});
  ~MemorySessionStore() override;
  MemorySessionStore(const MemorySessionStore&) = delete;
  MemorySessionStore& operator=(const MemorySessionStore&) = delete;

  absl::StatusOr<std::string> Create(const SessionOwner& owner = {}) override;
  absl::StatusOr<std::shared_ptr<Session>> Get(const std::string& key) override;
  absl::Status Delete(const std::string& key) override;
  // Drops the sessions idle for longer than the TTL; returns how many.
  int Expire();

  size_t size() const override;
  int64_t bytes() const override { return total_bytes_.load(); }
  uint64_t expired() const override { return expired_count_.load(); }
  bool in_memory() const override { return true; }
  std::vector<std::pair<std::string, std::map<std::string, Tensor>>> Contents() const override;
  const SessionLimits& limits() const { return limits_; }

 private:
  friend class MemorySession;
  // Reserves `delta` bytes (may be negative) of the store's total and of the owner's;
  // RESOURCE_EXHAUSTED naming the limit passed.
  absl::Status Reserve(const SessionOwner& owner, int64_t delta);
  // Counts a session of `tenant` out, with its bytes.
  void Release(const SessionOwner& owner, int64_t bytes);

  struct TenantUse {
    int64_t sessions = 0, bytes = 0;
  };

  const SessionLimits limits_;
  mutable absl::Mutex mutex_;
  std::map<std::string, std::shared_ptr<MemorySession>> sessions_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, TenantUse> tenants_ ABSL_GUARDED_BY(mutex_);  // by tenant
  // Ids dropped by expiry, the newest few thousand, so that NOT_FOUND can say why.
  std::set<std::string> expired_ids_ ABSL_GUARDED_BY(mutex_);
  std::deque<std::string> expired_order_ ABSL_GUARDED_BY(mutex_);
  std::atomic<int64_t> total_bytes_{0};
  std::atomic<uint64_t> expired_count_{0};
  std::unique_ptr<Sweeper> sweeper_;  // drops idle sessions
};

}  // namespace kiln::server

#endif  // KILN_SERVER_SESSIONS_H_
