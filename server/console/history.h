// The console's history: the server's counters sampled every interval into a ring of the last
// hour, so that its charts need no Prometheus.
#ifndef KILN_SERVER_CONSOLE_HISTORY_H_
#define KILN_SERVER_CONSOLE_HISTORY_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/metrics.h"

namespace kiln::server {

// The counters at one instant (cumulative since the start).
struct HistorySample {
  double unix_seconds = 0;
  MetricsSnapshot counters;
  uint64_t evictions = 0;
  int64_t memory_bytes = 0;  // resident
};

class History {
 public:
  // Calls `sample` now and every `interval` on a thread of its own, keeping the newest
  // `capacity` samples, until destroyed.
  History(absl::Duration interval, size_t capacity, std::function<HistorySample()> sample);
  ~History();
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // The samples, oldest first.
  std::vector<HistorySample> Samples() const;
  absl::Duration interval() const { return interval_; }

 private:
  void Take();

  const absl::Duration interval_;
  const size_t capacity_;
  const std::function<HistorySample()> sample_;
  mutable absl::Mutex mutex_;
  std::deque<HistorySample> samples_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

// This process's resident memory in bytes (/proc/self/statm), 0 when unknown.
int64_t ResidentBytes();

}  // namespace kiln::server

#endif  // KILN_SERVER_CONSOLE_HISTORY_H_
