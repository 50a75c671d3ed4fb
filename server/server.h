// A running Kiln server: the gRPC service (with grpc.health.v1 and reflection), its cache,
// sessions, thread pool, and the Prometheus endpoint. kiln-server's main and the integration
// tests both start it through here.
#ifndef KILN_SERVER_SERVER_H_
#define KILN_SERVER_SERVER_H_

#include <grpcpp/security/server_credentials.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/auth.h"
#include "server/local_lane.h"
#include "server/memory_trim.h"
#include "server/redis.h"
#include "server/service.h"
#include "server/tls.h"

namespace kiln::server {

class Console;
struct ConsoleOptions;
struct ConsoleSources;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 50051;     // 0: any free port (see Server::port)
  int threads = 0;      // the pool's workers; 0: one per core
  int max_threads = 0;  // the most the pool grows to when all are busy; 0: 4 * threads
  int64_t cache_bytes = int64_t{1} << 30;
  std::string cache_dir;                        // empty: no disk tier
  int64_t cache_dir_bytes = int64_t{10} << 30;  // the disk tier's bound; 0: none
  int max_message_bytes = 64 << 20;
  // Freed large buffers kept for reuse, as a fraction of the call budget (limits.budget).
  double buffer_cache_fraction = 0.25;
  // The buffer cache is emptied and free memory given back after this long without a call.
  absl::Duration trim_after_idle = absl::Seconds(2);
  ServiceLimits limits;  // max_server_bytes < 0: half of the machine's memory
  SessionLimits sessions;
  RegionLimits regions;  // same-host shared memory
  // The same-host lane's socket (see local_lane.h); "auto": /tmp/kiln-<port>.sock unless the
  // server is a replica (with `redis` or `redis_sessions`), and then none; empty: none.
  std::string local_socket = "auto";
  int local_max_connections = 64;
  absl::Duration local_timeout = absl::Minutes(5);
  absl::Duration local_spin = absl::Microseconds(50);
  int64_t local_ring_bytes = 256 << 10;  // each slot of a lane connection's ring; 0: none
  int metrics_port = -1;  // -1: no HTTP endpoint; 0: any free port
  std::string metrics_host = "127.0.0.1";
  std::string metrics_token;  // when set, GET /metrics needs `Authorization: Bearer <it>`
  // The console on the metrics port (/console/ and /api/, server/console/API.md): on or off,
  // the directory of its built page, and the interval between its history's samples.
  bool console = true;
  std::string console_dir;
  absl::Duration console_interval = absl::Seconds(5);
  TlsFiles tls;               // no certificate: plaintext
  std::string auth_tokens;    // the tokens file; empty: every call is the anonymous tenant
  TenantQuota quota;          // every tenant's quotas unless its line in the tokens file says
  // The shared tier every replica uses: host:port of Redis; empty: none.
  std::string redis;
  // Where sessions live: host:port of Redis (a store with the noeviction policy); empty: in
  // this process's memory.
  std::string redis_sessions;
  absl::Duration redis_ttl = absl::Hours(24 * 7);  // expiry of a function in Redis
  absl::Duration compile_lease = absl::Seconds(10);
  // Ready when warm: health says NOT_SERVING until these functions, and the `warm_hottest` ids
  // loaded most often across the cluster, are in memory (or `warm_timeout` has passed).
  std::vector<std::string> warm_functions;
  int warm_hottest = 100;
  absl::Duration warm_timeout = absl::Seconds(60);
};

class Server {
 public:
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options);
  ~Server();

  int port() const { return port_; }
  // The lane's socket path; empty without one.
  std::string local_socket() const;
  int metrics_port() const { return metrics_port_; }
  // Says NOT_SERVING on health, waits `delay` for the front to stop sending calls, stops taking
  // calls, lets in-flight ones finish (cancelling those still running after `grace`), drains
  // the pool and stops the HTTP endpoint. Safe to call twice.
  void Shutdown(std::chrono::milliseconds grace = std::chrono::seconds(10),
                std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  // True once warm (see ServerOptions::warm_functions) and until Shutdown.
  bool serving() const { return serving_.load(); }
  // Reads the certificates and the tokens file again (SIGHUP); on an error the old ones stay,
  // and the error is returned.
  absl::Status Reload();

  const FunctionCache& cache() const { return *cache_; }
  // Calls started and not yet finished.
  int in_flight() const { return service_->in_flight(); }
  // The Prometheus text of /metrics.
  std::string MetricsText() const;

 private:
  struct Http;
  Server() = default;
  // Start's phases, in order.
  // The function cache's tiers (memory, disk, Redis) and the session store.
  absl::Status OpenStores(const ServerOptions& options);
  // The tenants of the tokens file, and the credentials gRPC listens with: TLS when given a
  // certificate, else plaintext.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> OpenCredentials(
      const ServerOptions& options);
  // The memory limits, the thread pool, the shared-memory regions and the service; returns the
  // pool's workers.
  int StartService(const ServerOptions& options);
  // Starts the same-host lane of options.local_socket, if any.
  absl::Status StartLane(const ServerOptions& options);
  // The gRPC listener, with health (NOT_SERVING until warm) and reflection.
  absl::Status StartGrpc(const ServerOptions& options,
                         std::shared_ptr<grpc::ServerCredentials> credentials);
  // GET /metrics and /healthz on options.metrics_port, unless it is negative.
  absl::Status StartHttp(const ServerOptions& options);
  // What the console is given of the options and of this server.
  ConsoleOptions ConsoleOptionsOf(const ServerOptions& options) const;
  ConsoleSources ConsoleSourcesOf(const ServerOptions& options) const;
  // Loads the functions a warm replica holds, then says SERVING.
  void WarmUp(const ServerOptions& options);
  // The Redis servers in use, by role ("cache", "sessions").
  std::vector<std::pair<const char*, const Redis*>> RedisRoles() const;
  // The health detail of /healthz: serving or not, and the shared tier's state.
  std::string HealthText() const;

  Metrics metrics_;
  std::shared_ptr<Redis> redis_, session_redis_;  // null without --redis / --redis_sessions
  std::shared_ptr<SharedTier> shared_;
  std::unique_ptr<SessionStore> sessions_;
  std::unique_ptr<RegionRegistry> regions_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<TlsCredentials> tls_;
  std::unique_ptr<FunctionCache> cache_;
  std::unique_ptr<KilnService> service_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<grpc::Server> grpc_;
  std::unique_ptr<LocalLane> lane_;
  std::unique_ptr<Console> console_;  // read by http_'s handlers: declared before it
  std::unique_ptr<Http> http_;
  int port_ = 0, metrics_port_ = -1;
  bool stopped_ = false;
  std::atomic<bool> serving_{false};
  std::atomic<bool> stopping_{false};
  std::thread warmer_;
  std::unique_ptr<MemoryTrimmer> trimmer_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_SERVER_H_
