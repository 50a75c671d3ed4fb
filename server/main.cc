// kiln-server: the Kiln gRPC service on its embedded defaults (port 50051, an in-memory cache of
// 1 GiB, one worker per core). Every flag also reads an environment variable, KILN_ and its name
// in upper case (--port: KILN_PORT; see env_flags.h).
// SIGTERM or SIGINT shut it down gracefully: in-flight calls finish, then it exits. SIGHUP
// reloads the TLS certificates and the tokens file.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "server/env_flags.h"
#include "server/log.h"
#include "server/server.h"

// jemalloc's options, read when it starts (when kiln-server is linked with it): a background
// thread returns freed pages to the system within about a second, even while the server is idle,
// so what a large request used does not stay resident after it ends. MALLOC_CONF overrides.
extern "C" const char* malloc_conf;
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";

namespace {

// Where Aesara would keep its compiledir: $XDG_CACHE_HOME/kiln, else ~/.cache/kiln; "" with
// neither variable set.
std::string DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    return std::string(xdg) + "/kiln";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    return std::string(home) + "/.cache/kiln";
  }
  return "";
}

// The console's built page beside the binary: <its directory>/../console (build/console for
// build/server/kiln-server); "" when /proc/self/exe cannot be read.
std::string DefaultConsoleDir() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? "" : (exe.parent_path().parent_path() / "console").string();
}

}  // namespace

KILN_FLAG(std::string, host, "127.0.0.1", "address to listen on; beyond loopback, give TLS too");
KILN_FLAG(std::string, tls_cert, "",
          "PEM certificate chain: serve TLS (with --tls_key); reloaded on SIGHUP");
KILN_FLAG(std::string, tls_key, "", "PEM private key");
KILN_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle: mutual TLS, only clients with a certificate it signed get in");
KILN_FLAG(std::string, auth_tokens, "",
          "file of `sha256:<hex of the token's SHA-256> <tenant> [quota=N...]` lines: every call "
          "but health needs `authorization: Bearer <token>`; reloaded on SIGHUP");
KILN_FLAG(std::string, cache_scope, "global",
          "global: every tenant shares compiled functions; tenant: each tenant's function ids and "
          "cache hits are its own");
KILN_FLAG(double, quota_compiles_per_second, 0.0,
          "each tenant's Compile calls per second; 0: none");
KILN_FLAG(int64_t, quota_executions, int64_t{0}, "each tenant's executions at once; 0: none");
KILN_FLAG(int64_t, quota_sessions, int64_t{0}, "each tenant's sessions at once; 0: none");
KILN_FLAG(int64_t, quota_session_bytes, int64_t{0},
          "bytes in each tenant's sessions together; 0: none");
KILN_FLAG(std::string, metrics_host, "127.0.0.1", "address of /metrics and /healthz");
KILN_FLAG(std::string, metrics_token, "", "when set, /metrics needs `Authorization: Bearer <it>`");
KILN_FLAG(bool, console, true,
          "serve the console (/console/ and its JSON under /api/) on the metrics port, behind "
          "--metrics_token and scoped to a tenant's token with --auth_tokens");
KILN_FLAG(std::string, console_dir, "",
          "the console's built page (npm's output); empty: <binary's directory>/../console");
KILN_FLAG(absl::Duration, console_interval, absl::Seconds(5),
          "between the console history's samples (an hour's worth at 5s is kept)");
KILN_FLAG(int, port, 50051, "gRPC port; 0 picks a free one");
KILN_FLAG(int, metrics_port, 9464, "Prometheus /metrics port; -1 disables it");
KILN_FLAG(int, threads, 0, "workers compiling and executing; 0: one per core");
KILN_FLAG(int, max_threads, 0,
          "workers the pool may grow to when every worker is busy, so that calls running long "
          "cannot hold back the ones behind them; 0: four times --threads");
KILN_FLAG(int64_t, cache_bytes, int64_t{1} << 30, "byte budget of the in-memory function cache");
KILN_FLAG(std::string, cache_dir, kiln::server::EmptyAllowed{DefaultCacheDir()},
          "directory of compiled functions kept across restarts, by default $XDG_CACHE_HOME/kiln "
          "(~/.cache/kiln); empty: none");
KILN_FLAG(int64_t, cache_dir_bytes, int64_t{10} << 30,
          "bound of the disk tier; least recently used entries go first; 0: none");
KILN_FLAG(absl::Duration, session_ttl, absl::Hours(1),
          "idle time after which a session and its variables are dropped, e.g. 30m; 0: never");
KILN_FLAG(int64_t, max_sessions, int64_t{10000}, "most sessions at once");
KILN_FLAG(int64_t, max_session_bytes, int64_t{1} << 30,
          "most bytes of shared variables in one session");
KILN_FLAG(int64_t, max_sessions_bytes, int64_t{4} << 30,
          "most bytes of shared variables in every session together");
KILN_FLAG(
    bool, shm, true,
    "take same-host shared-memory regions (RegisterRegion) for Execute's arguments and results");
KILN_FLAG(absl::Duration, shm_ttl, absl::Seconds(60),
          "idle time after which a shared-memory region is closed, e.g. 30s; 0: never");
