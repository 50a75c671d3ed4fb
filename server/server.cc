#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/tensor/status_macros.h"
#include "core/tensor/allocator.h"
#include "proto/version.h"
#include "server/console/console.h"
#include "server/log.h"
#include "server/redis_cache.h"
#include "server/redis_sessions.h"

namespace kiln::server {

// The Prometheus endpoint: GET /metrics and GET /healthz on their own thread.
struct Server::Http {
  httplib::Server server;
  std::thread thread;
};

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  // On an error the server, as far as it got, is shut down by its destructor.
  std::unique_ptr<Server> s(new Server());
  RETURN_IF_ERROR(s->OpenStores(options));
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                   s->OpenCredentials(options));
  const int threads = s->StartService(options);
  // The lane first, so that GetVersion names it from the first call.
  RETURN_IF_ERROR(s->StartLane(options));
  RETURN_IF_ERROR(s->StartGrpc(options, std::move(credentials)));
  RETURN_IF_ERROR(s->StartHttp(options));
  Log(LogLevel::kInfo, "listening",
      {{"address", absl::StrCat(options.host, ":", s->port_)},
       {"metrics_port", absl::StrCat(s->metrics_port_)},
       {"threads", absl::StrCat(threads)},
       {"cache_bytes", absl::StrCat(options.cache_bytes)},
       {"cache_dir", options.cache_dir},
       {"redis", options.redis},
       {"redis_sessions", options.redis_sessions},
       {"tls", s->tls_ == nullptr              ? "off"
               : options.tls.client_ca.empty() ? "on"
                                               : "mutual"},
       {"auth_tokens", options.auth_tokens}});
  Server* self = s.get();
  s->warmer_ = std::thread([self, options] { self->WarmUp(options); });
  return s;
}

absl::Status Server::OpenStores(const ServerOptions& options) {
  std::optional<DiskCache> disk;
  if (!options.cache_dir.empty()) {
    ASSIGN_OR_RETURN(DiskCache d, DiskCache::Open(options.cache_dir, options.cache_dir_bytes));
    disk = std::move(d);
  }
  if (!options.redis.empty() &&
      (options.compile_lease < absl::Milliseconds(100) || options.redis_ttl < absl::Seconds(1))) {
    return absl::InvalidArgumentError(
        "--compile_lease must be at least 100ms and --redis_ttl at least 1s");
  }
  if (!options.redis.empty()) {
    ASSIGN_OR_RETURN(std::unique_ptr<Redis> r, Redis::Create(options.redis));
    redis_ = std::move(r);
    shared_ = std::make_shared<RedisCache>(redis_, options.redis_ttl, options.compile_lease);
  }
  if (!options.redis_sessions.empty()) {
    if (options.redis_sessions == options.redis) {
      session_redis_ = redis_;
    } else {
      ASSIGN_OR_RETURN(std::unique_ptr<Redis> r, Redis::Create(options.redis_sessions));
      session_redis_ = std::move(r);
    }
    sessions_ = std::make_unique<RedisSessionStore>(session_redis_, options.sessions);
  } else {
    sessions_ = std::make_unique<MemorySessionStore>(options.sessions);
  }
  cache_ = std::make_unique<FunctionCache>(options.cache_bytes, std::move(disk), shared_);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Server::OpenCredentials(
    const ServerOptions& options) {
  if (options.auth_tokens.empty()) {
    auth_ = std::make_unique<Authenticator>(options.quota);
  } else {
    absl::StatusOr<std::unique_ptr<Authenticator>> a =
        Authenticator::FromFile(options.auth_tokens, options.quota);
    if (!a.ok()) return a.status();
    auth_ = *std::move(a);
  }
  if (!options.tls.cert.empty() || !options.tls.key.empty() || !options.tls.client_ca.empty()) {
    if (options.tls.cert.empty() || options.tls.key.empty()) {
      return absl::InvalidArgumentError("TLS needs both --tls_cert and --tls_key");
    }
    ASSIGN_OR_RETURN(std::unique_ptr<TlsCredentials> tls, TlsCredentials::Create(options.tls));
    tls_ = std::move(tls);
    return tls_->server_credentials();
  }
  if (options.host != "127.0.0.1" && options.host != "localhost" && options.host != "::1" &&
      options.host != "[::1]") {
    Log(LogLevel::kWarning,
        "listening in plaintext beyond loopback: anyone on the network can read and send calls; "
        "give --tls_cert and --tls_key",
        {{"host", options.host}});
  }
  return grpc::InsecureServerCredentials();
}

int Server::StartService(const ServerOptions& options) {
  // No tensor a request makes, constants folded at compile time included, may be larger than
  // a tensor it may send.
  SetMaxBufferBytes(static_cast<size_t>(options.limits.max_tensor_bytes));
  ServiceLimits limits = options.limits;
  limits.max_message_bytes = options.max_message_bytes;
  if (limits.max_server_bytes < 0) limits.max_server_bytes = PhysicalMemoryBytes() / 2;
  // The freed-buffer cache: a fraction of one call's budget, emptied when the server is idle.
  if (limits.budget.max_bytes > 0) {
    SetBufferCacheBytes(static_cast<size_t>(static_cast<double>(limits.budget.max_bytes) *
                                            std::clamp(options.buffer_cache_fraction, 0.0, 1.0)));
  }
  trimmer_ = std::make_unique<MemoryTrimmer>(options.trim_after_idle);
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pool_ = std::make_unique<ThreadPool>(threads,
                                       options.max_threads > 0 ? options.max_threads : 4 * threads);
  regions_ = std::make_unique<RegionRegistry>(options.regions);
  service_ = std::make_unique<KilnService>(*cache_, *sessions_, *regions_, metrics_, *pool_, *auth_,
                                           limits);
  return threads;
}

absl::Status Server::StartGrpc(const ServerOptions& options,
                               std::shared_ptr<grpc::ServerCredentials> credentials) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat(options.host, ":", options.port), credentials, &port_);
  // A second server on a taken port fails to start instead of silently sharing its calls.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.RegisterService(service_.get());
  grpc_ = builder.BuildAndStart();
  if (grpc_ == nullptr || port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.host, ":", options.port));
  }
  // NOT_SERVING until warm.
  grpc_->GetHealthCheckService()->SetServingStatus(false);
  return absl::OkStatus();
}

