// Real kiln-server processes on 127.0.0.1: 64 concurrent clients mixing every kind of call
// against a server capped well below the machine's memory (latencies and codes printed, only
// RESOURCE_EXHAUSTED allowed, memory within the cap), and a server killed with SIGKILL while it
// writes cache entries (the restarted one serves every complete entry and never a partial one).
// KILN_LOAD_SECONDS sets the load's length (default 8).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/kiln.h"
#include "kiln/v1/service.grpc.pb.h"
#include "proto/convert/graph_convert.h"
#include "proto/convert/tensor_convert.h"
#include "tests/testing/huge_graphs.h"
#include "tests/testing/paths.h"
#include "tests/testing/server_process.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;
using testing::ServerProcess;

// A distinct small graph per `seed`: a chain of `length` elementwise ops on a vector.
v1::Graph SmallGraph(int seed, int length = 20) {
  Var x = dvector("x");
  Var y = x * (1.0 + seed);
  for (int i = 0; i < length; ++i) y = i % 2 ? tanh(y) : y * 0.5 + 1.0;
  return *GraphToProto({x}, {y});
}

v1::Tensor Vector(int64_t n, double value = 1.0) {
  std::vector<double> v(n, value);
  return ToProto(*Tensor::FromValues<double>(DType::kFloat64, {n}, v));
}

grpc::Status CompileOn(v1::Kiln::Stub& stub, const v1::Graph& g, v1::CompileResponse* resp) {
  v1::CompileRequest req;
  *req.mutable_graph() = g;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return stub.Compile(&ctx, req, resp);
}

struct Tally {
  std::mutex mutex;
  std::map<std::string, std::vector<double>> ms;                        // by call
  std::map<std::pair<std::string, grpc::StatusCode>, int> codes;        // by call and code
  std::map<std::pair<std::string, grpc::StatusCode>, std::string> why;  // one message each
  void Add(const std::string& call, double millis, const grpc::Status& s) {
    std::lock_guard<std::mutex> lock(mutex);
    ms[call].push_back(millis);
    ++codes[{call, s.error_code()}];
    if (!s.ok()) why[{call, s.error_code()}] = s.error_message();
  }
};

