#include "server/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace kiln::server {

void Histogram::Observe(double seconds) {
  size_t b = 0;
  while (b < kBounds.size() && seconds > kBounds[b]) ++b;
  ++counts_[b];
  sum_ += seconds;
  ++count_;
}

std::string Histogram::Render(const std::string& name, const std::string& labels) const {
  std::string out;
  const std::string sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (size_t b = 0; b <= kBounds.size(); ++b) {
    cumulative += counts_[b];
    const std::string le = b < kBounds.size() ? absl::StrFormat("%g", kBounds[b]) : "+Inf";
    absl::StrAppend(&out, name, "_bucket{", labels, sep, "le=\"", le, "\"} ", cumulative, "\n");
  }
  const std::string braces = labels.empty() ? "" : absl::StrCat("{", labels, "}");
  absl::StrAppend(&out, name, "_sum", braces, " ", absl::StrFormat("%.9g", sum_), "\n");
  absl::StrAppend(&out, name, "_count", braces, " ", count_, "\n");
  return out;
}

void Metrics::CountRequest(const std::string& method, absl::StatusCode code,
                           const std::string& tenant) {
  absl::MutexLock lock(&mutex_);
  ++requests_[method];
  if (code != absl::StatusCode::kOk) ++errors_[{method, static_cast<int>(code)}];
  if (!tenant.empty()) ++tenant_requests_[{tenant, static_cast<int>(code)}];
}

MetricsSnapshot Metrics::Snapshot() const {
  absl::MutexLock lock(&mutex_);
  MetricsSnapshot snap;
  for (const auto& [method, count] : requests_) {
    uint64_t failed = 0;
    for (auto it = errors_.lower_bound({method, 0}); it != errors_.end() && it->first.first == method;
         ++it) {
      snap.requests[{method, static_cast<absl::StatusCode>(it->first.second)}] = it->second;
      failed += it->second;
    }
    if (count > failed) snap.requests[{method, absl::StatusCode::kOk}] = count - failed;
  }
  for (const auto& [source, histogram] : compile_) {
    snap.compiles[CacheSourceName(source)] = histogram.count();
  }
  snap.execute_buckets = execute_.buckets();
  snap.executions = execute_.count();
  return snap;
}

void Metrics::ObserveCompile(double seconds, CacheSource source) {
  absl::MutexLock lock(&mutex_);
  compile_[source].Observe(seconds);
}

void Metrics::ObserveExecute(double seconds) {
  absl::MutexLock lock(&mutex_);
  execute_.Observe(seconds);
}

uint64_t Metrics::bytes_received() const {
  absl::MutexLock lock(&mutex_);
  return bytes_in_;
}

void Metrics::AddBytes(int64_t in, int64_t out) {
  absl::MutexLock lock(&mutex_);
  bytes_in_ += in;
  bytes_out_ += out;
}

uint64_t Metrics::requests() const {
  absl::MutexLock lock(&mutex_);
  uint64_t n = 0;
  for (const auto& [method, count] : requests_) n += count;
  return n;
}

uint64_t Metrics::errors() const {
  absl::MutexLock lock(&mutex_);
  uint64_t n = 0;
  for (const auto& [key, count] : errors_) n += count;
  return n;
}

uint64_t Metrics::executions() const {
  absl::MutexLock lock(&mutex_);
  return execute_.count();
}