absl::Status Server::StartHttp(const ServerOptions& options) {
  if (options.metrics_port < 0) return absl::OkStatus();
  auto http = std::make_unique<Http>();
  Server* self = this;
  const std::string expected =
      options.metrics_token.empty() ? "" : absl::StrCat("Bearer ", options.metrics_token);
  http->server.Get("/metrics", [self, expected](const httplib::Request& req,
                                                httplib::Response& res) {
    if (!expected.empty() && req.get_header_value("Authorization") != expected) {
      res.status = 401;
      res.set_content("/metrics needs `Authorization: Bearer <--metrics_token>`\n", "text/plain");
      return;
    }
    res.set_content(self->MetricsText(), "text/plain; version=0.0.4");
  });
  http->server.Get("/healthz", [self](const httplib::Request&, httplib::Response& res) {
    res.status = self->serving() ? 200 : 503;
    res.set_content(self->HealthText(), "text/plain");
  });
  if (options.console) {
    console_ = std::make_unique<Console>(ConsoleOptionsOf(options), ConsoleSourcesOf(options));
    console_->Mount(http->server);
  }
  const char* metrics_host = options.metrics_host.c_str();
  metrics_port_ =
      options.metrics_port == 0
          ? http->server.bind_to_any_port(metrics_host)
          : (http->server.bind_to_port(metrics_host, options.metrics_port) ? options.metrics_port
                                                                           : -1);
  if (metrics_port_ < 0) {
    Shutdown(std::chrono::milliseconds(0));
    return absl::UnavailableError(
        absl::StrCat("cannot listen for metrics on ", metrics_host, ":", options.metrics_port));
  }
  Http* h = http.get();
  http->thread = std::thread([h] { h->server.listen_after_bind(); });
  http_ = std::move(http);
  return absl::OkStatus();
}

ConsoleOptions Server::ConsoleOptionsOf(const ServerOptions& options) const {
  ConsoleOptions console;
  console.metrics_token = options.metrics_token;
  console.page_dir = options.console_dir;
  console.interval = options.console_interval;
  return console;
}