KILN_FLAG(int64_t, shm_max_regions, int64_t{256},
          "most shared-memory regions at once, each a mapping");
KILN_FLAG(int64_t, shm_max_bytes, int64_t{64} << 30,
          "most bytes of shared-memory regions together");
KILN_FLAG(std::string, local_socket, kiln::server::EmptyAllowed{"auto"},
          "the same-host lane: a Unix socket carrying Execute for clients on this machine; auto: "
          "/tmp/kiln-<port>.sock unless --redis or --redis_sessions (a replica behind a front); "
          "empty: none");
KILN_FLAG(int, local_max_connections, 64, "most lane connections at once, each a thread");
KILN_FLAG(absl::Duration, local_timeout, absl::Minutes(5),
          "a lane connection idle this long is closed, and so is one whose request takes longer to "
          "arrive");
KILN_FLAG(absl::Duration, local_spin, absl::Microseconds(50),
          "after answering, a lane connection's thread waits this long awake for the next call (a "
          "client calling in a loop then pays no wake-up; after a wait that misses, skipped for "
          "the next 1 to 64 calls); 0: sleeps at once");
KILN_FLAG(int64_t, local_ring_bytes, 256 << 10,
          "each slot (request, answer) of the shared-memory ring a lane client may ask for: its "
          "calls then pass through shared memory, without system calls while both sides spin; a "
          "multiple of 4096 from 4096 to 64 MiB; 0: no rings");
KILN_FLAG(absl::Duration, inline_max_call, absl::Microseconds(100),
          "an Execute of at most 64 KiB whose function averages under this runs on the gRPC thread "
          "that received it, sparing a hand-off to the pool; 0: never");
KILN_FLAG(int64_t, max_call_bytes, int64_t{1} << 30,
          "memory one call (Compile, Execute, Grad, Optimize, Print) may hold: its tensors, "
          "scratch, constant folding and answer; 0: unlimited");
KILN_FLAG(int64_t, max_server_bytes, int64_t{-1},
          "tensor memory all calls may hold together (session values and cached constants "
          "included); -1: half of the machine's memory; 0: unlimited");
KILN_FLAG(double, buffer_cache_fraction, 0.25,
          "freed large buffers kept for reuse, as a fraction of --max_call_bytes (at most "
          "KILN_BUFFER_CACHE_BYTES); emptied after 2 s without a call");
KILN_FLAG(double, max_request_seconds, 60.0,
          "time one call (Compile, Execute, Grad, Optimize) may take; 0: unlimited");
KILN_FLAG(int, max_message_bytes, 64 << 20, "largest gRPC message");
KILN_FLAG(int64_t, max_nodes, 100000, "most nodes in one graph, and most node outputs");
KILN_FLAG(int64_t, max_tensor_bytes, int64_t{1} << 30, "largest tensor or constant");
KILN_FLAG(int64_t, max_printed_bytes, int64_t{16} << 20,
          "bytes the values Print ops show may take in one call (each twice its size plus 512 "
          "bytes of bookkeeping); more are left out");
KILN_FLAG(int, max_concurrent_executions, 64,
          "executions running at once; more are RESOURCE_EXHAUSTED");
KILN_FLAG(
    std::string, redis, "",
    "host:port of the Redis that every replica shares compiled functions through; empty: none");
KILN_FLAG(std::string, redis_sessions, "",
          "host:port of the Redis that holds sessions, so that any replica serves any session "
          "(give it the noeviction policy; it may be --redis's); empty: in memory");
KILN_FLAG(absl::Duration, redis_ttl, absl::Hours(24 * 7),
          "expiry of a function in Redis, refreshed by each load");
KILN_FLAG(absl::Duration, compile_lease, absl::Seconds(10),
          "expiry of a compile lease in Redis, renewed while its holder lives");
KILN_FLAG(std::vector<std::string>, warm_functions, {},
          "function ids to load before reporting SERVING, comma-separated");
KILN_FLAG(
    int, warm_hottest, 100,
    "with --redis, also load the ids loaded most often across replicas before reporting SERVING");
KILN_FLAG(absl::Duration, warm_timeout, absl::Seconds(60),
          "longest warm-up before reporting SERVING anyway");
KILN_FLAG(absl::Duration, drain_delay, absl::ZeroDuration(),
          "on SIGTERM, time between health saying NOT_SERVING and the listener closing, for the "
          "front to stop sending calls");
