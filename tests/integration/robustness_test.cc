// No request can bring the server down, against a real server on 127.0.0.1: graphs of 100,000
// nodes (a tanh chain and a wide sum) compiled, executed, differentiated, optimized and printed;
// the per-request memory and time budgets; a client deadline and a disconnect stopping a compile;
// sessions that expire and are bounded; a disk that fills up.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "core/kiln.h"
#include "core/tensor/call_limits.h"
#include "kiln/v1/service.grpc.pb.h"
#include "proto/convert/graph_convert.h"
#include "proto/convert/tensor_convert.h"
#include "server/log.h"
#include "server/server.h"
#include "tests/testing/huge_graphs.h"

namespace kiln {
namespace {

using testing::TanhChain;
using testing::WideSum;

using server::Server;
using server::ServerOptions;
using Clock = std::chrono::steady_clock;

ServerOptions Local() {
  server::SetLogLevel(server::LogLevel::kError);
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.threads = 2;
  o.limits.budget.max_seconds = 0;  // 100k-node graphs take minutes under the sanitizers
  return o;
}

struct Running {
  std::unique_ptr<Server> server;
  std::unique_ptr<v1::Kiln::Stub> stub;
};

Running Start(const ServerOptions& o = Local()) {
  auto s = Server::Start(o);
  EXPECT_TRUE(s.ok()) << s.status();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  auto channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string((*s)->port()),
                                           grpc::InsecureChannelCredentials(), args);
  return {std::move(*s), v1::Kiln::NewStub(channel)};
}

v1::Graph Proto(const std::pair<Var, Var>& g) { return *GraphToProto({g.first}, {g.second}); }

grpc::Status Compile(v1::Kiln::Stub& stub, const v1::Graph& g, v1::CompileResponse* resp,
                     std::chrono::milliseconds deadline = std::chrono::minutes(10)) {
  v1::CompileRequest req;
  *req.mutable_graph() = g;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  return stub.Compile(&ctx, req, resp);
}

double Execute(v1::Kiln::Stub& stub, const std::string& id, std::vector<double> x) {
  v1::ExecuteRequest req;
  req.set_function_id(id);
  *req.add_args() = ToProto(*Tensor::FromValues<double>(DType::kFloat64, {int64_t(x.size())}, x));
  v1::ExecuteResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = stub.Execute(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  if (!s.ok()) return NAN;
  return FromProto(resp.outputs(0))->data<double>()[0];
}

// Waits until the server has no call in flight; false after `limit`.
bool Drains(const Server& s, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (s.in_flight() > 0) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(RobustnessTest, ChainOf100kNodesCompilesRunsDifferentiatesAndPrints) {
  Running r = Start();
  const auto chain = TanhChain(99999);
  const v1::Graph g = Proto(chain);
  ASSERT_EQ(g.nodes_size(), 100000);
  v1::CompileResponse compiled;
  grpc::Status s = Compile(*r.stub, g, &compiled);
  ASSERT_TRUE(s.ok()) << s.error_message();
  double expected = 0;
  for (double v : {0.5, -2.0}) {
    for (int i = 0; i < 99999; ++i) v = std::tanh(v);
    expected += v;
  }
  EXPECT_NEAR(Execute(*r.stub, compiled.function_id(), {0.5, -2.0}), expected, 1e-12);

  v1::GradRequest grad;
  *grad.mutable_graph() = g;
  grad.add_wrt()->set_input(0);
  v1::GradResponse grads;
  grpc::ClientContext grad_ctx;
  s = r.stub->Grad(&grad_ctx, grad, &grads);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_GT(grads.graph().nodes_size(), 100000);

  for (auto format : {v1::PrintRequest::DPRINT, v1::PrintRequest::DOT}) {
    v1::PrintRequest print;
    *print.mutable_graph() = g;
    print.set_format(format);
    v1::PrintResponse text;
    grpc::ClientContext ctx;
    s = r.stub->Print(&ctx, print, &text);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_LT(text.text().size(), 100000u * 300);  // linear: no 10^10-byte indentation
  }
  v1::OptimizeRequest optimize;
  *optimize.mutable_graph() = g;
  v1::OptimizeResponse optimized;
  grpc::ClientContext ctx;
  s = r.stub->Optimize(&ctx, optimize, &optimized);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_LT(optimized.graph().nodes_size(), 1000);  // fused into Composites of 256 tanh
}

TEST(RobustnessTest, WideGraphOf100kNodesCompilesAndRuns) {
  Running r = Start();
  const v1::Graph g = Proto(WideSum(25000));
  ASSERT_GE(g.nodes_size(), 99990);
  ASSERT_LE(g.nodes_size(), 100000);
  v1::CompileResponse compiled;
  grpc::Status s = Compile(*r.stub, g, &compiled);
  ASSERT_TRUE(s.ok()) << s.error_message();
  double expected = 0;
  for (int i = 0; i < 25000; ++i) expected += std::exp(0.25 + 1e-3 * i);
  EXPECT_NEAR(Execute(*r.stub, compiled.function_id(), {0.25}), expected, 1e-9 * expected);
}

TEST(RobustnessTest, RequestsOverTheirBudgetFailAloneAndNameTheLimit) {
  ServerOptions o = Local();
  o.limits.budget.max_bytes = 16 << 20;
  Running r = Start(o);
  v1::CompileResponse resp;
  grpc::Status s = Compile(*r.stub, Proto(TanhChain(50000)), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_call_bytes")) << s.error_message();
  v1::GradRequest grad;
  *grad.mutable_graph() = Proto(TanhChain(50000));
  grad.add_wrt()->set_input(0);
  v1::GradResponse grads;
  grpc::ClientContext ctx;
  s = r.stub->Grad(&ctx, grad, &grads);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  // Everyone else is served.
  s = Compile(*r.stub, Proto(TanhChain(10)), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();

  ServerOptions slow = Local();
  slow.limits.budget.max_seconds = 1e-3;
  Running t = Start(slow);
  s = Compile(*t.stub, Proto(TanhChain(20000)), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_request_seconds")) << s.error_message();
}

// A compile stops at its caller's deadline or disconnect, as an execution does: nothing is
// cached and the server is idle again soon after.
TEST(RobustnessTest, DeadlinesAndDisconnectsStopACompile) {
  Running r = Start();
  const v1::Graph g = Proto(TanhChain(99999));
  v1::CompileResponse resp;
  grpc::Status s = Compile(*r.stub, g, &resp, std::chrono::milliseconds(300));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(Drains(*r.server, std::chrono::seconds(20)));

  v1::CompileRequest req;
  *req.mutable_graph() = Proto(TanhChain(99998));
  grpc::ClientContext ctx;
  std::thread cancel([&ctx] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ctx.TryCancel();
  });
  s = r.stub->Compile(&ctx, req, &resp);
  cancel.join();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(Drains(*r.server, std::chrono::seconds(20)));
  EXPECT_EQ(r.server->cache().stats().compiles, 0u);

  // A stream abandoned half way through its argument is freed.
  s = Compile(*r.stub, Proto(TanhChain(3)), &resp);
  ASSERT_TRUE(s.ok());
  grpc::ClientContext stream_ctx;
  auto stream = r.stub->ExecuteStream(&stream_ctx);
  v1::ExecuteStreamRequest first;
  first.mutable_request()->set_function_id(resp.function_id());
  ASSERT_TRUE(stream->Write(first));
  v1::ExecuteStreamRequest chunk;
  chunk.mutable_chunk()->set_dtype(v1::DTYPE_FLOAT64);
  chunk.mutable_chunk()->add_shape(1 << 20);
  chunk.mutable_chunk()->set_data(std::string(1 << 20, '\0'));
  ASSERT_TRUE(stream->Write(chunk));
  stream_ctx.TryCancel();
  stream->Finish().IgnoreError();
  EXPECT_TRUE(Drains(*r.server, std::chrono::seconds(5)));
}

v1::Tensor Zeros(int64_t n) { return ToProto(Tensor::Zeros(DType::kFloat64, {n})); }

TEST(RobustnessTest, SessionsHaveRandomIdsExpireAndAreBounded) {
  ServerOptions o = Local();
  o.sessions.ttl = absl::Milliseconds(300);
  o.sessions.max_sessions = 50;
  o.sessions.max_session_bytes = 8000;
  o.sessions.max_total_bytes = 20000;
  Running r = Start(o);
  auto create = [&](grpc::Status* status = nullptr) {
    v1::CreateSessionResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = r.stub->CreateSession(&ctx, {}, &resp);
    if (status) *status = s;
    return resp.session();
  };
  auto set = [&](const std::string& session, const std::string& name, int64_t n) {
    v1::SetSharedRequest req;
    req.set_session(session);
    req.set_name(name);
    *req.mutable_value() = Zeros(n);
    v1::SetSharedResponse resp;
    grpc::ClientContext ctx;
    return r.stub->SetShared(&ctx, req, &resp);
  };
  std::set<std::string> ids;
  for (int i = 0; i < 50; ++i) {
    const std::string id = create();
    ASSERT_EQ(id.size(), 32u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 50u);
  grpc::Status s;
  create(&s);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_sessions")) << s.error_message();

  const std::string a = *ids.begin(), b = *ids.rbegin();
  EXPECT_TRUE(set(a, "w", 900).ok());  // 7,200 bytes
  s = set(a, "v", 200);                // 8,800 > 8,000 in one session
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_session_bytes")) << s.error_message();
  EXPECT_TRUE(set(a, "w", 100).ok());  // replacing frees the old value's bytes
  EXPECT_TRUE(set(b, "w", 1000).ok());
  EXPECT_TRUE(set(*std::next(ids.begin()), "w", 1000).ok());
  s = set(*std::next(ids.begin(), 2), "w", 1000);  // 24,800 > 20,000 in all
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_sessions_bytes")) << s.error_message();

  // Idle sessions go; the one kept busy stays.
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(set(b, "w", 10).ok());
  }
  v1::GetSharedRequest get;
  get.set_session(a);
  get.set_name("w");
  v1::GetSharedResponse value;
  grpc::ClientContext ctx;
  s = r.stub->GetShared(&ctx, get, &value);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "expired")) << s.error_message();
  const std::string metrics = r.server->MetricsText();
  EXPECT_TRUE(absl::StrContains(metrics, "kiln_sessions 1\n")) << metrics;
  EXPECT_TRUE(absl::StrContains(metrics, "kiln_session_bytes 80\n")) << metrics;
  EXPECT_TRUE(absl::StrContains(metrics, "kiln_sessions_expired_total 49\n")) << metrics;
  create(&s);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// Writes past RLIMIT_FSIZE fail as on a full disk: compiles are served from memory, the failure
// is counted, and nothing partial is ever read back.
TEST(RobustnessTest, AFullDiskLeavesCompilesInMemory) {
  const std::string dir = ::testing::TempDir() + "/kiln_full_disk";
  std::filesystem::remove_all(dir);
  ServerOptions o = Local();
  o.cache_dir = dir;
  Running r = Start(o);
  signal(SIGXFSZ, SIG_IGN);
  rlimit old;
  getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = 512;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  v1::CompileResponse resp;
  grpc::Status s = Compile(*r.stub, Proto(TanhChain(50)), &resp);
  setrlimit(RLIMIT_FSIZE, &old);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.source(), "compiled");
  EXPECT_EQ(r.server->cache().stats().disk_write_errors, 1u);
  EXPECT_TRUE(absl::StrContains(r.server->MetricsText(), "kiln_disk_write_errors_total 1\n"));
  EXPECT_NEAR(Execute(*r.stub, resp.function_id(), {0.0}), 0.0, 0);
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    ADD_FAILURE() << "left behind: " << f.path();
  }
  // Room again: the next server compiles it and stores it whole.
  r.server->Shutdown();
  Running again = Start(o);
  s = Compile(*again.stub, Proto(TanhChain(50)), &resp);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(resp.source(), "compiled");
  EXPECT_EQ(again.server->cache().stats().disk_write_errors, 0u);
}

// A bad_alloc at each allocation of an Execute and of an ExecuteStream in turn (tensor buffers,
// and the server's heap blocks taken for the call): each such call fails alone with
// RESOURCE_EXHAUSTED (or succeeds, when the failure hit nothing it needed), and the next calls of
// both kinds are served whole.
TEST(RobustnessTest, AnAllocationFailureAtAnyStageLeavesTheServerWhole) {
  Running r = Start();
  Var x = dvector("x");
  v1::CompileResponse compiled;
  ASSERT_TRUE(
      Compile(*r.stub, *GraphToProto({x}, {sum(exp(print(x, "x")) * x), x * 2.0}), &compiled).ok());
  std::vector<double> values(1000);
  for (int i = 0; i < 1000; ++i) values[i] = 1e-3 * i;
  const v1::Tensor arg = ToProto(*Tensor::FromValues<double>(DType::kFloat64, {1000}, values));
  auto execute = [&](v1::ExecuteResponse* resp) {
    v1::ExecuteRequest req;
    req.set_function_id(compiled.function_id());
    *req.add_args() = arg;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return r.stub->Execute(&ctx, req, resp);
  };
  auto stream = [&](std::string* second_output) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto call = r.stub->ExecuteStream(&ctx);
    v1::ExecuteStreamRequest msg;
    msg.mutable_request()->set_function_id(compiled.function_id());
    call->Write(msg);
    msg.Clear();
    v1::TensorChunk* chunk = msg.mutable_chunk();
    chunk->set_dtype(arg.dtype());
    *chunk->mutable_shape() = arg.shape();
    chunk->set_data(arg.data());
    call->Write(msg);
    call->WritesDone();
    v1::TensorChunk out;
    second_output->clear();
    while (call->Read(&out)) {
      if (out.index() == 1) second_output->append(out.data());
    }
    return call->Finish();
  };
  // Whole answers, checked by their bytes (a tensor made here would count as an allocation).
  auto whole = [&] {
    v1::ExecuteResponse resp;
    grpc::Status s = execute(&resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::string streamed;
    grpc::Status t = stream(&streamed);
    EXPECT_TRUE(t.ok()) << t.error_message();
    return s.ok() && t.ok() && resp.outputs_size() == 2 && resp.outputs(1).data().size() == 8000 &&
           streamed == resp.outputs(1).data();
  };
  ASSERT_TRUE(whole());
  // For each kind, the n-th allocation fails, for every n until a call makes fewer.
  int failed[2] = {0, 0}, allocations[2] = {0, 0};
  for (int kind = 0; kind < 2; ++kind) {
    for (int n = 1; n < 100000; ++n) {
      v1::ExecuteResponse resp;
      std::string streamed;
      FailAllocationAfter(n);
      grpc::Status s = kind == 0 ? execute(&resp) : stream(&streamed);
      const bool reached = FailAllocationAfter(0) == 0;
      if (!reached) break;  // the call made fewer than n allocations: every one has failed once
      allocations[kind] = n;
      if (!s.ok()) {
        ++failed[kind];
        EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
            << "allocation " << n << ": " << s.error_message();
      }
      ASSERT_TRUE(whole()) << "after a failure at allocation " << n;
    }
  }
  std::printf(
      "allocation failures injected: Execute %d allocations (%d calls failed), "
      "ExecuteStream %d (%d)\n",
      allocations[0], failed[0], allocations[1], failed[1]);
  EXPECT_GT(failed[0], 0);
  EXPECT_GT(failed[1], 0);
}

}  // namespace
}  // namespace kiln
