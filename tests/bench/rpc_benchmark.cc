// The service's speed over loopback, against a bare gRPC echo service built the same way (callback
// API, same process, same machine) and measured in the same run, the two calls interleaved: an
// echo measured alone here starts near 56 us and settles near 100 us within a few thousand
// calls, so only interleaving compares the two under the same conditions.
//   rpc_compile_hit        p50 of Compile for the cached MLP training graph (hashing included)
//   rpc_execute_tiny       p50 of Execute of a + a**10 on 3 elements
//   rpc_execute_tiny_lane  the same Execute over the same-host lane (client/cpp/lane_channel.h)
//   rpc_execute_throughput calls/s of that Execute from 16 client threads
//   compile_cold, compile_disk, compile_hit: one Compile of the MLP graph on a fresh server, on a
//   fresh server whose cache directory has it, and on a server that holds it in memory.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "client/cpp/lane_channel.h"
#include "core/kiln.h"
#include "echo.grpc.pb.h"
#include "kiln/v1/service.grpc.pb.h"
#include "proto/convert/graph_convert.h"
#include "proto/convert/tensor_convert.h"
#include "server/log.h"
#include "server/server.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

class EchoService final : public bench::Echo::CallbackService {
  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* ctx, const bench::EchoMessage* req,
                                 bench::EchoMessage* resp) override {
    resp->set_payload(req->payload());
    auto* reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

// p50s in microseconds of `n` calls each of a and b, interleaved (a, b, a, b...) so that both
// see the same machine, after `warmup` unmeasured pairs.
template <typename A, typename B>
std::pair<double, double> P50s(int warmup, int n, A a, B b) {
  for (int i = 0; i < warmup; ++i) {
    a();
    b();
  }
  std::vector<double> ua(n), ub(n);
  for (int i = 0; i < n; ++i) {
    auto start = Clock::now();
    a();
    ua[i] = Micros(Clock::now() - start);
    start = Clock::now();
    b();
    ub[i] = Micros(Clock::now() - start);
  }
  std::nth_element(ua.begin(), ua.begin() + n / 2, ua.end());
  std::nth_element(ub.begin(), ub.begin() + n / 2, ub.end());
  return {ua[n / 2], ub[n / 2]};
}

// Calls per second from `threads` threads, each calling fn(thread) for `seconds`.
template <typename Fn>
double Throughput(int threads, double seconds, Fn fn) {
  std::atomic<int64_t> calls{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  const auto start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      int64_t mine = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        fn(t);
        ++mine;
      }
      calls += mine;
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& w : workers) w.join();
  return calls / std::chrono::duration<double>(Clock::now() - start).count();
}

v1::CompileRequest MlpRequest() {
  Var X = dmatrix("X"), W1 = dmatrix("W1"), W2 = dmatrix("W2");
  Var t = lvector("t");
  Var cost = mean(categorical_crossentropy(softmax(dot(tanh(dot(X, W1)), W2)), t));
  auto g = grad(cost, {W1, W2});
  v1::CompileRequest r;
  *r.mutable_graph() = *GraphToProto({X, W1, W2, t}, {cost, (*g)[0], (*g)[1]});
  return r;
}

std::shared_ptr<grpc::Channel> Channel(int port) {
  return grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                             grpc::InsecureChannelCredentials());
}

// One Compile on a fresh server with these options, in ms.
double CompileOnFreshServer(const server::ServerOptions& options, const v1::CompileRequest& req,
                            std::string* source) {
  auto s = server::Server::Start(options);
  auto stub = v1::Kiln::NewStub(Channel((*s)->port()));
  {  // connect first, so that the timing is the call's
    grpc::ClientContext ctx;
    v1::GetVersionResponse v;
    stub->GetVersion(&ctx, {}, &v);
  }
  grpc::ClientContext ctx;
  v1::CompileResponse resp;
  const auto start = Clock::now();
  if (!stub->Compile(&ctx, req, &resp).ok()) std::exit(1);
  const double ms = Micros(Clock::now() - start) / 1e3;
  *source = resp.source();
  return ms;
}

// The echo service on a free port of 127.0.0.1 (`port`).
std::unique_ptr<grpc::Server> StartEcho(EchoService& service, int* port) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), port);
  builder.RegisterService(&service);
  return builder.BuildAndStart();
}

// The echo service alone, its port printed ("port N"), until killed: tests/bench/
// python_calls.py's reference for one call from Python.
int ServeEcho() {
  EchoService echo_service;
  int port = 0;
  auto echo_server = StartEcho(echo_service, &port);
  if (echo_server == nullptr) return 1;
  std::printf("port %d\n", port);
  std::fflush(stdout);
  echo_server->Wait();
  return 0;
}

