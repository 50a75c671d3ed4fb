// The server's counters and histograms, rendered in Prometheus's text format for /metrics.
#ifndef KILN_SERVER_METRICS_H_
#define KILN_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/function_cache.h"
#include "server/sessions.h"

namespace kiln::server {

// A histogram of durations in seconds over fixed buckets.
class Histogram {
 public:
  static constexpr std::array<double, 12> kBounds = {1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3,
                                                     1e-2, 5e-2,   0.1,  0.5,  1,      5};
  void Observe(double seconds);
  // The histogram's lines for metric `name`, labels `labels` ("" or `tier="memory"`).
  std::string Render(const std::string& name, const std::string& labels) const;
  uint64_t count() const { return count_; }
  // Observations per bucket (not cumulative): the last counts those above every bound.
  const std::array<uint64_t, kBounds.size() + 1>& buckets() const { return counts_; }

 private:
  std::array<uint64_t, kBounds.size() + 1> counts_{};
  double sum_ = 0;
  uint64_t count_ = 0;
};

// The counters as they stand (since the start): what the console's history samples.
struct MetricsSnapshot {
  std::map<std::pair<std::string, absl::StatusCode>, uint64_t> requests;  // by method and code
  std::map<std::string, uint64_t> compiles;  // by source (compiled, memory, disk, redis)
  std::array<uint64_t, Histogram::kBounds.size() + 1> execute_buckets{};
  uint64_t executions = 0;
};

class Metrics {
 public:
  // One finished RPC: its method, status code and tenant ("" without tokens).
  void CountRequest(const std::string& method, absl::StatusCode code,
                    const std::string& tenant = "");
  // A Compile's duration, by where the function came from.
  void ObserveCompile(double seconds, CacheSource source);
  void ObserveExecute(double seconds);
  void AddBytes(int64_t in, int64_t out);
  // An execution run on the gRPC thread that received it, without a hop to the pool.
  void CountInline() { inline_executions_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t inline_executions() const { return inline_executions_.load(); }
  uint64_t requests() const;
  uint64_t errors() const;
  uint64_t executions() const;
  uint64_t bytes_received() const;
  MetricsSnapshot Snapshot() const;
  // Every metric, the cache's and the sessions' included.
  std::string Render(const CacheStats& cache, const SessionStore& sessions) const;

 private:
  mutable absl::Mutex mutex_;
  std::map<std::string, uint64_t> requests_ ABSL_GUARDED_BY(mutex_);  // by method
  std::map<std::pair<std::string, int>, uint64_t> errors_
      ABSL_GUARDED_BY(mutex_);  // by method and code
  std::map<std::pair<std::string, int>, uint64_t> tenant_requests_
      ABSL_GUARDED_BY(mutex_);  // by tenant and code
  std::map<CacheSource, Histogram> compile_ ABSL_GUARDED_BY(mutex_);
  Histogram execute_ ABSL_GUARDED_BY(mutex_);
  uint64_t bytes_in_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t bytes_out_ ABSL_GUARDED_BY(mutex_) = 0;
  std::atomic<uint64_t> inline_executions_{0};
};

}  // namespace kiln::server

#endif  // KILN_SERVER_METRICS_H_
