// The machine-readable reasons of the server's errors (proto/kiln/v1/errors.proto), over gRPC and
// over the same-host lane: each status a client acts on carries its reason in its binary details,
// and the C++ client acts on the reason: an evicted function is compiled again, a lost region
// sends the call in messages (then a new region is registered).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "client/cpp/client.h"
#include "core/kiln.h"
#include "kiln/v1/service.grpc.pb.h"
#include "proto/convert/error_reason.h"
#include "proto/convert/tensor_convert.h"
#include "server/server.h"
#include "tests/testing/local_server.h"

namespace kiln {
namespace {

using client::Client;
using server::Server;
using server::ServerOptions;
using testing::Address;
using testing::Local;
using testing::Start;
using testing::Vec;

// A client whose Execute goes over the lane (`lane`) or over gRPC, with its shared-memory
// region on for calls of any size (`shm`) or off. The settings are read when it connects.
std::unique_ptr<Client> Connect(const Server& s, bool lane, bool shm) {
  setenv("KILN_LANE", lane ? "on" : "off", 1);
  setenv("KILN_SHM", shm ? "on" : "off", 1);
  setenv("KILN_SHM_MIN_BYTES", "0", 1);
  auto c = Client::Connect(Address(s));
  unsetenv("KILN_LANE");
  unsetenv("KILN_SHM");
  unsetenv("KILN_SHM_MIN_BYTES");
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? std::move(*c) : nullptr;
}

std::unique_ptr<v1::Kiln::Stub> RawStub(const Server& s) {
  return v1::Kiln::NewStub(grpc::CreateChannel(Address(s), grpc::InsecureChannelCredentials()));
}

// The ErrorInfo a raw gRPC status carries in its binary details.
v1::ErrorInfo InfoOf(const grpc::Status& s) {
  return ErrorInfoOf(StatusFromWire(s.error_code(), s.error_message(), s.error_details()));
}

v1::GetStatsResponse Stats(Client& c) {
  auto stats = c.Stats();
  EXPECT_TRUE(stats.ok()) << stats.status();
  return stats.ok() ? *stats : v1::GetStatsResponse();
}

class ClientActsOnReasonsTest : public ::testing::TestWithParam<bool> {};  // over the lane, or not

TEST_P(ClientActsOnReasonsTest, AnEvictedFunctionIsNotFoundAndCompiledAgain) {
  ServerOptions o = Local();
  o.cache_bytes = 1;  // one function at a time
  auto server = Start(o);
  auto c = Connect(*server, GetParam(), /*shm=*/false);
  Var a = vector("a");
  auto f1 = c->Compile({a}, {exp(a)});
  auto f2 = c->Compile({a}, {log(a)});
  ASSERT_TRUE(f1.ok() && f2.ok());

  v1::ExecuteRequest req;
  req.set_function_id(f1->id);
  *req.add_args() = ToProto(Vec({0}));
  v1::ExecuteResponse resp;
  grpc::ClientContext ctx;
  const grpc::Status raw = RawStub(*server)->Execute(&ctx, req, &resp);
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::NOT_FOUND);
  const v1::ErrorInfo info = InfoOf(raw);
  EXPECT_EQ(info.reason(), v1::FUNCTION_NOT_FOUND);
  EXPECT_EQ(info.metadata().at("function_id"), f1->id);

  auto out = c->Execute(*f1, {Vec({0})});  // FUNCTION_NOT_FOUND: compiled again
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "[1.]");
  const v1::GetStatsResponse stats = Stats(*c);
  EXPECT_EQ(stats.compiles(), 3u);
  EXPECT_EQ(stats.lane_connections(), GetParam() ? 1u : 0u);
}

