// The lane's shared-memory ring (proto/lane/ring.h) against a real server: calls through it equal
// calls over the socket; frames larger than a slot go over the socket; a client that writes what
// no client would (a size past its slot, a length that disagrees) gets a named error and loses
// the connection, never the server; idle, departed and shut-down ring connections end; and the
// ring can be turned off (--local_ring_bytes=0; a size no ring can have leaves no lane).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "client/cpp/client.h"
#include "core/kiln.h"
#include "proto/convert/tensor_convert.h"
#include "tests/testing/local_server.h"
#include "tests/testing/raw_lane.h"

namespace kiln {
namespace {

using client::Client;
using server::ServerOptions;
using testing::Address;
using testing::ExecuteOf;
using testing::Local;
using testing::MetricsSay;
using testing::RawLane;
using testing::Start;

// f(x) = [2x + 1, exp(x)] compiled on `server`: its id.
std::string CompileExample(const server::Server& server) {
  auto c = Client::Connect(Address(server));
  EXPECT_TRUE(c.ok()) << c.status();
  Var x = dvector("x");
  auto f = (*c)->Compile({x}, {x * 2.0 + 1.0, exp(x)});
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? f->id : "";
}

Tensor Ramp(int64_t n) {
  Tensor t = Tensor::Zeros(DType::kFloat64, {n});
  for (int64_t i = 0; i < n; ++i) t.data<double>()[i] = 0.001 * static_cast<double>(i) - 1.0;
  return t;
}

TEST(LaneRingTest, CallsThroughTheRingEqualCallsOverTheSocket) {
  auto server = Start();
  ASSERT_NE(server, nullptr);
  const std::string id = CompileExample(*server);
  RawLane plain(server->local_socket());
  ASSERT_EQ(plain.Hello().code(), 0);
  RawLane ringed(server->local_socket());
  std::unique_ptr<lane::Ring> ring;
  const v1::LaneResponse hello = ringed.RingHello(&ring);
  ASSERT_EQ(hello.code(), 0) << hello.message();
  EXPECT_EQ(hello.instance().size(), 32u);
  EXPECT_EQ(hello.ring_slot_bytes(), 256u << 10);
  ASSERT_NE(ring, nullptr);
  for (int64_t n : {1, 3, 1000, 40000}) {  // 40,000 doubles: over the slot both ways
    const v1::LaneRequest req = ExecuteOf(id, Ramp(n));
    const v1::LaneResponse want = plain.Call(req);
    ASSERT_EQ(want.code(), 0) << want.message();
    std::optional<v1::LaneResponse> got = ringed.RingCall(*ring, req);
    ASSERT_TRUE(got.has_value()) << n;
    ASSERT_EQ(got->code(), 0) << got->message();
    EXPECT_EQ(got->execute().SerializeAsString(), want.execute().SerializeAsString()) << n;
  }
  // An error comes back through the ring as over the socket.
  std::optional<v1::LaneResponse> missing = ringed.RingCall(*ring, ExecuteOf("nope", Ramp(2)));
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->code(), static_cast<int>(absl::StatusCode::kNotFound)) << missing->message();
  EXPECT_TRUE(MetricsSay(*server, "kiln_requests_total{method=\"LaneExecute\"} 9"));
}

TEST(LaneRingTest, WhatNoClientWouldWriteEndsItsConnectionOnly) {
  auto server = Start();
  ASSERT_NE(server, nullptr);
  const std::string id = CompileExample(*server);
  struct Case {
    const char* name;
    uint64_t size;    // as posted
    uint32_t length;  // the frame's own length field
    bool ends;        // whether the connection ends after the error
  };
  for (const Case& c :
       {Case{"past the slot", (256u << 10) + 5, 256u << 10, true},
        Case{"shorter than a length", 3, 0, true}, Case{"a length that disagrees", 64, 1000, true},
        Case{"a frame that is no request", 12, 8, false}}) {
    RawLane lane(server->local_socket());
    std::unique_ptr<lane::Ring> ring;
    ASSERT_EQ(lane.RingHello(&ring).code(), 0);
    ASSERT_NE(ring, nullptr);
    char* slot = ring->OutSlot(lane::Side::kClient);
    std::memcpy(slot, &c.length, 4);
    std::memset(slot + 4, 0xff, 64);
    ring->Post(lane::Side::kClient, c.size);
    std::optional<v1::LaneResponse> resp = lane.RingAnswer(*ring);
    ASSERT_TRUE(resp.has_value()) << c.name;
    EXPECT_EQ(resp->code(), static_cast<int>(absl::StatusCode::kInvalidArgument))
        << c.name << ": " << resp->message();
    if (c.ends) {
      EXPECT_TRUE(lane.Ended()) << c.name;
    }
  }
  // The server serves on.
  RawLane after(server->local_socket());
  std::unique_ptr<lane::Ring> ring;
  ASSERT_EQ(after.RingHello(&ring).code(), 0);
  std::optional<v1::LaneResponse> ok = after.RingCall(*ring, ExecuteOf(id, Ramp(3)));
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->code(), 0) << ok->message();
}

