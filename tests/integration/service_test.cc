// The real server on 127.0.0.1, through the C++ client and raw kiln.v1 stubs: the seed end to
// end, one compile for two clients, what the function id depends on, a restart served from the
// cache directory, eviction and resend, concurrent updates, Eigen in and out, streaming,
// deadlines, and a battery of malformed requests answered with the right code while the server
// keeps serving.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "absl/strings/match.h"
#include "client/cpp/client.h"
#include "client/cpp/eigen.h"
#include "client/cpp/shm_channel.h"
#include "core/kiln.h"
#include "kiln/v1/service.grpc.pb.h"
#include "proto/convert/graph_convert.h"
#include "proto/convert/tensor_convert.h"
#include "server/log.h"
#include "server/server.h"
#include "tests/testing/local_server.h"

namespace kiln {
namespace {

using client::Client;
using client::RemoteFunction;
using server::Server;
using server::ServerOptions;
using testing::Address;
using testing::Local;
using testing::Start;
using testing::Vec;

std::unique_ptr<Client> Connect(const Server& s) {
  auto c = Client::Connect(Address(s));
  EXPECT_TRUE(c.ok()) << c.status();
  return std::move(*c);
}

std::unique_ptr<v1::Kiln::Stub> RawStub(const Server& s) {
  return v1::Kiln::NewStub(grpc::CreateChannel(Address(s), grpc::InsecureChannelCredentials()));
}

v1::CompileRequest Request(const std::vector<Var>& ins, const std::vector<Var>& outs) {
  v1::CompileRequest r;
  *r.mutable_graph() = *GraphToProto(ins, outs);
  return r;
}

grpc::Status RawCompile(v1::Kiln::Stub& stub, const v1::CompileRequest& req,
                        v1::CompileResponse* resp) {
  grpc::ClientContext ctx;
  return stub.Compile(&ctx, req, resp);
}

TEST(ServiceTest, SeedExamplesEndToEnd) {
  auto server = Start();
  auto c = Connect(*server);
  Var a = vector("a");
  auto f = c->Compile({a}, {a + pow(a, 10)});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->source, "compiled");
  EXPECT_EQ(f->id.size(), 64u);
  auto out = c->Execute(*f, {Vec({0, 1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "[   0.    2. 1026.]");

  Var x = dmatrix("x");
  auto g = c->Compile({x}, {x * 2.0});
  ASSERT_TRUE(g.ok()) << g.status();
  auto twice = c->Execute(*g, {*Tensor::Of<double>(DType::kFloat64, {2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_EQ((*twice)[0].ToString(), "[[2. 4.]\n [6. 8.]]");
  auto text = c->Print({x * 2.0});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, DebugPrint({x * 2.0}));

  auto grads = c->Grad(sum(pow(a, 2)), {a});
  ASSERT_TRUE(grads.ok()) << grads.status();
  auto df = c->Compile({a}, {(*grads)[0]});
  ASSERT_TRUE(df.ok()) << df.status();
  auto d = c->Execute(*df, {Vec({0, 1, 2})});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)[0].ToString(), "[0. 2. 4.]");

  Var m = dmatrix("m"), z = dmatrix("z");
  auto optimized = c->Optimize({m * z / z});
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  EXPECT_EQ((*optimized)[0]->ToString(), "m");
}

// Eight clients at once on a graph that takes a while to optimize: one compile, seven hits
// (most of them waiting on the compile in flight rather than starting their own).
// The README's C++ client lines, as written there, against a real server.
TEST(ServiceTest, ReadmeClientExampleRuns) {
  auto server = Start();
  auto client = kiln::client::Client::Connect(Address(*server));
  ASSERT_TRUE(client.ok()) << client.status();
  kiln::Var a = kiln::vector("a");
  auto f = (*client)->Compile({a}, {a + kiln::pow(a, 10)});
  ASSERT_TRUE(f.ok()) << f.status();
  auto input = *kiln::Tensor::Of<double>(kiln::DType::kFloat64, {3}, {0, 1, 2});
  auto out = (*client)->Execute(*f, {input});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "[   0.    2. 1026.]");
  auto g = (*client)->Grad(kiln::sum(a * a), {a});
  ASSERT_TRUE(g.ok()) << g.status();
  kiln::Var w = kiln::shared(kiln::Tensor::Zeros(kiln::DType::kFloat64, {3}), "w");
  auto step = (*client)->Compile({a}, {w}, {.updates = {{w, w + a}}});
  ASSERT_TRUE(step.ok()) << step.status();
  ASSERT_TRUE((*client)->Execute(*step, {input}).ok());
  EXPECT_EQ((*client)->GetValue(w)->ToString(), "[0. 1. 2.]");
}

TEST(ServiceTest, ClientsCompilingOneGraphShareOneCompile) {
  auto server = Start();
  Var x = dvector("x");
  Var y = x;
  for (int i = 0; i < 1500; ++i) y = i % 2 ? exp(y) * 0.5 : log1p(y) + y;
  constexpr int kClients = 8;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(Connect(*server));
  std::vector<std::string> ids(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      auto f = clients[i]->Compile({x}, {y});
      ASSERT_TRUE(f.ok()) << f.status();
      ids[i] = f->id;
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& id : ids) EXPECT_EQ(id, ids[0]);
  auto stats = clients[0]->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->compiles(), 1u);
  EXPECT_EQ(stats->memory_hits(), kClients - 1u);
}

TEST(ServiceTest, IdIgnoresNamesAndNodeOrderButNotConstants) {
  auto server = Start();
  auto stub = RawStub(*server);
  // exp(x) + log(x): two independent nodes, then their sum.
  Var x = dvector("x");
  v1::CompileRequest base = Request({x}, {exp(x) + log(x)});
  v1::CompileResponse r0, r1, r2, r3;
  ASSERT_TRUE(RawCompile(*stub, base, &r0).ok());

  v1::CompileRequest renamed = base;
  renamed.mutable_graph()->mutable_inputs(0)->set_name("something_else");
  ASSERT_TRUE(RawCompile(*stub, renamed, &r1).ok());
  EXPECT_EQ(r1.function_id(), r0.function_id());

  // The same graph with its first two nodes swapped (and the references fixed).
  v1::CompileRequest reordered = base;
  v1::Graph* g = reordered.mutable_graph();
  ASSERT_EQ(g->nodes_size(), 3);
  g->mutable_nodes()->SwapElements(0, 1);
  for (v1::ValueRef& in : *g->mutable_nodes(2)->mutable_inputs()) {
    if (in.has_node_output()) in.mutable_node_output()->set_node(1 - in.node_output().node());
  }
  ASSERT_TRUE(RawCompile(*stub, reordered, &r2).ok());
  EXPECT_EQ(r2.function_id(), r0.function_id());

  v1::CompileRequest other_constant = Request({x}, {exp(x) + log(x) * 2.0});
  v1::CompileRequest other_constant2 = Request({x}, {exp(x) + log(x) * 3.0});
  ASSERT_TRUE(RawCompile(*stub, other_constant, &r3).ok());
  v1::CompileResponse r4;
  ASSERT_TRUE(RawCompile(*stub, other_constant2, &r4).ok());
  EXPECT_NE(r3.function_id(), r4.function_id());
  EXPECT_NE(r3.function_id(), r0.function_id());
  v1::CompileRequest other_mode = base;
  other_mode.set_mode(v1::MODE_FAST_COMPILE);
  v1::CompileResponse r5;
  ASSERT_TRUE(RawCompile(*stub, other_mode, &r5).ok());
  EXPECT_NE(r5.function_id(), r0.function_id());
}

TEST(ServiceTest, RestartedServerServesFromTheCacheDirectory) {
  const std::string dir = ::testing::TempDir() + "/kiln_cache_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  ServerOptions o = Local();
  o.cache_dir = dir;
  Var a = vector("a");
  std::string id;
  {
    auto server = Start(o);
    auto f = Connect(*server)->Compile({a}, {a + pow(a, 10)});
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(f->source, "compiled");
    id = f->id;
  }
  {
    auto server = Start(o);
    auto c = Connect(*server);
    // Executing the id alone works: the entry loads from disk without a compile.
    auto stub = RawStub(*server);
    v1::ExecuteRequest req;
    req.set_function_id(id);
    *req.add_args() = ToProto(Vec({0, 1, 2}));
    v1::ExecuteResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->Execute(&ctx, req, &resp).ok());
    EXPECT_EQ(FromProto(resp.outputs(0))->ToString(), "[   0.    2. 1026.]");
    auto stats = c->Stats();
    EXPECT_EQ(stats->compiles(), 0u);
    EXPECT_EQ(stats->disk_hits(), 1u);
  }
  {
    auto server = Start(o);
    auto f = Connect(*server)->Compile({a}, {a + pow(a, 10)});
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->source, "disk");
    EXPECT_EQ(f->id, id);
  }
  // A corrupt entry is detected, dropped and compiled again.
  {
    std::ofstream(dir + "/" + id + ".kfn", std::ios::binary | std::ios::trunc) << "garbage";
    auto server = Start(o);
    auto f = Connect(*server)->Compile({a}, {a + pow(a, 10)});
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(f->source, "compiled");
  }
  std::filesystem::remove_all(dir);
}

TEST(ServiceTest, EvictedFunctionsAreNotFoundAndClientsResend) {
  ServerOptions o = Local();
  o.cache_bytes = 1;  // one function at a time
  auto server = Start(o);
  auto c = Connect(*server);
  Var a = vector("a");
  auto f1 = c->Compile({a}, {exp(a)});
  auto f2 = c->Compile({a}, {log(a)});
  ASSERT_TRUE(f1.ok() && f2.ok());
  auto stub = RawStub(*server);
  v1::ExecuteRequest req;
  req.set_function_id(f1->id);
  *req.add_args() = ToProto(Vec({0}));
  v1::ExecuteResponse resp;
  grpc::ClientContext ctx;
  const grpc::Status raw = stub->Execute(&ctx, req, &resp);
  EXPECT_EQ(raw.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(absl::StrContains(raw.error_message(), "compile it again")) << raw.error_message();
  auto out = c->Execute(*f1, {Vec({0})});  // resends the graph by itself
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "[1.]");
  auto stats = c->Stats();
  EXPECT_EQ(stats->compiles(), 3u);
  EXPECT_GE(stats->evictions(), 2u);
}

// The session RPCs by hand: set, list (names and types), get, delete a variable, delete the
// session; what is gone is NOT_FOUND.
TEST(ServiceTest, SessionsHoldListAndDropVariables) {
  auto server = Start();
  auto stub = RawStub(*server);
  auto call = [&](auto method, const auto& req, auto* resp) {
    grpc::ClientContext ctx;
    return ((*stub).*method)(&ctx, req, resp);
  };
  v1::CreateSessionResponse created;
  ASSERT_TRUE(call(&v1::Kiln::Stub::CreateSession, v1::CreateSessionRequest(), &created).ok());
  const std::string session = created.session();
  EXPECT_EQ(session.size(), 32u);
  for (const auto& [name, value] : std::vector<std::pair<std::string, Tensor>>{
           {"w", Vec({1, 2})}, {"b", *Tensor::Of<int64_t>(DType::kInt64, {}, {7})}}) {
    v1::SetSharedRequest set;
    set.set_session(session);
    set.set_name(name);
    *set.mutable_value() = ToProto(value);
    v1::SetSharedResponse unused;
    ASSERT_TRUE(call(&v1::Kiln::Stub::SetShared, set, &unused).ok());
  }
  v1::ListSharedRequest list;
  list.set_session(session);
  v1::ListSharedResponse listed;
  ASSERT_TRUE(call(&v1::Kiln::Stub::ListShared, list, &listed).ok());
  ASSERT_EQ(listed.variables_size(), 2);
  EXPECT_EQ(listed.variables(0).name(), "b");
  EXPECT_EQ(FromProto(listed.variables(0).type()).value()->ToString(), "TensorType(int64, ())");
  EXPECT_EQ(listed.variables(1).name(), "w");
  EXPECT_EQ(FromProto(listed.variables(1).type()).value()->ToString(), "TensorType(float64, (2,))");
  v1::GetSharedRequest get;
  get.set_session(session);
  get.set_name("w");
  v1::GetSharedResponse got;
  ASSERT_TRUE(call(&v1::Kiln::Stub::GetShared, get, &got).ok());
  EXPECT_EQ(FromProto(got.value())->ToString(), "[1. 2.]");
  v1::DeleteSharedRequest drop;
  drop.set_session(session);
  drop.set_name("w");
  v1::DeleteSharedResponse dropped;
  ASSERT_TRUE(call(&v1::Kiln::Stub::DeleteShared, drop, &dropped).ok());
  EXPECT_EQ(call(&v1::Kiln::Stub::GetShared, get, &got).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(call(&v1::Kiln::Stub::DeleteShared, drop, &dropped).error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::DeleteSessionRequest end;
  end.set_session(session);
  v1::DeleteSessionResponse ended;
  ASSERT_TRUE(call(&v1::Kiln::Stub::DeleteSession, end, &ended).ok());
  EXPECT_EQ(call(&v1::Kiln::Stub::ListShared, list, &listed).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST(ServiceTest, ConcurrentUpdatesOfOneSharedVariableAddUp) {
  auto server = Start();
  auto c = Connect(*server);
  Var w = shared(*Tensor::Of<double>(DType::kFloat64, {}, {0}), "w");
  client::CompileOptions options;
  options.updates = {{w, w + 1.0}};
  auto f = c->Compile({}, {w}, options);
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&] {
      RemoteFunction mine = *f;
      if (!c->Execute(mine, {}).ok()) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  auto value = c->GetValue(w);
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(value->ToString(), "32.0");
}

// grpc.health.v1.Health/Check with an empty HealthCheckRequest answers SERVING (field 1 = 1),
// through a generic stub since Debian ships no C++ health stubs.
TEST(ServiceTest, HealthCheckSaysServing) {
  auto server = Start();
  // SERVING once warm: at once with no functions to load, on the warm-up thread.
  for (int i = 0; i < 500 && !server->serving(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  grpc::GenericStub stub(grpc::CreateChannel(Address(*server), grpc::InsecureChannelCredentials()));
  grpc::ByteBuffer request, response;
  grpc::Slice empty("");
  request = grpc::ByteBuffer(&empty, 1);
  grpc::ClientContext ctx;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) { done.set_value(s); });
  ASSERT_TRUE(done.get_future().get().ok());
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  EXPECT_EQ(bytes, std::string("\x08\x01", 2));
}

TEST(ServiceTest, EigenMatricesInAndOut) {
  auto server = Start();
  auto c = Connect(*server);
  Var x = dmatrix("x");
  auto f = c->Compile({x}, {dot(x, transpose(x)) * 2.0});
  ASSERT_TRUE(f.ok()) << f.status();
  Eigen::MatrixXd m(2, 3);
  m << 1, 2, 3, 4, 5, 6;
  auto out = c->Execute(*f, {client::FromEigen(m)});
  ASSERT_TRUE(out.ok()) << out.status();
  auto r = client::ToEigen<double>((*out)[0]);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->isApprox(2.0 * m * m.transpose()));
  EXPECT_EQ(client::ToEigen<float>((*out)[0]).status().message(),
            "ToEigen: the tensor has dtype float64, not float32");
}

TEST(ServiceTest, StreamedExecutionMatchesUnary) {
  auto server = Start();
  auto c = Connect(*server);
  Var v = dvector("v");
  auto f = c->Compile({v}, {v * 2.0, sum(v)});
  ASSERT_TRUE(f.ok());
  std::vector<double> big(400000);  // 3.2 MB: four chunks
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<double>(i % 1000);
  Tensor t = *Tensor::FromValues<double>(DType::kFloat64, {400000}, big);
  auto streamed = c->ExecuteStreamed(*f, {t});
  auto unary = c->Execute(*f, {t});
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  ASSERT_TRUE(unary.ok()) << unary.status();
  ASSERT_EQ(streamed->size(), 2u);
  for (int o = 0; o < 2; ++o) EXPECT_TRUE((*streamed)[o].BitwiseEquals((*unary)[o]));
}

// What a Print shows on the server comes back with the call, streamed or not, and the C++
// client writes it to standard output as Print does in-process.
TEST(ServiceTest, PrintedValuesComeBackWithTheCall) {
  auto server = Start();
  auto c = Connect(*server);
  Var v = dvector("v");
  auto f = c->Compile({v}, {print(v, "v is", {"__str__", "shape"}) * 2.0});
  ASSERT_TRUE(f.ok()) << f.status();
  Tensor t = *Tensor::FromValues<double>(DType::kFloat64, {3}, std::vector<double>{1, 2, 3});
  for (bool streamed : {false, true}) {
    ::testing::internal::CaptureStdout();
    auto out = streamed ? c->ExecuteStreamed(*f, {t}) : c->Execute(*f, {t});
    EXPECT_EQ(::testing::internal::GetCapturedStdout(), "v is __str__ = [1. 2. 3.]\nv is shape = (3,)\n");
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].ToString(), "[2. 4. 6.]");
  }
  // pp of the graph and of the compiled function.
  auto text = c->Print({print(v, "v") * 2.0}, "pp");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "(Print{message='v', attrs=('__str__',)}(v) * 2.0)");
}

TEST(ServiceTest, DeadlinesStopAnExecutionBetweenNodes) {
  auto server = Start();
  auto c = Connect(*server);
  Var m = dmatrix("m");
  Var y = m;
  for (int i = 0; i < 40; ++i) y = tanh(dot(y, m));  // seconds of work at 512x512
  auto f = c->Compile({m}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  auto stub = RawStub(*server);
  v1::ExecuteRequest req;
  req.set_function_id(f->id);
  *req.add_args() = ToProto(Tensor::Zeros(DType::kFloat64, {512, 512}));
  v1::ExecuteResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(20));
  EXPECT_EQ(stub->Execute(&ctx, req, &resp).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The server stops too: its execution ends with DEADLINE_EXCEEDED or CANCELLED rather than
  // finishing the 40 products (which counts no error). Up to 10 s for a loaded machine.
  std::string metrics;
  for (int i = 0; i < 500 && !absl::StrContains(metrics, "method=\"Execute\",code="); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    metrics = server->MetricsText();
  }
  EXPECT_TRUE(
      absl::StrContains(metrics,
                        "kiln_errors_total{method=\"Execute\",code=\"DEADLINE_EXCEEDED\"} 1") ||
      absl::StrContains(metrics, "kiln_errors_total{method=\"Execute\",code=\"CANCELLED\"} 1"))
      << metrics;
}

// Shutdown lets a call in flight finish (with its result) before the server stops.
TEST(ServiceTest, ShutdownFinishesCallsInFlight) {
  auto server = Start();
  auto c = Connect(*server);
  Var m = dmatrix("m");
  Var y = m;
  for (int i = 0; i < 10; ++i) y = tanh(dot(y, m));
  auto f = c->Compile({m}, {sum(y)});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor zeros = Tensor::Zeros(DType::kFloat64, {256, 256});
  // A first call opens the session and registers the shared-memory region, so the call below
  // is the Execute alone: nothing else of it can be the call in flight that Shutdown waits for.
  ASSERT_TRUE(c->Execute(*f, {zeros}).ok());
  absl::StatusOr<std::vector<Tensor>> out;
  // A reply reaches the client before its handler counts it out.
  while (server->in_flight() != 0) std::this_thread::yield();
  std::thread call([&] { out = c->Execute(*f, {zeros}); });
  while (server->in_flight() == 0) std::this_thread::yield();
  server->Shutdown(std::chrono::seconds(30));
  call.join();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "0.0");
}

// Each malformed request gets its code and a message naming the defect; the server serves on.
TEST(ServiceTest, MalformedRequestsAreNamedErrors) {
  ServerOptions o = Local();
  o.limits.max_nodes = 50;
  o.max_message_bytes = 1 << 20;
  o.limits.max_tensor_bytes = 1 << 24;
  auto server = Start(o);
  auto stub = RawStub(*server);
  Var x = dvector("x");
  const v1::CompileRequest good = Request({x}, {exp(x)});
  struct Case {
    std::string what;
    std::function<void(v1::CompileRequest&)> mutate;
    grpc::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknown op",
       [](auto& r) { r.mutable_graph()->mutable_nodes(0)->mutable_op()->set_kind("Frobnicate"); },
       grpc::StatusCode::INVALID_ARGUMENT, "node 0"},
      {"bad props",
       [](auto& r) {
         r.mutable_graph()
             ->mutable_nodes(0)
             ->mutable_op()
             ->mutable_attrs(0)
             ->mutable_value()
             ->set_s("nope");
       },
       grpc::StatusCode::INVALID_ARGUMENT, "node 0"},
      {"dangling input",
       [](auto& r) { r.mutable_graph()->mutable_nodes(0)->mutable_inputs(0)->set_input(7); },
       grpc::StatusCode::INVALID_ARGUMENT, "node 0"},
      {"forward reference",
       [](auto& r) {
         r.mutable_graph()->mutable_nodes(0)->mutable_inputs(0)->mutable_node_output()->set_node(0);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "node 0"},
      {"wrong output type",
       [](auto& r) {
         r.mutable_graph()->mutable_nodes(0)->mutable_output_types(0)->set_dtype(v1::DTYPE_INT8);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "node 0"},
      {"unknown mode", [](auto& r) { r.set_mode(static_cast<v1::Mode>(9)); },
       grpc::StatusCode::INVALID_ARGUMENT, "mode 9: expected MODE_FAST_RUN"},
      {"unknown on_unused_input",
       [](auto& r) { r.set_on_unused_input(static_cast<v1::UnusedInput>(7)); },
       grpc::StatusCode::INVALID_ARGUMENT, "on_unused_input 7"},
      {"update of a plain input", [](auto& r) { r.add_updates()->set_input(0); },
       grpc::StatusCode::INVALID_ARGUMENT, "not a shared input"},
      {"too many nodes",
       [](auto& r) {
         for (int i = 0; i < 60; ++i) *r.mutable_graph()->add_nodes() = r.graph().nodes(0);
       },
       grpc::StatusCode::RESOURCE_EXHAUSTED, "limit of 50"},
      {"no outputs referenced",
       [](auto& r) { r.mutable_graph()->mutable_outputs(0)->set_constant(3); },
       grpc::StatusCode::INVALID_ARGUMENT, "output 0"},
  };
  for (const Case& c : cases) {
    v1::CompileRequest r = good;
    c.mutate(r);
    v1::CompileResponse resp;
    const grpc::Status s = RawCompile(*stub, r, &resp);
    EXPECT_EQ(s.error_code(), c.code) << c.what << ": " << s.error_message();
    EXPECT_TRUE(absl::StrContains(s.error_message(), c.message))
        << c.what << ": " << s.error_message();
  }
  // A constant whose bytes do not match its shape.
  Var y = x + 1.5;
  v1::CompileRequest with_constant = Request({x}, {y});
  ASSERT_GT(with_constant.graph().constants_size(), 0);
  with_constant.mutable_graph()->mutable_constants(0)->mutable_value()->set_data("abc");
  v1::CompileResponse resp;
  const grpc::Status bytes = RawCompile(*stub, with_constant, &resp);
  EXPECT_EQ(bytes.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(bytes.error_message(), "constant 0")) << bytes.error_message();

  // Execute: unknown ids (a path included), argument count and dtype, a missing session.
  v1::CompileResponse compiled;
  ASSERT_TRUE(RawCompile(*stub, good, &compiled).ok());
  auto execute = [&](const v1::ExecuteRequest& req) {
    grpc::ClientContext ctx;
    v1::ExecuteResponse out;
    return stub->Execute(&ctx, req, &out);
  };
  v1::ExecuteRequest req;
  req.set_function_id("../../etc/passwd");
  EXPECT_EQ(execute(req).error_code(), grpc::StatusCode::NOT_FOUND);
  req.set_function_id(compiled.function_id());
  grpc::Status s = execute(req);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "takes 1 arguments")) << s.error_message();
  *req.add_args() = ToProto(*Tensor::Of<int64_t>(DType::kInt8, {2, 2}, {1, 2, 3, 4}));
  s = execute(req);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  req.mutable_args(0)->set_data("x");
  s = execute(req);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "argument 0")) << s.error_message();
  *req.mutable_args(0) = ToProto(Vec({1, 2}));
  req.set_session("no-such-session");
  EXPECT_EQ(execute(req).error_code(), grpc::StatusCode::NOT_FOUND);

  // A tensor the function makes over --max_tensor_bytes (8 TiB of zeros).
  {
    v1::CompileResponse big;
    Var s = dscalar("s");
    ASSERT_TRUE(
        RawCompile(
            *stub,
            Request({s}, {zeros({constant(int64_t{1} << 20), constant(int64_t{1} << 20)}) + s}),
            &big)
            .ok());
    v1::ExecuteRequest run;
    run.set_function_id(big.function_id());
    *run.add_args() = ToProto(*Tensor::Of<double>(DType::kFloat64, {}, {1}));
    const grpc::Status huge = execute(run);
    EXPECT_EQ(huge.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << huge.error_message();
    EXPECT_TRUE(absl::StrContains(huge.error_message(), "exceeds the limit"))
        << huge.error_message();
  }

  // A message over the server's limit.
  *req.mutable_args(0) = ToProto(Tensor::Zeros(DType::kFloat64, {200000}));
  req.clear_session();
  EXPECT_EQ(execute(req).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);

  // A shared input without a session.
  v1::CompileRequest with_shared = good;
  with_shared.mutable_graph()->mutable_inputs(0)->set_shared("w");
  ASSERT_TRUE(RawCompile(*stub, with_shared, &compiled).ok());
  v1::ExecuteRequest no_session;
  no_session.set_function_id(compiled.function_id());
  s = execute(no_session);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "needs a session")) << s.error_message();

  // Still serving.
  grpc::ClientContext ctx;
  v1::GetVersionResponse version;
  EXPECT_TRUE(stub->GetVersion(&ctx, {}, &version).ok());
  EXPECT_EQ(version.protocol(), 2u);
}