TEST(LoadTest, SixtyFourClientsMixingEveryCall) {
#ifdef KILN_ASAN
  const int64_t cap = int64_t{4096} << 20;  // AddressSanitizer's shadow and quarantine on top
#else
  const int64_t cap = int64_t{1536} << 20;
#endif
  ServerProcess server(kiln::testing::ServerBin(),
                       {"--threads=4", "--max_concurrent_executions=16", "--cache_bytes=67108864",
                        "--max_tensor_bytes=16777216", "--max_message_bytes=33554432",
                        "--max_sessions=32", "--max_session_bytes=1048576",
                        "--max_sessions_bytes=16777216", "--max_call_bytes=268435456"});
  ASSERT_TRUE(server.ready());
  const char* env = std::getenv("KILN_LOAD_SECONDS");
  const double seconds = env != nullptr ? std::atof(env) : 8;
  auto setup = server.Stub();
  v1::CompileResponse cached, big;
  ASSERT_TRUE(CompileOn(*setup, SmallGraph(-1), &cached).ok());
  {
    Var x = dvector("x");
    ASSERT_TRUE(CompileOn(*setup, *GraphToProto({x}, {x * 2.0}), &big).ok());
  }
  const v1::Tensor eight_mb = Vector(1 << 20);
  Tally tally;
  std::atomic<int> fresh{0};
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> clients;
  for (int c = 0; c < 64; ++c) {
    clients.emplace_back([&, c] {
      auto stub = server.Stub();
      std::string session;
      for (int i = c; Clock::now() < end; ++i) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
        const auto start = Clock::now();
        grpc::Status s;
        std::string call;
        switch (i % 7) {
          case 0: {
            call = "Compile(new)";
            v1::CompileRequest req;
            *req.mutable_graph() = SmallGraph(fresh++);
            v1::CompileResponse resp;
            s = stub->Compile(&ctx, req, &resp);
            break;
          }
          case 1: {
            call = "Compile(cached)";
            v1::CompileRequest req;
            *req.mutable_graph() = SmallGraph(-1);
            v1::CompileResponse resp;
            s = stub->Compile(&ctx, req, &resp);
            break;
          }
          case 2:
          case 3: {
            const bool large = i % 7 == 3;
            call = large ? "Execute(8MB)" : "Execute(tiny)";
            v1::ExecuteRequest req;
            req.set_function_id(large ? big.function_id() : cached.function_id());
            *req.add_args() = large ? eight_mb : Vector(3);
            v1::ExecuteResponse resp;
            s = stub->Execute(&ctx, req, &resp);
            break;
          }
          case 4: {
            call = "Grad";
            v1::GradRequest req;
            Var x = dvector("x");
            *req.mutable_graph() = *GraphToProto({x}, {sum(tanh(x * (1.0 + i % 50)))});
            req.add_wrt()->set_input(0);
            v1::GradResponse resp;
            s = stub->Grad(&ctx, req, &resp);
            break;
          }
          case 5: {
            call = "CreateSession";
            if (!session.empty()) {
              grpc::ClientContext del;
              v1::DeleteSessionRequest req;
              req.set_session(session);
              v1::DeleteSessionResponse resp;
              stub->DeleteSession(&del, req, &resp).ok();
              session.clear();
            }
            v1::CreateSessionResponse resp;
            s = stub->CreateSession(&ctx, {}, &resp);
            session = resp.session();
            break;
          }
          default: {
            call = "SetShared";
            v1::SetSharedRequest req;
            req.set_session(session);
            req.set_name("w");
            *req.mutable_value() = Vector(1000 + i % 2000);
            v1::SetSharedResponse resp;
            if (session.empty()) continue;
            s = stub->SetShared(&ctx, req, &resp);
          }
        }
        tally.Add(call, std::chrono::duration<double, std::milli>(Clock::now() - start).count(), s);
      }
    });
  }
  for (std::thread& t : clients) t.join();
  std::printf("%-16s %8s %9s %9s  codes\n", "call", "calls", "p50 ms", "p99 ms");
  for (auto& [call, ms] : tally.ms) {
    std::sort(ms.begin(), ms.end());
    std::string codes;
    for (const auto& [key, n] : tally.codes) {
      if (key.first == call)
        absl::StrAppend(&codes, " ", key.second == 0 ? "OK" : absl::StrCat("code", key.second), "=",
                        n);
    }
    std::printf("%-16s %8zu %9.2f %9.2f %s\n", call.c_str(), ms.size(), ms[ms.size() / 2],
                ms[ms.size() * 99 / 100], codes.c_str());
  }
  for (const auto& [key, message] : tally.why) {
    EXPECT_EQ(key.second, grpc::StatusCode::RESOURCE_EXHAUSTED)
        << key.first << ": " << key.second << " " << message;
  }
  EXPECT_TRUE(server.alive());
  const int64_t peak = server.peak_bytes();
  std::printf("server peak memory: %.1f MB (cap %.0f MB)\n", peak / 1048576.0, cap / 1048576.0);
  EXPECT_LT(peak, cap);
}