ConsoleSources Server::ConsoleSourcesOf(const ServerOptions& options) const {
  ConsoleSources sources;
  sources.metrics = &metrics_;
  sources.cache = cache_.get();
  sources.sessions = sessions_.get();
  sources.auth = auth_.get();
  const KilnService* service = service_.get();
  sources.sees = [service](const Tenant& t, const CompiledFunction& f) {
    return service->Sees(t, f);
  };
  sources.evict = [this](const std::string& id) { return cache_->Evict(id); };
  sources.delete_session = [this](const std::string& key) {
    regions_->DropSession(key);
    return sessions_->Delete(key);
  };
  sources.health = [this] {
    return std::string(serving_ ? "serving" : stopping_ ? "draining" : "warming");
  };
  const bool disk = !options.cache_dir.empty();
  sources.tiers = [this, disk] {
    std::vector<std::pair<std::string, std::string>> tiers{{"disk", disk ? "up" : "off"}};
    for (const char* role : {"cache", "sessions"}) {
      std::string state = "off";
      for (const auto& [r, redis] : RedisRoles()) {
        if (std::string_view(r) == role) state = redis->up() ? "up" : "down";
      }
      tiers.emplace_back(absl::StrCat("redis ", role), state);
    }
    return tiers;
  };
  sources.version = std::string(absl::StripPrefix(kServerVersion, "kiln-server "));
  sources.instance = service_->instance();
  return sources;
}

absl::Status Server::StartLane(const ServerOptions& options) {
  LaneOptions lane{options.local_socket,      options.local_max_connections,
                   options.local_timeout,     options.max_message_bytes,
                   options.local_spin,        static_cast<uint64_t>(options.local_ring_bytes)};
  const bool automatic = lane.path == "auto";
  if (automatic) {
    // A replica's clients reach it through a front, which the lane would bypass.
    if (!options.redis.empty() || !options.redis_sessions.empty()) return absl::OkStatus();
    // On a chosen port the same path serves every restart (a dead server's socket is replaced);
    // on any port, one path per server of this process.
    static std::atomic<int> servers{0};
    lane.path = options.port != 0
                    ? absl::StrCat("/tmp/kiln-", options.port, ".sock")
                    : absl::StrCat("/tmp/kiln-pid", getpid(), "-", servers.fetch_add(1), ".sock");
  }
  if (lane.path.empty()) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<LocalLane>> started = LocalLane::Start(lane, *service_);
  if (!started.ok()) {
    if (!automatic) return started.status();
    Log(LogLevel::kWarning, "no same-host lane: calls come over gRPC only",
        {{"error", started.status().ToString()}});
    return absl::OkStatus();
  }
  lane_ = *std::move(started);
  service_->set_lane(lane_.get());
  return absl::OkStatus();
}

std::string Server::local_socket() const { return lane_ != nullptr ? lane_->path() : ""; }

void Server::WarmUp(const ServerOptions& options) {
  const absl::Time deadline = absl::Now() + options.warm_timeout;
  std::vector<std::string> ids = options.warm_functions;
  if (shared_ != nullptr && options.warm_hottest > 0) {
    absl::StatusOr<std::vector<std::string>> hot = shared_->Hottest(options.warm_hottest);
    if (hot.ok()) ids.insert(ids.end(), hot->begin(), hot->end());
  }
  int loaded = 0;
  for (const std::string& id : ids) {
    if (stopping_.load() || absl::Now() > deadline) break;
    if (cache_->Find(id).ok()) ++loaded;
  }
  if (stopping_.load()) return;
  serving_ = true;
  grpc_->GetHealthCheckService()->SetServingStatus(true);
  Log(LogLevel::kInfo, "serving",
      {{"address", absl::StrCat(options.host, ":", port_)},
       {"warm_functions", absl::StrCat(loaded)},
       {"asked", absl::StrCat(ids.size())}});
}

absl::Status Server::Reload() {
  absl::Status status = auth_->Reload();
  if (tls_ != nullptr) status.Update(tls_->Reload());
  if (status.ok()) {
    Log(LogLevel::kInfo, "reloaded the certificates and tokens", {});
  } else {
    Log(LogLevel::kError, "reload failed; what did not reload stays as it was",
        {{"error", status.ToString()}});
  }
  return status;
}

