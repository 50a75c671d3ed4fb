#include "server/sweeper.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace kiln::server {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool Expires(absl::Duration ttl) {
  return ttl > absl::ZeroDuration() && ttl != absl::InfiniteDuration();
}

Sweeper::Sweeper(absl::Duration ttl, std::function<void()> sweep) {
  if (!Expires(ttl)) return;
  const absl::Duration period = absl::Nanoseconds(
      std::clamp<int64_t>(absl::ToInt64Nanoseconds(ttl / 4), 1'000'000, 1'000'000'000));
  thread_ = std::thread([this, period, sweep = std::move(sweep)] {
    absl::MutexLock lock(&mutex_);
    for (;;) {
      const absl::Time wake = absl::Now() + period;
      while (!stopping_ && !stop_cv_.WaitWithDeadline(&mutex_, wake)) {
      }
      if (stopping_) return;
      mutex_.Unlock();
      sweep();
      mutex_.Lock();
    }
  });
}

Sweeper::~Sweeper() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  stop_cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

}  // namespace kiln::server