// What a large request used is given back when it ends: the server's resident memory returns
// near its idle size (jemalloc's purge when the request ends).
TEST(FaultTest, ALargeRequestsMemoryIsGivenBack) {
#ifdef KILN_ASAN
  GTEST_SKIP() << "kiln-server runs on AddressSanitizer's allocator here, which keeps freed "
                  "memory in its quarantine; the normal build checks jemalloc's purge";
#endif
  ServerProcess server(kiln::testing::ServerBin(), {"--threads=2"});
  ASSERT_TRUE(server.ready());
  const int64_t idle = server.resident_bytes();
  const auto [x, cost] = testing::TanhChain(30000);
  v1::GradRequest req;
  *req.mutable_graph() = *GraphToProto({x}, {cost});
  req.add_wrt()->set_input(0);
  v1::GradResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  ASSERT_TRUE(server.Stub()->Grad(&ctx, req, &resp).ok());
  const int64_t used = server.peak_bytes() - idle;
  ASSERT_GT(used, int64_t{64} << 20);  // the request did take memory
  int64_t resident = server.resident_bytes();
  for (int i = 0; i < 50 && resident - idle > used / 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    resident = server.resident_bytes();
  }
  std::printf("idle %.1f MB, peak %.1f MB, after %.1f MB\n", idle / 1048576.0,
              (idle + used) / 1048576.0, resident / 1048576.0);
  EXPECT_LT(resident - idle, used / 4);
}

TEST(FaultTest, KilledWhileWritingTheCacheLosesNothingComplete) {
  const std::string dir = ::testing::TempDir() + "/kiln_kill9";
  std::filesystem::remove_all(dir);
  constexpr int kGraphs = 400;
  std::atomic<int> next{0};
  {
    ServerProcess server(kiln::testing::ServerBin(), {"--threads=2", "--cache_dir=" + dir});
    ASSERT_TRUE(server.ready());
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
      writers.emplace_back([&] {
        auto stub = server.Stub();
        for (int i; (i = next++) < kGraphs;) {
          v1::CompileResponse resp;
          if (!CompileOn(*stub, SmallGraph(i, 400), &resp).ok()) return;  // killed
        }
      });
    }
    // Killed once a few entries are on disk, while the writers go on (however slow the build).
    auto entries = [&] {
      int n = 0;
      for (const auto& f : std::filesystem::directory_iterator(dir)) {
        n += f.path().extension() == ".kfn";
      }
      return n;
    };
    const auto give_up = Clock::now() + std::chrono::seconds(120);
    while (entries() < 5 && Clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    server.Kill(SIGKILL);
    for (std::thread& t : writers) t.join();
  }
  int complete = 0, partial = 0;
  std::string torn;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    const std::string name = f.path().filename().string();
    if (name.ends_with(".kfn")) {
      ++complete;
      torn = f.path();
    } else {
      ++partial;
    }
  }
  std::printf("at the kill: %d complete entries, %d partial writes, %d compiles asked\n", complete,
              partial, std::min<int>(next, kGraphs));
  ASSERT_GT(complete, 1);
  // A torn entry, as a crash on a file system without ordered writes could leave.
  std::filesystem::resize_file(torn, std::filesystem::file_size(torn) / 2);

  ServerProcess restarted(kiln::testing::ServerBin(), {"--threads=2", "--cache_dir=" + dir});
  ASSERT_TRUE(restarted.ready());
  auto stub = restarted.Stub();
  int from_disk = 0;
  for (int i = 0; i < std::min<int>(next, kGraphs); ++i) {
    v1::CompileResponse resp;
    grpc::Status s = CompileOn(*stub, SmallGraph(i, 400), &resp);
    ASSERT_TRUE(s.ok()) << i << ": " << s.error_message();
    const bool had_entry = std::filesystem::exists(dir + "/" + resp.function_id() + ".kfn");
    from_disk += resp.source() == "disk";
    if (resp.source() != "disk") {
      EXPECT_EQ(resp.source(), "compiled");
    }
    EXPECT_TRUE(had_entry);  // every function is stored again, whole
    v1::ExecuteRequest req;
    req.set_function_id(resp.function_id());
    *req.add_args() = Vector(2, 0.5);
    v1::ExecuteResponse out;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->Execute(&ctx, req, &out).ok());
  }
  EXPECT_EQ(from_disk, complete - 1);  // every complete entry but the torn one
  EXPECT_TRUE(restarted.alive());
}

}  // namespace
}  // namespace kiln