std::vector<std::pair<const char*, const Redis*>> Server::RedisRoles() const {
  std::vector<std::pair<const char*, const Redis*>> roles;
  if (redis_ != nullptr) roles.emplace_back("cache", redis_.get());
  if (session_redis_ != nullptr) roles.emplace_back("sessions", session_redis_.get());
  return roles;
}

std::string Server::HealthText() const {
  std::string out = serving_ ? "serving\n" : (stopping_ ? "draining\n" : "warming up\n");
  const auto roles = RedisRoles();
  for (const auto& [role, redis] : roles) {
    const char* down = std::string_view(role) == "cache"
                           ? "unreachable (serving from the local tiers)"
                           : "unreachable (session calls are UNAVAILABLE)";
    absl::StrAppend(&out, "redis ", role, " ", redis->address(), ": ", redis->up() ? "up" : down,
                    "\n");
  }
  return out;
}

void Server::Shutdown(std::chrono::milliseconds grace, std::chrono::milliseconds delay) {
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  serving_ = false;
  if (warmer_.joinable()) warmer_.join();
  if (grpc_) {
    grpc_->GetHealthCheckService()->SetServingStatus(false);
    std::this_thread::sleep_for(delay);  // the front and probes see NOT_SERVING meanwhile
    // Calls in flight get `grace` to finish; then gRPC cancels what is left. (gRPC's own
    // Shutdown deadline would also wait that long for idle client connections to close.)
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (service_->in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // The lane's calls are counted in flight too; any still running get what is left of grace.
    if (lane_ != nullptr) {
      lane_->Stop(absl::FromChrono(std::max<std::chrono::steady_clock::duration>(
          deadline - std::chrono::steady_clock::now(), std::chrono::milliseconds(0))));
    }
    grpc_->Shutdown(std::chrono::system_clock::now());
  }
  pool_.reset();  // runs what is queued, so every started call finishes
  if (grpc_) grpc_->Wait();
  if (http_) {
    http_->server.stop();
    if (http_->thread.joinable()) http_->thread.join();
  }
  Log(LogLevel::kInfo, "stopped", {{"requests", absl::StrCat(metrics_.requests())}});
}

Server::~Server() { Shutdown(); }

std::string Server::MetricsText() const {
  std::string out = metrics_.Render(cache_->stats(), *sessions_);
  const auto roles = RedisRoles();
  absl::StrAppend(&out,
                  "# HELP kiln_redis_up 1 while Redis answers, by role (cache or sessions).\n",
                  "# TYPE kiln_redis_up gauge\n");
  for (const auto& [role, redis] : roles) {
    absl::StrAppend(&out, "kiln_redis_up{role=\"", role, "\"} ", redis->up() ? 1 : 0, "\n");
  }
  absl::StrAppend(&out, "# HELP kiln_redis_errors_total Redis commands that could not reach it.\n",
                  "# TYPE kiln_redis_errors_total counter\n");
  for (const auto& [role, redis] : roles) {
    absl::StrAppend(&out, "kiln_redis_errors_total{role=\"", role, "\"} ", redis->errors(), "\n");
  }
  absl::StrAppend(&out, "# HELP kiln_shm_regions Shared-memory regions registered here.\n",
                  "# TYPE kiln_shm_regions gauge\nkiln_shm_regions ", regions_->size(), "\n",
                  "# HELP kiln_shm_bytes Their registered sizes together.\n",
                  "# TYPE kiln_shm_bytes gauge\nkiln_shm_bytes ", regions_->bytes(), "\n");
  absl::StrAppend(&out, "# HELP kiln_lane_connections Same-host lane connections open.\n",
                  "# TYPE kiln_lane_connections gauge\nkiln_lane_connections ",
                  lane_ != nullptr ? lane_->connections() : 0, "\n");
  absl::StrAppend(&out, "# HELP kiln_serving 1 once warm and until draining.\n",
                  "# TYPE kiln_serving gauge\nkiln_serving ", serving_ ? 1 : 0, "\n");
  return out;
}

}  // namespace kiln::server
