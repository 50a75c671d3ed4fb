// Expiry of idle things (sessions, shared-memory regions): the steady clock, the TTL test, and
// a thread that sweeps a few times per TTL.
#ifndef KILN_SERVER_SWEEPER_H_
#define KILN_SERVER_SWEEPER_H_

#include <cstdint>
#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kiln::server {

// The steady clock in nanoseconds, for idle times.
int64_t SteadyNowNs();

// True for a TTL after which things expire: positive and finite.
bool Expires(absl::Duration ttl);

// Calls `sweep` a few times per `ttl`, at least once a second, on a thread of its own, until
// destroyed; does nothing for a TTL that never expires.
class Sweeper {
 public:
  Sweeper(absl::Duration ttl, std::function<void()> sweep);
  ~Sweeper();  // stops the thread and waits for it
  Sweeper(const Sweeper&) = delete;
  Sweeper& operator=(const Sweeper&) = delete;

 private:
  absl::Mutex mutex_;
  absl::CondVar stop_cv_;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_SWEEPER_H_