namespace shm {

// A client with its shared-memory channel on or off (KILN_SHM, read when it connects).
std::unique_ptr<Client> ConnectWithShm(const Server& s, bool on) {
  setenv("KILN_SHM", on ? "on" : "off", 1);
  setenv("KILN_SHM_MIN_BYTES", "0", 1);  // small calls through the region too
  auto c = Connect(s);
  unsetenv("KILN_SHM");
  unsetenv("KILN_SHM_MIN_BYTES");
  return c;
}

v1::GetStatsResponse Stats(Client& c) {
  auto stats = c.Stats();
  EXPECT_TRUE(stats.ok()) << stats.status();
  return *stats;
}

// A shared-memory object the test registers by hand, unlinked when the test ends.
struct Object {
  explicit Object(size_t bytes) {
    name = "/kiln-servicetest" + std::to_string(getpid()) + "x" + std::to_string(++count);
    fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
  }
  ~Object() {
    close(fd);
    shm_unlink(name.c_str());
  }
  static inline int count = 0;
  std::string name;
  int fd;
};

}  // namespace shm

// The same calls through a region and through messages give the same bits: several dtypes,
// empty tensors, a 3.2 MB argument, the region reused and grown across calls. The region's
// calls send no tensor bytes in messages.
TEST(ServiceTest, SharedMemoryExecutionEqualsMessages) {
  auto server = Start();
  auto in_region = shm::ConnectWithShm(*server, true);
  auto in_messages = shm::ConnectWithShm(*server, false);
  Var x = dmatrix("x");
  Var n = lvector("n");
  Var b = bvector("b");
  Var k = tensor(DType::kBool, {std::nullopt}, "k");
  const std::vector<Var> outs = {x * 2.0, sum(n), exp(x), b * n, k * n};
  auto f = in_region->Compile({x, n, b, k}, outs);
  auto g = in_messages->Compile({x, n, b, k}, outs);
  ASSERT_TRUE(f.ok() && g.ok());
  for (int64_t rows : {3, 0, 40000, 5, 40000}) {
    std::vector<double> xs(rows * 10);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.001 * static_cast<double>(i % 997) - 0.3;
    const std::vector<Tensor> args = {
        *Tensor::FromValues<double>(DType::kFloat64, {rows, 10}, xs),
        *Tensor::Of<int64_t>(DType::kInt64, {3}, {7, -2, 1 << 30}),
        Tensor::Of<int64_t>(DType::kInt64, {3}, {1, -1, 2})->AsType(DType::kInt8),
        *Tensor::Of<bool>(DType::kBool, {3}, {true, false, true})};
    const int64_t received = shm::Stats(*in_region).bytes_received();
    auto a = in_region->Execute(*f, args);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(shm::Stats(*in_region).bytes_received(), received) << "rows " << rows;
    auto m = in_messages->Execute(*g, args);
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_EQ(a->size(), m->size());
    for (size_t o = 0; o < a->size(); ++o) {
      EXPECT_TRUE((*a)[o].BitwiseEquals((*m)[o])) << "rows " << rows << " output " << o;
    }
  }
  // One region for the client, grown in place of the first.
  EXPECT_EQ(shm::Stats(*in_region).shm_regions(), 1u);
  EXPECT_GE(shm::Stats(*in_region).shm_bytes(), 40000u * 10 * 8);
}