TEST(LaneRingTest, TheMessageLimitHoldsInASlotLargerThanIt) {
  ServerOptions o = Local();
  o.max_message_bytes = 8192;  // under the slot's 256 KiB
  auto server = Start(o);
  ASSERT_NE(server, nullptr);
  RawLane lane(server->local_socket());
  std::unique_ptr<lane::Ring> ring;
  ASSERT_EQ(lane.RingHello(&ring).code(), 0);
  ASSERT_NE(ring, nullptr);
  const uint32_t n = 16384;
  char* slot = ring->OutSlot(lane::Side::kClient);
  std::memcpy(slot, &n, 4);
  std::memset(slot + 4, 0, n);
  ring->Post(lane::Side::kClient, 4 + n);
  std::optional<v1::LaneResponse> resp = lane.RingAnswer(*ring);
  ASSERT_TRUE(resp.has_value());
  EXPECT_EQ(resp->code(), static_cast<int>(absl::StatusCode::kResourceExhausted))
      << resp->message();
  EXPECT_TRUE(absl::StrContains(resp->message(), "--max_message_bytes")) << resp->message();
  EXPECT_TRUE(lane.Ended());
}

TEST(LaneRingTest, IdleDepartedAndShutDownConnectionsEnd) {
  ServerOptions o = Local();
  o.local_timeout = absl::Milliseconds(300);
  auto server = Start(o);
  ASSERT_NE(server, nullptr);
  {  // idle past --local_timeout
    RawLane idle(server->local_socket());
    std::unique_ptr<lane::Ring> ring;
    ASSERT_EQ(idle.RingHello(&ring).code(), 0);
    EXPECT_TRUE(idle.Ended());
  }
  {  // the client goes: its connection is gone within the ring's second-long sleeps
    RawLane gone(server->local_socket());
    std::unique_ptr<lane::Ring> ring;
    ASSERT_EQ(gone.RingHello(&ring).code(), 0);
  }
  EXPECT_TRUE(MetricsSay(*server, "kiln_lane_connections 0"));

  auto running = Start();
  ASSERT_NE(running, nullptr);
  RawLane waiting(running->local_socket());
  std::unique_ptr<lane::Ring> ring;
  ASSERT_EQ(waiting.RingHello(&ring).code(), 0);
  const auto start = std::chrono::steady_clock::now();
  running->Shutdown(std::chrono::seconds(30));  // wakes the connection asleep in its ring
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(waiting.Ended());
}

TEST(LaneRingTest, RingsCanBeTurnedOffAndTheirSizeIsChecked) {
  ServerOptions o = Local();
  o.local_ring_bytes = 0;
  auto server = Start(o);
  ASSERT_NE(server, nullptr);
  const std::string id = CompileExample(*server);
  RawLane lane(server->local_socket());
  std::unique_ptr<lane::Ring> ring;
  const v1::LaneResponse hello = lane.RingHello(&ring);
  ASSERT_EQ(hello.code(), 0);
  EXPECT_EQ(hello.ring_slot_bytes(), 0u);
  EXPECT_EQ(ring, nullptr);
  EXPECT_EQ(lane.Call(ExecuteOf(id, Ramp(3))).code(), 0);  // the socket serves

  // A size no ring can have leaves the server without its lane (as any bad lane flag does:
  // gRPC serves, and the log says why).
  for (int64_t bad : {int64_t{1000}, int64_t{-4096}, int64_t{128} << 20}) {
    ServerOptions b = Local();
    b.local_ring_bytes = bad;
    auto started = Start(b);
    ASSERT_NE(started, nullptr) << bad;
    EXPECT_TRUE(started->local_socket().empty()) << bad;
  }
}

}  // namespace
}  // namespace kiln
