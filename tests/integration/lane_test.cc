// The same-host lane (server/local_lane.h) of a real server, through raw frames on its Unix
// socket: results equal gRPC's, the hello and its token, bad frames, the frame and connection
// limits with real inputs, slow and idle clients, a client gone mid-call, deadlines, shutdown,
// and the socket's path.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "client/cpp/client.h"
#include "core/graph/canonical.h"
#include "core/kiln.h"
#include "kiln/v1/service.grpc.pb.h"
#include "proto/convert/tensor_convert.h"
#include "server/log.h"
#include "server/server.h"
#include "tests/testing/local_server.h"
#include "tests/testing/raw_lane.h"
#include "tests/testing/server_process.h"

namespace kiln {
namespace {

using client::Client;
using server::Server;
using server::ServerOptions;
using testing::Address;
using testing::ExecuteOf;
using testing::Local;
using testing::MetricsSay;
using testing::RawLane;
using testing::Start;
using testing::Vec;

// A socket path of this test's own.
std::string TempSocket(const std::string& name) {
  return "/tmp/kiln-lane-test-" + std::to_string(getpid()) + "-" + name + ".sock";
}

TEST(LaneTest, ExecuteOverTheLaneEqualsGrpc) {
  auto server = Start();
  ASSERT_NE(server, nullptr);
  ASSERT_FALSE(server->local_socket().empty());
  setenv("KILN_LANE", "off", 1);  // this client's calls are the gRPC reference
  auto c = Client::Connect(Address(*server));
  unsetenv("KILN_LANE");
  ASSERT_TRUE(c.ok()) << c.status();
  Var x = dvector("x");
  auto f = (*c)->Compile({x}, {x * 2.0 + 1.0, exp(x)});
  ASSERT_TRUE(f.ok()) << f.status();
  // GetVersion names the lane, its process and the instance the hello answers.
  auto stub = v1::Kiln::NewStub(
      grpc::CreateChannel(Address(*server), grpc::InsecureChannelCredentials()));
  v1::GetVersionResponse version;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->GetVersion(&ctx, v1::GetVersionRequest(), &version).ok());
  EXPECT_EQ(version.local_socket(), server->local_socket());
  EXPECT_EQ(version.local_pid(), static_cast<uint32_t>(getpid()));
  struct stat st;
  ASSERT_EQ(stat(server->local_socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);

  RawLane lane(server->local_socket());
  ASSERT_TRUE(lane.connected());
  v1::LaneResponse hello = lane.Hello();
  EXPECT_EQ(hello.code(), 0) << hello.message();
  EXPECT_EQ(hello.instance(), version.instance());
  EXPECT_EQ(hello.instance().size(), 32u);

  const Tensor arg = Vec({0.5, -1.25, 3.0});
  auto expected = (*c)->Execute(*f, {arg});
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (int i = 0; i < 3; ++i) {  // calls follow one another on one connection
    v1::LaneResponse resp = lane.Call(ExecuteOf(f->id, arg));
    ASSERT_EQ(resp.code(), 0) << resp.message();
    ASSERT_EQ(resp.execute().outputs_size(), 2);
    for (int k = 0; k < 2; ++k) {
      auto out = FromProto(resp.execute().outputs(k));
      ASSERT_TRUE(out.ok());
      EXPECT_EQ(out->ToString(), (*expected)[k].ToString());
      EXPECT_EQ(resp.execute().outputs(k).data(), ToProto((*expected)[k]).data());  // bit for bit
    }
  }
  EXPECT_EQ(server->MetricsText().find("kiln_lane_connections 1") != std::string::npos, true);
  EXPECT_TRUE(MetricsSay(*server, "kiln_requests_total{method=\"LaneExecute\"} 3"));
}

TEST(LaneTest, TheCppClientTakesTheLaneByItself) {
  auto server = Start();
  ASSERT_NE(server, nullptr);
  Var x = dvector("x");
  Var acc = shared(Tensor::Zeros(DType::kFloat64, {3}), "acc");
  std::vector<std::vector<Tensor>> results;
  // Through the ring (the default), over the lane's socket alone, over gRPC.
  for (const char* mode : {"auto", "auto-socket", "off"}) {
    const bool socket_only = std::string(mode) == "auto-socket";
    setenv("KILN_LANE", socket_only ? "auto" : mode, 1);
    setenv("KILN_LANE_RING", socket_only ? "0" : "1", 1);
    auto c = Client::Connect(Address(*server));
    ASSERT_TRUE(c.ok()) << c.status();
    auto f = (*c)->Compile({x}, {exp(x) * 2.0, acc + x}, {.updates = {{acc, acc + x}}});
    ASSERT_TRUE(f.ok()) << f.status();
    for (int i = 0; i < 3; ++i) {
      auto out = (*c)->Execute(*f, {Vec({0.5, -1.0, 2.0})});
      ASSERT_TRUE(out.ok()) << out.status();
      results.push_back(*out);
    }
    auto stats = (*c)->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->lane_connections(), std::string(mode) == "off" ? 0u : 1u) << mode;
  }
  unsetenv("KILN_LANE");
  unsetenv("KILN_LANE_RING");
  EXPECT_TRUE(MetricsSay(*server, "kiln_requests_total{method=\"LaneExecute\"} 6"));
  for (int i = 0; i < 3; ++i) {  // the same bits each way (each client has its own session)
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(ToProto(results[i][k]).data(), ToProto(results[3 + i][k]).data()) << i << k;
      EXPECT_EQ(ToProto(results[i][k]).data(), ToProto(results[6 + i][k]).data()) << i << k;
    }
  }
  // KILN_LANE=on with a server without a lane: an error at connect, not a silent gRPC.
  ServerOptions o = Local();
  o.local_socket = "";
  auto none = Start(o);
  ASSERT_NE(none, nullptr);
  setenv("KILN_LANE", "on", 1);
  auto refused = Client::Connect(Address(*none));
  unsetenv("KILN_LANE");
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "KILN_LANE=on")) << refused.status();
}