KILN_FLAG(std::string, log_level, "info", "debug, info, warning or error");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("kiln-server: the Kiln graph-compilation service over gRPC");
  absl::ParseCommandLine(argc, argv);
  using namespace kiln::server;
  LogLevel level;
  if (!ParseLogLevel(absl::GetFlag(FLAGS_log_level), &level)) {
    std::fprintf(stderr, "kiln-server: --log_level must be debug, info, warning or error\n");
    return 2;
  }
  SetLogLevel(level);

  // SIGTERM and SIGINT are taken by sigwait below, never by a handler in another thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  ServerOptions options;
  options.host = absl::GetFlag(FLAGS_host);
  options.port = absl::GetFlag(FLAGS_port);
  options.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.max_threads = absl::GetFlag(FLAGS_max_threads);
  options.cache_bytes = absl::GetFlag(FLAGS_cache_bytes);
  options.cache_dir = absl::GetFlag(FLAGS_cache_dir);
  options.cache_dir_bytes = absl::GetFlag(FLAGS_cache_dir_bytes);
  options.sessions.ttl = absl::GetFlag(FLAGS_session_ttl);
  options.sessions.max_sessions = absl::GetFlag(FLAGS_max_sessions);
  options.sessions.max_session_bytes = absl::GetFlag(FLAGS_max_session_bytes);
  options.sessions.max_total_bytes = absl::GetFlag(FLAGS_max_sessions_bytes);
  options.regions.enabled = absl::GetFlag(FLAGS_shm);
  options.regions.ttl = absl::GetFlag(FLAGS_shm_ttl);
  options.regions.max_regions = absl::GetFlag(FLAGS_shm_max_regions);
  options.regions.max_bytes = absl::GetFlag(FLAGS_shm_max_bytes);
  options.limits.budget.max_bytes = absl::GetFlag(FLAGS_max_call_bytes);
  options.limits.max_server_bytes = absl::GetFlag(FLAGS_max_server_bytes);
  options.buffer_cache_fraction = absl::GetFlag(FLAGS_buffer_cache_fraction);
  options.limits.budget.max_seconds = absl::GetFlag(FLAGS_max_request_seconds);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.limits.max_nodes = absl::GetFlag(FLAGS_max_nodes);
  options.limits.max_tensor_bytes = absl::GetFlag(FLAGS_max_tensor_bytes);
  options.limits.max_concurrent_executions = absl::GetFlag(FLAGS_max_concurrent_executions);
  options.limits.max_printed_bytes = absl::GetFlag(FLAGS_max_printed_bytes);
  options.limits.inline_max_call_seconds =
      absl::ToDoubleSeconds(absl::GetFlag(FLAGS_inline_max_call));
  options.local_socket = absl::GetFlag(FLAGS_local_socket);
  options.local_max_connections = absl::GetFlag(FLAGS_local_max_connections);
  options.local_timeout = absl::GetFlag(FLAGS_local_timeout);
  options.local_spin = absl::GetFlag(FLAGS_local_spin);
  options.local_ring_bytes = absl::GetFlag(FLAGS_local_ring_bytes);
  options.tls = {absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
                 absl::GetFlag(FLAGS_tls_client_ca)};
  options.auth_tokens = absl::GetFlag(FLAGS_auth_tokens);
  const std::string scope = absl::GetFlag(FLAGS_cache_scope);
  if (scope != "global" && scope != "tenant") {
    std::fprintf(stderr, "kiln-server: --cache_scope must be global or tenant\n");
    return 2;
  }
  options.limits.tenant_cache = scope == "tenant";
  options.quota = {absl::GetFlag(FLAGS_quota_compiles_per_second),
                   absl::GetFlag(FLAGS_quota_executions), absl::GetFlag(FLAGS_quota_sessions),
                   absl::GetFlag(FLAGS_quota_session_bytes)};
  options.metrics_host = absl::GetFlag(FLAGS_metrics_host);
  options.metrics_token = absl::GetFlag(FLAGS_metrics_token);
  options.console = absl::GetFlag(FLAGS_console);
  options.console_dir = absl::GetFlag(FLAGS_console_dir);
  if (options.console_dir.empty()) options.console_dir = DefaultConsoleDir();
  options.console_interval = absl::GetFlag(FLAGS_console_interval);
  options.redis = absl::GetFlag(FLAGS_redis);
  options.redis_sessions = absl::GetFlag(FLAGS_redis_sessions);
  options.redis_ttl = absl::GetFlag(FLAGS_redis_ttl);
  options.compile_lease = absl::GetFlag(FLAGS_compile_lease);
  options.warm_functions = absl::GetFlag(FLAGS_warm_functions);
  options.warm_hottest = absl::GetFlag(FLAGS_warm_hottest);
  options.warm_timeout = absl::GetFlag(FLAGS_warm_timeout);
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(options);
  if (!server.ok() && !options.cache_dir.empty() && options.cache_dir == DefaultCacheDir() &&
      absl::GetFlag(FLAGS_cache_dir) == DefaultCacheDir()) {
    // The default disk tier is a convenience: without a writable cache directory, run without.
    Log(LogLevel::kWarning, "no disk tier", {{"error", server.status().ToString()}});
    options.cache_dir.clear();
    server = Server::Start(options);
  }
  if (!server.ok()) {
    Log(LogLevel::kError, "cannot start", {{"error", server.status().ToString()}});
    return 1;
  }
  int sig = 0;
  // SIGHUP reloads the certificates and the tokens file; SIGTERM or SIGINT stop.
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) (*server)->Reload().IgnoreError();
  Log(LogLevel::kInfo, "shutting down", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
  (*server)->Shutdown(std::chrono::seconds(10),
                      absl::ToChronoMilliseconds(absl::GetFlag(FLAGS_drain_delay)));
  return 0;
}
