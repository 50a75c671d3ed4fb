// Sessions: the values of shared variables, by name, that executions read and update. Bounded:
// ids are 128 bits from the operating system's generator, idle sessions expire, and limits cap
// the number of sessions and the bytes they hold.
#ifndef KILN_SERVER_SESSIONS_H_
#define KILN_SERVER_SESSIONS_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/runtime/tensor.h"

namespace kiln::server {

// The store's limits (flags of kiln-server); 0 means unlimited.
struct SessionLimits {
  absl::Duration ttl = absl::Hours(1);  // idle time after which a session is dropped
  int64_t max_sessions = 10000;
  int64_t max_session_bytes = int64_t{1} << 30;
  int64_t max_total_bytes = int64_t{4} << 30;  // of every session together
};

class SessionStore;

class Session {
 public:
  // The values of `names` read together; FAILED_PRECONDITION naming the first one missing.
  absl::StatusOr<std::vector<Tensor>> Read(const std::vector<std::string>& names) const;
  // Replaces several values at once: a reader sees all of them or none. RESOURCE_EXHAUSTED,
  // writing none, when the session or the store would hold more bytes than its limit.
  absl::Status Write(std::vector<std::pair<std::string, Tensor>> values);
  // One value; NOT_FOUND when the session has no variable of that name.
  absl::StatusOr<Tensor> Get(const std::string& name) const;
  absl::Status Delete(const std::string& name);
  // Every variable, by name.
  std::map<std::string, Tensor> List() const;
  // Held by a call with updates from before it reads until after it writes, so that concurrent
  // updating calls on one session run one after another and never lose an update.
  std::mutex& update_mutex() { return update_mutex_; }

  explicit Session(SessionStore* store) : store_(store) {}
  ~Session();

 private:
  friend class SessionStore;
  SessionStore* store_;
  mutable std::mutex mutex_;
  std::map<std::string, Tensor> values_;
  int64_t bytes_ = 0;
  std::mutex update_mutex_;
  std::atomic<int64_t> last_used_ns_{0};  // steady clock, refreshed by every Get of the session
};

// Every session of the server, by id. A thread drops sessions idle for longer than the TTL.
class SessionStore {
 public:
  explicit SessionStore(SessionLimits limits = {});
  ~SessionStore();
  SessionStore(const SessionStore&) = delete;
  SessionStore& operator=(const SessionStore&) = delete;

  // A new session with a random 128-bit id; RESOURCE_EXHAUSTED at max_sessions.
  absl::StatusOr<std::string> Create();
  // The session, now used; NOT_FOUND when the id is unknown or expired (saying which).
  absl::StatusOr<std::shared_ptr<Session>> Get(const std::string& id);
  absl::Status Delete(const std::string& id);
  // Drops the sessions idle for longer than the TTL; returns how many.
  int Expire();

  size_t size() const;
  int64_t bytes() const { return total_bytes_.load(); }
  uint64_t expired() const { return expired_count_.load(); }
  const SessionLimits& limits() const { return limits_; }

 private:
  friend class Session;
  // Reserves `delta` bytes (may be negative) of the store's total; false past the limit.
  bool Reserve(int64_t delta);

  const SessionLimits limits_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  // Ids dropped by expiry, the newest few thousand, so that NOT_FOUND can say why.
  std::set<std::string> expired_ids_;
  std::deque<std::string> expired_order_;
  std::atomic<int64_t> total_bytes_{0};
  std::atomic<uint64_t> expired_count_{0};
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread sweeper_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_SESSIONS_H_