// A server restarted on the same port: the client's connection is gone, its hello meets another
// instance, so it asks GetVersion again and connects to the new server's lane.
TEST(LaneTest, TheCppClientFindsARestartedServerAgain) {
  ServerOptions o = Local();
  o.port = testing::FreePort();
  auto first = Start(o);
  ASSERT_NE(first, nullptr);
  auto c = Client::Connect(Address(*first));
  ASSERT_TRUE(c.ok()) << c.status();
  Var x = dvector("x");
  auto f = (*c)->Compile({x}, {x - 1.0});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE((*c)->Execute(*f, {Vec({1})}).ok());
  first->Shutdown();
  first.reset();
  auto second = Start(o);
  ASSERT_NE(second, nullptr);
  for (int i = 0; i < 3; ++i) {  // the first compiles again (the new server's cache is empty)
    auto out = (*c)->Execute(*f, {Vec({1, 2})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].ToString(), Vec({0, 1}).ToString());
  }
  // One connection stays: the one whose hello met the old instance closes, and its thread
  // (on a busy machine, some time later) lets it go.
  EXPECT_TRUE(MetricsSay(*second, "kiln_lane_connections 1")) << second->MetricsText();
  auto stats = (*c)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->lane_connections(), 1u);
  // Three calls answered over the new server's lane. The first call's FUNCTION_NOT_FOUND came
  // over gRPC (the old connection found closed as the call began) or over the new lane (when
  // the restart took over a second, the client had looked at its idle connection and made a
  // new one first).
  const bool via_grpc = MetricsSay(*second, "kiln_requests_total{method=\"LaneExecute\"} 3");
  const std::string text = second->MetricsText();
  EXPECT_TRUE(via_grpc ||
              (absl::StrContains(text, "kiln_requests_total{method=\"LaneExecute\"} 4") &&
               absl::StrContains(
                   text, "kiln_errors_total{method=\"LaneExecute\",code=\"NOT_FOUND\"} 1")))
      << text;
}