// By default (KILN_SHM unset) a client of a loopback address sends large calls through a region
// and small ones in messages.
TEST(ServiceTest, LoopbackClientsUseRegionsForLargeCalls) {
  EXPECT_TRUE(client::OnThisHost("127.0.0.1:1") && client::OnThisHost("127.8.9.10:1"));
  EXPECT_TRUE(client::OnThisHost("localhost:1") && client::OnThisHost("[::1]:1"));
  EXPECT_TRUE(client::OnThisHost("unix:/tmp/kiln.sock"));
  EXPECT_FALSE(client::OnThisHost("10.0.0.1:1") || client::OnThisHost("[2001:db8::1]:1"));
  EXPECT_FALSE(client::OnThisHost("kiln.example.com:443"));
  auto server = Start();
  auto c = Connect(*server);
  Var v = dvector("v");
  auto f = c->Compile({v}, {v * 2.0});
  ASSERT_TRUE(f.ok());
  for (int64_t n : {4, 100000}) {
    const int64_t before = shm::Stats(*c).bytes_received();
    auto out = c->Execute(*f, {*Tensor::FromValues<double>(DType::kFloat64, {n},
                                                            std::vector<double>(n, 1.5))});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<double>()[n - 1], 3.0);
    EXPECT_EQ(shm::Stats(*c).bytes_received() - before, n == 4 ? 32 : 0) << n;
    // The session (and the region in it) comes with the first call through the region.
    EXPECT_EQ(shm::Stats(*c).sessions(), n == 4 ? 0u : 1u) << n;
  }
}