TEST_P(ClientActsOnReasonsTest, ALostRegionSendsTheCallInMessagesThenRegistersAgain) {
  auto server = Start();
  auto c = Connect(*server, GetParam(), /*shm=*/true);
  Var x = vector("x");
  auto f = c->Compile({x}, {x * 2.0});
  ASSERT_TRUE(f.ok()) << f.status();
  auto first = c->Execute(*f, {Vec({1, 2})});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(Stats(*c).shm_regions(), 1u);

  // The server loses the region (as after --shm_ttl idle).
  auto stub = RawStub(*server);
  v1::UnregisterRegionRequest drop;
  drop.set_session(*c->Session());
  drop.set_region("cpp");  // ShmChannel::kRegion
  {
    grpc::ClientContext ctx;
    v1::UnregisterRegionResponse r;
    ASSERT_TRUE(stub->UnregisterRegion(&ctx, drop, &r).ok());
  }
  {
    grpc::ClientContext ctx;
    v1::UnregisterRegionResponse r;
    const grpc::Status again = stub->UnregisterRegion(&ctx, drop, &r);
    EXPECT_EQ(again.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(InfoOf(again).reason(), v1::REGION_UNKNOWN);
    EXPECT_EQ(InfoOf(again).metadata().at("region"), "cpp");
  }
  ASSERT_EQ(Stats(*c).shm_regions(), 0u);

  auto second = c->Execute(*f, {Vec({3, 4})});  // REGION_UNKNOWN: in messages
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)[0].ToString(), "[6. 8.]");
  EXPECT_EQ(Stats(*c).shm_regions(), 0u);
  auto third = c->Execute(*f, {Vec({5, 6})});  // a new region
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ((*third)[0].ToString(), "[10. 12.]");
  EXPECT_EQ(Stats(*c).shm_regions(), 1u);
  EXPECT_EQ(Stats(*c).lane_connections(), GetParam() ? 1u : 0u);
}

INSTANTIATE_TEST_SUITE_P(LaneOrGrpc, ClientActsOnReasonsTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Lane" : "Grpc";
                         });

TEST(ServerErrorReasonsTest, QuotasNameThemselves) {
  ServerOptions o = Local();
  o.quota.sessions = 1;
  o.quota.compiles_per_second = 0.001;  // one compile, then none for a long while
  auto server = Start(o);
  auto stub = RawStub(*server);
  auto create = [&] {
    grpc::ClientContext ctx;
    v1::CreateSessionResponse r;
    return stub->CreateSession(&ctx, {}, &r);
  };
  ASSERT_TRUE(create().ok());
  const grpc::Status sessions = create();
  EXPECT_EQ(sessions.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(InfoOf(sessions).reason(), v1::QUOTA_EXCEEDED);
  EXPECT_EQ(InfoOf(sessions).metadata().at("quota"), "sessions");

  auto c = Connect(*server, false, false);
  Var a = vector("a");
  ASSERT_TRUE(c->Compile({a}, {exp(a)}).ok());
  auto over = c->Compile({a}, {log(a)});
  ASSERT_FALSE(over.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(over.status())) << over.status();
  EXPECT_EQ(ReasonOf(over.status()), v1::QUOTA_EXCEEDED);
  EXPECT_EQ(ErrorInfoOf(over.status()).metadata().at("quota"), "compiles_per_second");
}

TEST(ServerErrorReasonsTest, ProtocolSessionAndSharedMemory) {
  auto server = Start();
  auto stub = RawStub(*server);
  {
    v1::GetVersionRequest req;
    req.set_client_protocol(99);
    grpc::ClientContext ctx;
    v1::GetVersionResponse r;
    const grpc::Status s = stub->GetVersion(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    const v1::ErrorInfo info = InfoOf(s);
    EXPECT_EQ(info.reason(), v1::PROTOCOL_MISMATCH);
    EXPECT_EQ(info.metadata().at("client_protocol"), "99");
    EXPECT_EQ(info.metadata().at("server_protocol"), "2");
  }
  {
    v1::GetSharedRequest req;
    req.set_session("0123456789abcdef0123456789abcdef");
    req.set_name("w");
    grpc::ClientContext ctx;
    v1::GetSharedResponse r;
    const grpc::Status s = stub->GetShared(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(InfoOf(s).reason(), v1::SESSION_NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    v1::CreateSessionResponse session;
    ASSERT_TRUE(stub->CreateSession(&ctx, {}, &session).ok());
    v1::RegisterRegionRequest req;
    req.set_session(session.session());
    req.set_region("r");
    req.set_shm_name("/kiln-missing0123456789abcdef");
    req.set_byte_size(8);
    grpc::ClientContext ctx2;
    v1::RegisterRegionResponse r;
    const grpc::Status s = stub->RegisterRegion(&ctx2, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(InfoOf(s).reason(), v1::SHM_UNAVAILABLE);
  }
  {  // an error without a reason (a bad graph) has no details
    v1::CompileRequest req;
    req.mutable_graph()->add_outputs()->set_input(7);  // there is no input 7
    grpc::ClientContext ctx;
    v1::CompileResponse r;
    const grpc::Status s = stub->Compile(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_details(), "");
  }
}

}  // namespace
}  // namespace kiln