std::string Metrics::Render(const CacheStats& cache, const SessionStore& sessions) const {
  absl::MutexLock lock(&mutex_);
  std::string out;
  auto header = [&](const char* name, const char* type, const char* help) {
    absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
  };
  header("kiln_requests_total", "counter", "RPCs finished, by method.");
  for (const auto& [method, n] : requests_) {
    absl::StrAppend(&out, "kiln_requests_total{method=\"", method, "\"} ", n, "\n");
  }
  header("kiln_errors_total", "counter", "RPCs finished with an error, by method and code.");
  for (const auto& [key, n] : errors_) {
    absl::StrAppend(&out, "kiln_errors_total{method=\"", key.first, "\",code=\"",
                    absl::StatusCodeToString(static_cast<absl::StatusCode>(key.second)), "\"} ", n,
                    "\n");
  }
  header("kiln_tenant_requests_total", "counter", "RPCs finished, by tenant and code.");
  for (const auto& [key, n] : tenant_requests_) {
    absl::StrAppend(&out, "kiln_tenant_requests_total{tenant=\"", key.first, "\",code=\"",
                    absl::StatusCodeToString(static_cast<absl::StatusCode>(key.second)), "\"} ", n,
                    "\n");
  }
  header("kiln_compile_seconds", "histogram", "Compile time, by where the function came from.");
  for (const auto& [source, h] : compile_) {
    out +=
        h.Render("kiln_compile_seconds", absl::StrCat("source=\"", CacheSourceName(source), "\""));
  }
  header("kiln_execute_seconds", "histogram", "Execution time of compiled functions.");
  out += execute_.Render("kiln_execute_seconds", "");
  header("kiln_inline_executions_total", "counter",
         "Executions run on the receiving gRPC thread, without a hop to the pool.");
  absl::StrAppend(&out, "kiln_inline_executions_total ", inline_executions_.load(), "\n");
  header("kiln_cache_lookups_total", "counter", "Function cache lookups, by tier and result.");
  absl::StrAppend(&out, "kiln_cache_lookups_total{tier=\"memory\",result=\"hit\"} ",
                  cache.memory_hits, "\n");
  absl::StrAppend(&out, "kiln_cache_lookups_total{tier=\"disk\",result=\"hit\"} ", cache.disk_hits,
                  "\n");
  absl::StrAppend(&out, "kiln_cache_lookups_total{tier=\"redis\",result=\"hit\"} ",
                  cache.shared_hits, "\n");
  absl::StrAppend(&out, "kiln_cache_lookups_total{tier=\"all\",result=\"miss\"} ", cache.misses,
                  "\n");
  header("kiln_compiles_total", "counter", "Graphs this replica compiled (every tier missed).");
  absl::StrAppend(&out, "kiln_compiles_total ", cache.compiles, "\n");
  header("kiln_compile_lease_waits_total", "counter",
         "Compiles that waited for another replica holding the compile lease.");
  absl::StrAppend(&out, "kiln_compile_lease_waits_total ", cache.lease_waits, "\n");
  header("kiln_cache_evictions_total", "counter", "Functions evicted from memory.");
  absl::StrAppend(&out, "kiln_cache_evictions_total ", cache.evictions, "\n");
  header("kiln_disk_write_errors_total", "counter",
         "Functions the disk tier could not store (they stay in memory).");
  absl::StrAppend(&out, "kiln_disk_write_errors_total ", cache.disk_write_errors, "\n");
  header("kiln_cache_functions", "gauge", "Functions held in memory.");
  absl::StrAppend(&out, "kiln_cache_functions ", cache.entries, "\n");
  header("kiln_cache_bytes", "gauge", "Bytes of the functions held in memory.");
  absl::StrAppend(&out, "kiln_cache_bytes ", cache.bytes, "\n");
  header("kiln_compile_waiters", "gauge", "Compile calls waiting for the same compile in flight.");
  absl::StrAppend(&out, "kiln_compile_waiters ", cache.waiting, "\n");
  header("kiln_sessions", "gauge", "Open sessions.");
  absl::StrAppend(&out, "kiln_sessions ", sessions.size(), "\n");
  header("kiln_session_bytes", "gauge", "Bytes of shared variables held by every session.");
  absl::StrAppend(&out, "kiln_session_bytes ", sessions.bytes(), "\n");
  header("kiln_sessions_expired_total", "counter", "Sessions dropped after --session_ttl idle.");
  absl::StrAppend(&out, "kiln_sessions_expired_total ", sessions.expired(), "\n");
  header("kiln_bytes_received_total", "counter", "Tensor bytes received.");
  absl::StrAppend(&out, "kiln_bytes_received_total ", bytes_in_, "\n");
  header("kiln_bytes_sent_total", "counter", "Tensor bytes sent.");
  absl::StrAppend(&out, "kiln_bytes_sent_total ", bytes_out_, "\n");
  return out;
}

}  // namespace kiln::server