// What a client may get wrong about regions, through raw requests: each a named error, and the
// server keeps serving. A deleted session's regions go with it.
TEST(ServiceTest, BadRegionsAreNamedErrors) {
  auto server = Start();
  auto stub = RawStub(*server);
  auto c = Connect(*server);
  Var v = dvector("v");
  auto f = c->Compile({v}, {v * 2.0});
  ASSERT_TRUE(f.ok());
  auto session = [&] {
    grpc::ClientContext ctx;
    v1::CreateSessionResponse resp;
    EXPECT_TRUE(stub->CreateSession(&ctx, {}, &resp).ok());
    return resp.session();
  };
  const std::string mine = session(), other = session();
  shm::Object object(4096);
  const double values[4] = {1, 2, 3, 4};
  ASSERT_EQ(pwrite(object.fd, values, sizeof values, 128), static_cast<ssize_t>(sizeof values));
  auto reg = [&](const std::string& s, const std::string& name, uint64_t bytes) {
    v1::RegisterRegionRequest req;
    req.set_session(s);
    req.set_region("r");
    req.set_shm_name(name);
    req.set_byte_size(bytes);
    grpc::ClientContext ctx;
    v1::RegisterRegionResponse resp;
    return stub->RegisterRegion(&ctx, req, &resp).error_code();
  };
  EXPECT_EQ(reg(mine, "/etc-passwd-0123456789abcdef", 8), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(reg(mine, "/kiln-missing0123456789abcdef", 8), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(reg(mine, object.name, 4097), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(reg("0123456789abcdef0123456789abcdef", object.name, 8), grpc::StatusCode::NOT_FOUND);
  ASSERT_EQ(reg(mine, object.name, 4096), grpc::StatusCode::OK);

  auto call = [&](const std::string& s, uint64_t offset, uint64_t size, int64_t n,
                  uint64_t out_offset, v1::ExecuteResponse* resp) {
    v1::ExecuteRequest req;
    req.set_function_id(f->id);
    req.set_session(s);
    v1::ArgumentRef* ref = req.add_arg_refs();
    ref->set_dtype(v1::DTYPE_FLOAT64);
    ref->add_shape(n);
    ref->mutable_region()->set_region("r");
    ref->mutable_region()->set_offset(offset);
    ref->mutable_region()->set_size(size);
    req.mutable_output_region()->set_region("r");
    req.mutable_output_region()->set_offset(out_offset);
    req.mutable_output_region()->set_size(4096 - std::min<uint64_t>(out_offset, 4096));
    grpc::ClientContext ctx;
    return stub->Execute(&ctx, req, resp);
  };
  v1::ExecuteResponse resp;
  ASSERT_TRUE(call(mine, 128, 32, 4, 1024, &resp).ok());
  ASSERT_EQ(resp.output_offsets_size(), 1);
  EXPECT_EQ(resp.output_offsets(0), 1024);
  double doubled[4];
  ASSERT_EQ(pread(object.fd, doubled, sizeof doubled, 1024), static_cast<ssize_t>(sizeof doubled));
  EXPECT_EQ(doubled[3], 8.0);
  struct Case {
    std::string what;
    std::string session;
    uint64_t offset, size;
    int64_t n;
    uint64_t out_offset;
    grpc::StatusCode code;
  };
  for (const Case& k : std::vector<Case>{
           {"past the end", mine, 4090, 32, 4, 0, grpc::StatusCode::INVALID_ARGUMENT},
           {"wrapping offset", mine, ~uint64_t{0} - 8, 32, 4, 0, grpc::StatusCode::INVALID_ARGUMENT},
           {"size not the dtype's", mine, 0, 31, 4, 0, grpc::StatusCode::INVALID_ARGUMENT},
           {"negative dim", mine, 0, 0, -4, 0, grpc::StatusCode::INVALID_ARGUMENT},
           {"outputs past the end", mine, 0, 32, 4, 5000, grpc::StatusCode::INVALID_ARGUMENT},
           {"another session's region", other, 0, 32, 4, 0, grpc::StatusCode::NOT_FOUND},
           {"no session", "", 0, 32, 4, 0, grpc::StatusCode::INVALID_ARGUMENT},
       }) {
    v1::ExecuteResponse r;
    EXPECT_EQ(call(k.session, k.offset, k.size, k.n, k.out_offset, &r).error_code(), k.code)
        << k.what;
  }
  {  // bool bytes other than 0 and 1 (1.0's bytes read as bool): named, never run
    v1::ExecuteRequest req;
    req.set_function_id(f->id);
    req.set_session(mine);
    v1::ArgumentRef* ref = req.add_arg_refs();
    ref->set_dtype(v1::DTYPE_BOOL);
    ref->add_shape(8);
    ref->mutable_region()->set_region("r");
    ref->mutable_region()->set_offset(128);
    ref->mutable_region()->set_size(8);
    grpc::ClientContext ctx;
    v1::ExecuteResponse r;
    const grpc::Status s = stub->Execute(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "argument 0: bool element 6 is neither 0 nor 1");
  }
  // A region's object shrunk under the server (to nothing: every page of the mapping is past
  // its end): an error, not a crash.
  ASSERT_EQ(ftruncate(object.fd, 0), 0);
  EXPECT_EQ(call(mine, 128, 32, 4, 1024, &resp).error_code(), grpc::StatusCode::DATA_LOSS);
  EXPECT_EQ(shm::Stats(*c).shm_regions(), 1u);
  {
    grpc::ClientContext ctx;
    v1::DeleteSessionRequest req;
    req.set_session(mine);
    v1::DeleteSessionResponse r;
    ASSERT_TRUE(stub->DeleteSession(&ctx, req, &r).ok());
  }
  EXPECT_EQ(shm::Stats(*c).shm_regions(), 0u);
  auto still = c->Execute(*f, {Vec({1, 2})});
  ASSERT_TRUE(still.ok()) << still.status();
}

// A tensor put once is an argument by handle, until deleted.
TEST(ServiceTest, ResidentTensorsAreArgumentsByHandle) {
  auto server = Start();
  auto stub = RawStub(*server);
  auto c = Connect(*server);
  Var v = dvector("v");
  Var w = dvector("w");
  auto f = c->Compile({v, w}, {v * w});
  ASSERT_TRUE(f.ok());
  v1::PutTensorRequest put;
  *put.mutable_value() = ToProto(Vec({1, 2, 3}));
  v1::PutTensorResponse handle;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->PutTensor(&ctx, put, &handle).ok());
  }
  auto call = [&](v1::ExecuteResponse* resp) {
    v1::ExecuteRequest req;
    req.set_function_id(f->id);
    *req.add_args() = ToProto(Vec({10, 20, 30}));
    v1::ArgumentRef* ref = req.add_arg_refs();
    ref->set_index(0);
    ref->set_handle(handle.handle());
    grpc::ClientContext ctx;
    return stub->Execute(&ctx, req, resp);
  };
  v1::ExecuteResponse resp;
  ASSERT_TRUE(call(&resp).ok());
  EXPECT_EQ(FromProto(resp.outputs(0))->ToString(), "[10. 40. 90.]");
  {
    grpc::ClientContext ctx;
    v1::DeleteTensorRequest del;
    del.set_handle(handle.handle());
    v1::DeleteTensorResponse r;
    ASSERT_TRUE(stub->DeleteTensor(&ctx, del, &r).ok());
  }
  const grpc::Status gone = call(&resp);
  EXPECT_EQ(gone.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(absl::StrContains(gone.error_message(), "argument 0: resident tensor"))
      << gone.error_message();
}

}  // namespace
}  // namespace kiln