int Main() {
  server::SetLogLevel(server::LogLevel::kWarning);
  server::ServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  auto kiln_server = server::Server::Start(options);
  if (!kiln_server.ok()) return 1;
  EchoService echo_service;
  int echo_port = 0;
  auto echo_server = StartEcho(echo_service, &echo_port);

  auto echo = bench::Echo::NewStub(Channel(echo_port));
  auto kiln = v1::Kiln::NewStub(Channel((*kiln_server)->port()));
  bench::EchoMessage ping;
  ping.set_payload(std::string(64, 'x'));
  auto echo_call = [&](bench::Echo::Stub& stub) {
    grpc::ClientContext ctx;
    bench::EchoMessage pong;
    if (!stub.Echo(&ctx, ping, &pong).ok()) std::exit(1);
  };

  // Compile of the cached MLP training graph.
  const v1::CompileRequest mlp = MlpRequest();
  auto compile = [&] {
    grpc::ClientContext ctx;
    v1::CompileResponse resp;
    if (!kiln->Compile(&ctx, mlp, &resp).ok()) std::exit(1);
    return resp.function_id();
  };
  compile();
  const auto [compile_p50, echo_p50] = P50s(100, 2000, compile, [&] { echo_call(*echo); });
  std::printf("BENCH rpc_compile_hit kiln=%.1f ref=%.1f unit=us ref_name=grpc-echo speedup=%.3f\n",
              compile_p50, echo_p50, echo_p50 / compile_p50);

  // Execute of a tiny function.
  Var a = vector("a");
  v1::CompileRequest tiny;
  *tiny.mutable_graph() = *GraphToProto({a}, {a + pow(a, 10)});
  v1::CompileResponse compiled;
  {
    grpc::ClientContext ctx;
    if (!kiln->Compile(&ctx, tiny, &compiled).ok()) return 1;
  }
  v1::ExecuteRequest run;
  run.set_function_id(compiled.function_id());
  *run.add_args() = ToProto(*Tensor::Of<double>(DType::kFloat64, {3}, {0, 1, 2}));
  auto execute = [&](v1::Kiln::Stub& stub) {
    grpc::ClientContext ctx;
    v1::ExecuteResponse out;
    if (!stub.Execute(&ctx, run, &out).ok()) std::exit(1);
  };
  const auto [execute_p50, echo_p50_again] = P50s(
      200, 2000, [&] { execute(*kiln); }, [&] { echo_call(*echo); });
  std::printf("BENCH rpc_execute_tiny kiln=%.1f ref=%.1f unit=us ref_name=grpc-echo speedup=%.3f\n",
              execute_p50, echo_p50_again, echo_p50_again / execute_p50);

  // The same Execute over the same-host lane, as the C++ client sends it.
  v1::GetVersionResponse version;
  {
    grpc::ClientContext ctx;
    if (!kiln->GetVersion(&ctx, v1::GetVersionRequest(), &version).ok()) return 1;
  }
  client::LaneChannel lane("127.0.0.1:" + std::to_string((*kiln_server)->port()), version, "",
                           nullptr);
  auto execute_on_lane = [&] {
    std::optional<absl::StatusOr<v1::ExecuteResponse>> out = lane.Execute(run);
    if (!out.has_value() || !out->ok()) std::exit(1);
  };
  const auto [lane_p50, echo_p50_lane] = P50s(200, 2000, execute_on_lane, [&] { echo_call(*echo); });
  std::printf(
      "BENCH rpc_execute_tiny_lane kiln=%.1f ref=%.1f unit=us ref_name=grpc-echo speedup=%.3f\n",
      lane_p50, echo_p50_lane, echo_p50_lane / lane_p50);

  // 16 concurrent clients, each on its own channel.
  constexpr int kClients = 16;
  std::vector<std::unique_ptr<bench::Echo::Stub>> echo_stubs;
  std::vector<std::unique_ptr<v1::Kiln::Stub>> kiln_stubs;
  for (int i = 0; i < kClients; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("kiln_channel", i);  // distinct arguments: a connection per client
    echo_stubs.push_back(bench::Echo::NewStub(grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(echo_port), grpc::InsecureChannelCredentials(), args)));
    kiln_stubs.push_back(v1::Kiln::NewStub(
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string((*kiln_server)->port()),
                                  grpc::InsecureChannelCredentials(), args)));
  }
  const double echo_rate = Throughput(kClients, 2.0, [&](int t) { echo_call(*echo_stubs[t]); });
  const double kiln_rate = Throughput(kClients, 2.0, [&](int t) { execute(*kiln_stubs[t]); });
  std::printf(
      "BENCH rpc_execute_throughput kiln=%.0f ref=%.0f unit=calls/s ref_name=grpc-echo "
      "speedup=%.3f\n",
      kiln_rate, echo_rate, kiln_rate / echo_rate);

  // Cold, warm from disk, and in-memory compiles of the MLP graph.
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("kiln_bench_" + std::to_string(getpid())))
          .string();
  std::filesystem::remove_all(dir);
  server::ServerOptions with_dir = options;
  with_dir.cache_dir = dir;
  std::string source;
  const double cold = CompileOnFreshServer(with_dir, mlp, &source);
  const double disk = CompileOnFreshServer(with_dir, mlp, &source);
  if (source != "disk") return 1;
  std::filesystem::remove_all(dir);
  std::printf("BENCH compile_cold kiln=%.3f unit=ms\n", cold);
  std::printf("BENCH compile_disk kiln=%.3f unit=ms\n", disk);
  std::printf("BENCH compile_hit kiln=%.3f unit=ms\n", compile_p50 / 1e3);
  echo_server->Shutdown();
  return 0;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--serve_echo") return kiln::ServeEcho();
  return kiln::Main();
}
