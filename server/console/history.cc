#include "server/console/history.h"

#include <unistd.h>

#include <fstream>

#include "absl/time/clock.h"

namespace kiln::server {

History::History(absl::Duration interval, size_t capacity, std::function<HistorySample()> sample)
    : interval_(interval), capacity_(capacity), sample_(std::move(sample)) {
  Take();
  thread_ = std::thread([this] {
    absl::MutexLock lock(&mutex_);
    while (true) {
      const absl::Time next = absl::Now() + interval_;
      while (!stopping_ && absl::Now() < next) mutex_.AwaitWithDeadline(absl::Condition(&stopping_), next);
      if (stopping_) return;
      mutex_.Unlock();
      Take();
      mutex_.Lock();
    }
  });
}

History::~History() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  thread_.join();
}

void History::Take() {
  HistorySample s = sample_();
  absl::MutexLock lock(&mutex_);
  samples_.push_back(std::move(s));
  while (samples_.size() > capacity_) samples_.pop_front();
}

std::vector<HistorySample> History::Samples() const {
  absl::MutexLock lock(&mutex_);
  return {samples_.begin(), samples_.end()};
}

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace kiln::server
