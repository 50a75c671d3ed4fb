#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <httplib.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "core/runtime/allocator.h"
#include "server/log.h"

namespace kiln::server {

// The Prometheus endpoint: GET /metrics and GET /healthz on their own thread.
struct Server::Http {
  httplib::Server server;
  std::thread thread;
};

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  std::unique_ptr<Server> s(new Server());
  std::optional<DiskCache> disk;
  if (!options.cache_dir.empty()) {
    absl::StatusOr<DiskCache> d = DiskCache::Open(options.cache_dir, options.cache_dir_bytes);
    if (!d.ok()) return d.status();
    disk = *std::move(d);
  }
  s->sessions_ = std::make_unique<SessionStore>(options.sessions);
  s->cache_ = std::make_unique<FunctionCache>(options.cache_bytes, std::move(disk));
  // No tensor a request makes, constants folded at compile time included, may be larger than
  // a tensor it may send.
  SetMaxBufferBytes(static_cast<size_t>(options.limits.max_tensor_bytes));
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  s->pool_ = std::make_unique<ThreadPool>(threads);
  s->service_ = std::make_unique<KilnService>(*s->cache_, *s->sessions_, s->metrics_, *s->pool_,
                                              options.limits);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat(options.host, ":", options.port),
                           grpc::InsecureServerCredentials(), &s->port_);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.RegisterService(s->service_.get());
  s->grpc_ = builder.BuildAndStart();
  if (s->grpc_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.host, ":", options.port));
  }
  s->grpc_->GetHealthCheckService()->SetServingStatus(true);

  if (options.metrics_port >= 0) {
    auto http = std::make_unique<Http>();
    Server* self = s.get();
    http->server.Get("/metrics", [self](const httplib::Request&, httplib::Response& res) {
      res.set_content(self->MetricsText(), "text/plain; version=0.0.4");
    });
    http->server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain");
    });
    s->metrics_port_ = options.metrics_port == 0
                           ? http->server.bind_to_any_port(options.host.c_str())
                           : (http->server.bind_to_port(options.host.c_str(), options.metrics_port)
                                  ? options.metrics_port
                                  : -1);
    if (s->metrics_port_ < 0) {
      s->Shutdown(std::chrono::milliseconds(0));
      return absl::UnavailableError(
          absl::StrCat("cannot listen for metrics on ", options.host, ":", options.metrics_port));
    }
    Http* h = http.get();
    http->thread = std::thread([h] { h->server.listen_after_bind(); });
    s->http_ = std::move(http);
  }
  Log(LogLevel::kInfo, "serving",
      {{"address", absl::StrCat(options.host, ":", s->port_)},
       {"metrics_port", absl::StrCat(s->metrics_port_)},
       {"threads", absl::StrCat(threads)},
       {"cache_bytes", absl::StrCat(options.cache_bytes)},
       {"cache_dir", options.cache_dir}});
  return s;
}

void Server::Shutdown(std::chrono::milliseconds grace) {
  if (stopped_) return;
  stopped_ = true;
  if (grpc_) {
    grpc_->GetHealthCheckService()->SetServingStatus(false);
    // Calls in flight get `grace` to finish; then gRPC cancels what is left. (gRPC's own
    // Shutdown deadline would also wait that long for idle client connections to close.)
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (service_->in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
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
  return metrics_.Render(cache_->stats(), *sessions_);
}

}  // namespace kiln::server