TEST(LaneTest, BadFramesAreNamedErrorsAndTheLaneKeepsServing) {
  auto server = Start();
  ASSERT_NE(server, nullptr);
  auto c = Client::Connect(Address(*server));
  ASSERT_TRUE(c.ok());
  Var x = dvector("x");
  auto f = (*c)->Compile({x}, {x + 1.0});
  ASSERT_TRUE(f.ok());
  {  // an Execute before the hello ends the connection
    RawLane lane(server->local_socket());
    v1::LaneResponse resp = lane.Call(ExecuteOf(f->id, Vec({1})));
    EXPECT_EQ(resp.code(), static_cast<int>(absl::StatusCode::kFailedPrecondition));
    EXPECT_TRUE(absl::StrContains(resp.message(), "first request must be its hello"));
    EXPECT_TRUE(lane.Ended());
  }
  RawLane lane(server->local_socket());
  ASSERT_EQ(lane.Hello().code(), 0);
  // Bytes that are no LaneRequest, a request without a call, a second hello, an unknown
  // function, an argument of the wrong type: each answered, the connection kept.
  ASSERT_TRUE(lane.Send("\xff\xff\xff\xff garbage"));
  v1::LaneResponse resp = *lane.Read();
  EXPECT_EQ(resp.code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(absl::StrContains(resp.message(), "not a kiln.v1.LaneRequest")) << resp.message();
  EXPECT_EQ(lane.Call(v1::LaneRequest()).code(),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(lane.Hello().code(), static_cast<int>(absl::StatusCode::kFailedPrecondition));
  resp = lane.Call(ExecuteOf(std::string(64, 'a'), Vec({1})));
  EXPECT_EQ(resp.code(), static_cast<int>(absl::StatusCode::kNotFound));
  resp = lane.Call(ExecuteOf(f->id, Tensor::Zeros(DType::kInt32, {2, 2})));
  EXPECT_EQ(resp.code(), static_cast<int>(absl::StatusCode::kInvalidArgument)) << resp.message();
  // The largest timeout is no overflow: the call runs.
  resp = lane.Call(ExecuteOf(f->id, Vec({1, 2}), std::numeric_limits<int64_t>::max()));
  ASSERT_EQ(resp.code(), 0) << resp.message();
  EXPECT_EQ(FromProto(resp.execute().outputs(0))->ToString(), Vec({2, 3}).ToString());
}

TEST(LaneTest, TokensGuardTheLaneAsTheyGuardGrpc) {
  const std::string tokens = ::testing::TempDir() + "/lane_tokens";
  std::ofstream(tokens) << "sha256:" << Sha256Hex("s3cret") << " alice\n";
  ServerOptions o = Local();
  o.auth_tokens = tokens;
  auto server = Start(o);
  ASSERT_NE(server, nullptr);
  auto c = Client::Connect(Address(*server), {.token = "s3cret"});
  ASSERT_TRUE(c.ok()) << c.status();
  Var x = dvector("x");
  auto f = (*c)->Compile({x}, {x * 3.0});
  ASSERT_TRUE(f.ok());
  for (const char* bad : {"", "Bearer wrong", "s3cret"}) {
    RawLane lane(server->local_socket());
    EXPECT_EQ(lane.Hello(bad).code(), static_cast<int>(absl::StatusCode::kUnauthenticated))
        << bad;
    EXPECT_TRUE(lane.Ended()) << bad;
  }
  RawLane lane(server->local_socket());
  ASSERT_EQ(lane.Hello("Bearer s3cret").code(), 0);
  EXPECT_EQ(lane.Call(ExecuteOf(f->id, Vec({2}))).code(), 0);
  // A token taken out of the file stops working at the next call, on an open connection too.
  std::ofstream(tokens) << "sha256:" << Sha256Hex("other") << " bob\n";
  ASSERT_TRUE(server->Reload().ok());
  v1::LaneResponse resp = lane.Call(ExecuteOf(f->id, Vec({2})));
  EXPECT_EQ(resp.code(), static_cast<int>(absl::StatusCode::kUnauthenticated));
  EXPECT_TRUE(lane.Ended());
}

TEST(LaneTest, AFrameOverTheLimitIsRefused) {
  ServerOptions o = Local();
  o.max_message_bytes = 1 << 20;
  auto server = Start(o);
  ASSERT_NE(server, nullptr);
  {  // a length alone, of 4 GiB - 1: refused before any byte of it is read
    RawLane lane(server->local_socket());
    ASSERT_TRUE(lane.SendBytes(std::string(4, '\xff')));
    std::optional<v1::LaneResponse> resp = lane.Read();
    ASSERT_TRUE(resp.has_value());
    EXPECT_EQ(resp->code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
    EXPECT_TRUE(absl::StrContains(resp->message(), "4294967295 bytes")) << resp->message();
    EXPECT_TRUE(lane.Ended());
  }
  // A real 2 MiB request after the hello: the server answers and closes without reading it
  // all (the sender sees its connection end).
  RawLane lane(server->local_socket());
  ASSERT_EQ(lane.Hello().code(), 0);
  v1::LaneRequest big = ExecuteOf(std::string(64, 'a'), Tensor::Zeros(DType::kFloat64, {1 << 18}));
  std::thread sender([&] { lane.Send(big.SerializeAsString()); });
  std::optional<v1::LaneResponse> resp = lane.Read();
  sender.join();
  ASSERT_TRUE(resp.has_value());
  EXPECT_EQ(resp->code(), static_cast<int>(absl::StatusCode::kResourceExhausted))
      << resp->message();
  // An answer over the limit (an 8 MB outer product of an 8 KB argument) is refused as gRPC
  // refuses it, and the connection goes on.
  auto c = Client::Connect(Address(*server));
  ASSERT_TRUE(c.ok());
  Var x = dvector("x");
  auto f = (*c)->Compile({x}, {outer(x, x), sum(x)});
  ASSERT_TRUE(f.ok()) << f.status();
  RawLane ok(server->local_socket());
  ASSERT_EQ(ok.Hello().code(), 0);
  v1::LaneResponse answer = ok.Call(ExecuteOf(f->id, Tensor::Zeros(DType::kFloat64, {1000})));
  EXPECT_EQ(answer.code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
  EXPECT_TRUE(absl::StrContains(answer.message(), "--max_message_bytes")) << answer.message();
  answer = ok.Call(ExecuteOf(f->id, Vec({1, 2})));  // below the limit all is well
  ASSERT_EQ(answer.code(), 0) << answer.message();
  EXPECT_EQ(FromProto(answer.execute().outputs(1))->ToString(), "3.0");
}

TEST(LaneTest, ConnectionsAreBoundedInNumber) {
  ServerOptions o = Local();
  o.local_max_connections = 2;
  auto server = Start(o);
  ASSERT_NE(server, nullptr);
  auto first = std::make_unique<RawLane>(server->local_socket());
  RawLane second(server->local_socket());
  ASSERT_EQ(first->Hello().code(), 0);
  ASSERT_EQ(second.Hello().code(), 0);
  {
    RawLane third(server->local_socket());
    std::optional<v1::LaneResponse> refused = third.Read();  // answered without a request
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
    EXPECT_TRUE(absl::StrContains(refused->message(), "--local_max_connections"));
    EXPECT_TRUE(third.Ended());
  }
  first.reset();  // a place frees up
  bool admitted = false;
  for (int i = 0; i < 200 && !admitted; ++i) {  // once the server has seen it close
    RawLane again(server->local_socket());
    v1::LaneRequest hello;
    hello.mutable_hello();
    again.Send(hello.SerializeAsString());  // fails when the connection was refused
    std::optional<v1::LaneResponse> resp = again.Read();
    admitted = resp.has_value() && resp->code() == 0;
    if (!admitted) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(admitted);
}

TEST(LaneTest, SlowAndIdleConnectionsAreClosed) {
  ServerOptions o = Local();
  o.local_timeout = absl::Milliseconds(300);
  auto server = Start(o);
  ASSERT_NE(server, nullptr);
  const auto start = std::chrono::steady_clock::now();
  RawLane idle(server->local_socket());
  ASSERT_EQ(idle.Hello().code(), 0);
  RawLane slow(server->local_socket());
  ASSERT_EQ(slow.Hello().code(), 0);
  // Half a frame, then a byte each 100 ms: the frame's time runs out regardless.
  ASSERT_TRUE(slow.SendBytes(std::string("\x00\x01\x00\x00", 4) + "abc"));
  std::thread drip([&] {
    for (int i = 0; i < 8; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!slow.SendBytes("x")) return;
    }
  });
  std::optional<v1::LaneResponse> resp = slow.Read();
  drip.join();
  ASSERT_TRUE(resp.has_value());
  EXPECT_EQ(resp->code(), static_cast<int>(absl::StatusCode::kDeadlineExceeded))
      << resp->message();
  EXPECT_TRUE(idle.Ended());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
  EXPECT_TRUE(MetricsSay(*server, "kiln_lane_connections 0"));
}

// A function of seconds of work at 512x512: 40 products.
struct SlowFunction {
  std::unique_ptr<Client> client;
  client::RemoteFunction f;
};
SlowFunction CompileSlow(const Server& server) {
  auto c = Client::Connect(Address(server));
  EXPECT_TRUE(c.ok());
  Var m = dmatrix("m");
  Var y = m;
  for (int i = 0; i < 40; ++i) y = tanh(dot(y, m));
  auto f = (*c)->Compile({m}, {y});
  EXPECT_TRUE(f.ok()) << f.status();
  return {std::move(*c), *f};
}

TEST(LaneTest, DeadlinesAndAClientGoneStopAnExecution) {
  auto server = Start();
  ASSERT_NE(server, nullptr);
  SlowFunction slow = CompileSlow(*server);
  const Tensor m = Tensor::Zeros(DType::kFloat64, {512, 512});
  {
    RawLane lane(server->local_socket());
    ASSERT_EQ(lane.Hello().code(), 0);
    v1::LaneResponse resp = lane.Call(ExecuteOf(slow.f.id, m, /*timeout_ms=*/20));
    EXPECT_EQ(resp.code(), static_cast<int>(absl::StatusCode::kDeadlineExceeded))
        << resp.message();
  }
  {  // sent, then the client goes: the server stops the call instead of finishing it
    RawLane lane(server->local_socket());
    ASSERT_EQ(lane.Hello().code(), 0);
    ASSERT_TRUE(lane.Send(ExecuteOf(slow.f.id, m).SerializeAsString()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(MetricsSay(*server, "kiln_errors_total{method=\"LaneExecute\",code=\"CANCELLED\"} 1"))
      << server->MetricsText();
  EXPECT_TRUE(MetricsSay(*server, "kiln_lane_connections 0"));
}

TEST(LaneTest, ShutdownLetsACallFinishThenRemovesTheSocket) {
  auto server = Start();
  ASSERT_NE(server, nullptr);
  const std::string path = server->local_socket();
  auto c = Client::Connect(Address(*server));
  ASSERT_TRUE(c.ok());
  Var m = dmatrix("m");
  Var y = m;
  for (int i = 0; i < 10; ++i) y = tanh(dot(y, m));
  auto f = (*c)->Compile({m}, {sum(y)});
  ASSERT_TRUE(f.ok());
  RawLane idle(path);
  ASSERT_EQ(idle.Hello().code(), 0);
  RawLane busy(path);
  ASSERT_EQ(busy.Hello().code(), 0);
  ASSERT_TRUE(busy.Send(ExecuteOf(f->id, Tensor::Zeros(DType::kFloat64, {512, 512})).SerializeAsString()));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  server->Shutdown(std::chrono::seconds(30));
  std::optional<v1::LaneResponse> resp = busy.Read();  // the call in flight finished
  ASSERT_TRUE(resp.has_value());
  EXPECT_EQ(resp->code(), 0) << resp->message();
  EXPECT_TRUE(busy.Ended());
  EXPECT_TRUE(idle.Ended());
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(LaneTest, TheSocketPathIsCheckedAtStart) {
  // A dead server's socket is replaced.
  const std::string stale = TempSocket("stale");
  {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, stale.c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    close(fd);  // the file stays, nobody listens
  }
  ServerOptions o = Local();
  o.local_socket = stale;
  auto first = Start(o);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->local_socket(), stale);
  // A live one is not taken over: an explicit path is then an error...
  auto second = Server::Start(o);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists) << second.status();
  // ...and so is a path that is another kind of file, or too long.
  const std::string file = TempSocket("file");
  std::ofstream(file) << "not a socket";
  o.local_socket = file;
  EXPECT_EQ(Server::Start(o).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(std::filesystem::exists(file));
  std::filesystem::remove(file);
  o.local_socket = "/tmp/" + std::string(200, 'x');
  EXPECT_EQ(Server::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  // Bounds that are no bounds are refused too.
  o.local_socket = TempSocket("bounds");
  for (auto bad : std::vector<std::function<void(ServerOptions&)>>{
           [](ServerOptions& b) { b.local_timeout = absl::InfiniteDuration(); },
           [](ServerOptions& b) { b.local_timeout = absl::ZeroDuration(); },
           [](ServerOptions& b) { b.local_max_connections = 0; },
           [](ServerOptions& b) { b.local_spin = absl::Seconds(-1); }}) {
    ServerOptions b = o;
    bad(b);
    EXPECT_EQ(Server::Start(b).status().code(), absl::StatusCode::kInvalidArgument);
  }
  // Empty: no lane, and GetVersion says none.
  o.local_socket = "";
  auto none = Start(o);
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->local_socket(), "");
  first->Shutdown();
  EXPECT_FALSE(std::filesystem::exists(stale));
}

}  // namespace
}  // namespace kiln
