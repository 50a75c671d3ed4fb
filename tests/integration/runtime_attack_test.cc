// Run-time attacks against real kiln-server processes on 127.0.0.1, each with its real hostile
// input: counts that wrap int64, kernels that never end on their own (while both cores run them,
// a small call is still served; a call past its deadline gives its thread back), a call over its
// memory budget, hostile matrix and batch sizes, answers larger than a message, streams that
// send more than the function takes, and the resident size falling back after a large call.
// Figures print as ATTACK lines.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/kiln.h"
#include "core/ops/blockwise.h"
#include "core/ops/broadcast_to.h"
#include "core/ops/random.h"
#include "core/ops/slinalg.h"
#include "kiln/v1/service.grpc.pb.h"
#include "proto/convert/graph_convert.h"
#include "proto/convert/tensor_convert.h"
#include "tests/testing/paths.h"
#include "tests/testing/server_process.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;
using testing::ServerProcess;

// Bounds on times, wider under the sanitizers (a Debug build, several times slower).
#ifdef KILN_ASAN
constexpr double kSlack = 5;
#else
constexpr double kSlack = 1;
#endif

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string CompileOrDie(v1::Kiln::Stub& stub, const std::vector<Var>& inputs,
                         const std::vector<Var>& outputs) {
  v1::CompileRequest req;
  *req.mutable_graph() = *GraphToProto(inputs, outputs);
  v1::CompileResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  grpc::Status s = stub.Compile(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp.function_id();
}

grpc::Status ExecuteOn(v1::Kiln::Stub& stub, const std::string& id, const std::vector<Tensor>& args,
                       std::chrono::milliseconds deadline = std::chrono::seconds(60),
                       v1::ExecuteResponse* resp = nullptr) {
  v1::ExecuteRequest req;
  req.set_function_id(id);
  for (const Tensor& t : args) *req.add_args() = ToProto(t);
  v1::ExecuteResponse ignored;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  return stub.Execute(&ctx, req, resp != nullptr ? resp : &ignored);
}

Tensor Doubles(std::vector<double> v) {
  return *Tensor::FromValues<double>(DType::kFloat64, {int64_t(v.size())}, v);
}
Tensor Longs(std::vector<int64_t> v) {
  return *Tensor::FromValues<int64_t>(DType::kInt64, {int64_t(v.size())}, v);
}
Tensor Long(int64_t v) { return *Tensor::FromValues<int64_t>(DType::kInt64, {}, std::vector{v}); }

// A small function every test checks the server still serves.
bool Serves(v1::Kiln::Stub& stub) {
  const Var x = dvector("x");
  const std::string id = CompileOrDie(stub, {x}, {x * 2.0});
  v1::ExecuteResponse resp;
  if (!ExecuteOn(stub, id, {Doubles({1, 2})}, std::chrono::seconds(30), &resp).ok()) return false;
  return FromProto(resp.outputs(0))->data<double>()[1] == 4.0;
}

// choice(2^20, p, replace=False, size=2^19): about 2^39 steps, minutes unless interrupted.
std::pair<std::vector<Var>, Var> EndlessChoice() {
  const Var rng = tensor(DType::kUInt64, {2}, "rng");
  const Var p = dvector("p");
  auto draw = random_variable("choice", rng, {constant(int64_t{1} << 20), p, constant(false)},
                              {int64_t{1} << 19});
  EXPECT_TRUE(draw.ok()) << draw.status();
  return {{rng, p}, (*draw)[1]};
}
std::vector<Tensor> EndlessChoiceArgs() {
  const int64_t len = int64_t{1} << 20;
  std::vector<double> p(len, 1.0 / static_cast<double>(len));
  return {RngState(3), *Tensor::FromValues<double>(DType::kFloat64, {len}, p)};
}

// Prints the server's memory for an attack class when it goes: resident when it began, its peak,
// and resident once it fell back (waiting up to 5 s for it to come within 100 MB of the start).
class MemoryReport {
 public:
  MemoryReport(const ServerProcess& server, const char* name)
      : server_(server), name_(name), idle_(server.resident_bytes()) {}
  ~MemoryReport() {
    const int64_t peak = server_.peak_bytes();
    int64_t resident = server_.resident_bytes();
    const auto start = Clock::now();
    while (resident - idle_ > (int64_t{100} << 20) && MillisSince(start) < 5000) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      resident = server_.resident_bytes();
    }
    std::printf("ATTACK memory %s: resident %.0f MB at the start, peak %.0f MB, %.0f MB after\n",
                name_, idle_ / 1048576.0, peak / 1048576.0, resident / 1048576.0);
  }

 private:
  const ServerProcess& server_;
  const char* name_;
  const int64_t idle_;
};

TEST(RuntimeAttackTest, RepeatCountsThatWrapInt64AreAnErrorNotACrash) {
  ServerProcess server(kiln::testing::ServerBin(), {"--threads=2"});
  ASSERT_TRUE(server.ready());
  MemoryReport report(server, "repeat_wrap");
  auto stub = server.Stub();
  const Var x = dvector("x"), counts = lvector("counts");
  const std::string id = CompileOrDie(*stub, {x, counts}, {repeat(x, counts, 0)});
  const int64_t max = std::numeric_limits<int64_t>::max();
  for (const std::vector<int64_t>& c : std::vector<std::vector<int64_t>>{
           {(int64_t{1} << 46) + 1, max, 5}, {max, max, max}, {1, max - 1, 2}}) {
    grpc::Status s = ExecuteOn(*stub, id, {Doubles({1, 2, 3}), Longs(c)});
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED)
        << s.error_message();
    std::printf("ATTACK repeat_wrap %s: %s\n", absl::StrJoin(c, ",").c_str(),
                s.error_message().c_str());
  }
  // The same counts as constants: constant folding runs the kernel at compile time.
  v1::CompileRequest req;
  *req.mutable_graph() = *GraphToProto(
      {},
      {repeat(constant(Doubles({1, 2, 3})), constant(Longs({(int64_t{1} << 46) + 1, max, 5})), 0)});
  v1::CompileResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  grpc::Status compiled = stub->Compile(&ctx, req, &resp);
  std::printf("ATTACK repeat_wrap constant compile: %s\n",
              compiled.ok() ? "compiled (left to run time)" : compiled.error_message().c_str());
  EXPECT_TRUE(server.alive());
  EXPECT_TRUE(Serves(*stub));
}

TEST(RuntimeAttackTest, RepeatOfAnEmptyRowFourBillionTimesFoldsAtOnce) {
  ServerProcess server(kiln::testing::ServerBin(), {"--threads=2"});
  ASSERT_TRUE(server.ready());
  MemoryReport report(server, "repeat_empty_rows");
  auto stub = server.Stub();
  const Tensor empty_row = Tensor::Empty(DType::kFloat64, {1, 0});
  v1::CompileRequest req;
  *req.mutable_graph() =
      *GraphToProto({}, {repeat(constant(empty_row), constant(int64_t{1} << 32), 0)});
  v1::CompileResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  const auto start = Clock::now();
  grpc::Status s = stub->Compile(&ctx, req, &resp);
  std::printf("ATTACK repeat_empty_rows compile %.1f ms: %s\n", MillisSince(start),
              s.ok() ? "ok" : s.error_message().c_str());
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_LT(MillisSince(start), 2000 * kSlack);
  EXPECT_TRUE(Serves(*stub));
}

TEST(RuntimeAttackTest, SmallCallsAreServedWhileBothCoresRunHostileCalls) {
  ServerProcess server(kiln::testing::ServerBin(), {"--threads=2"});
  ASSERT_TRUE(server.ready());
  MemoryReport report(server, "hostile_x2");
  auto stub = server.Stub();
  const auto [inputs, draw] = EndlessChoice();
  const std::string hostile = CompileOrDie(*stub, inputs, {draw});
  const Var x = dvector("x");
  const std::string small = CompileOrDie(*stub, {x}, {x * 2.0});
  ASSERT_TRUE(ExecuteOn(*stub, small, {Doubles({1})}).ok());
  std::vector<std::thread> attackers;
  std::vector<grpc::Status> results(2);
  for (int i = 0; i < 2; ++i) {
    attackers.emplace_back([&, i] {
      auto own = server.Stub();
      results[i] = ExecuteOn(*own, hostile, EndlessChoiceArgs(), std::chrono::milliseconds(4000));
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // both cores busy by now
  double worst = 0;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    grpc::Status s = ExecuteOn(*stub, small, {Doubles({1, 2, 3})}, std::chrono::seconds(10));
    EXPECT_TRUE(s.ok()) << s.error_message();
    worst = std::max(worst, MillisSince(start));
  }
  for (std::thread& t : attackers) t.join();
  for (const grpc::Status& s : results) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  }
  std::printf("ATTACK hostile_x2 small call worst of 5: %.1f ms\n", worst);
  EXPECT_LT(worst, 1000 * kSlack);
}

TEST(RuntimeAttackTest, ACallPastItsDeadlineGivesItsThreadBack) {
  // One worker that may not grow: the next call runs only once the hostile one let go.
  ServerProcess server(kiln::testing::ServerBin(), {"--threads=1", "--max_threads=1"});
  ASSERT_TRUE(server.ready());
  MemoryReport report(server, "deadline");
  auto stub = server.Stub();
  const auto [inputs, draw] = EndlessChoice();
  const std::string hostile = CompileOrDie(*stub, inputs, {draw});
  for (int round = 0; round < 3; ++round) {
    const auto start = Clock::now();
    grpc::Status s = ExecuteOn(*stub, hostile, EndlessChoiceArgs(), std::chrono::milliseconds(300));
    EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
    // The first call goes to the pool (never inline), so it waits for the worker.
    const Var y = dvector("y");
    const std::string fresh = CompileOrDie(*stub, {y}, {y * static_cast<double>(round + 3)});
    ASSERT_TRUE(ExecuteOn(*stub, fresh, {Doubles({1})}, std::chrono::seconds(10)).ok());
    const double released = MillisSince(start) - 300;
    std::printf("ATTACK deadline 300 ms: the worker was free %.1f ms after it\n", released);
    EXPECT_LT(released, (100 + 100) * kSlack);  // the goal, plus a compile and a call
  }
  EXPECT_TRUE(Serves(*stub));
}

TEST(RuntimeAttackTest, ACallOverItsMemoryBudgetFailsNamingIt) {
  ServerProcess server(kiln::testing::ServerBin(), {"--threads=2", "--max_call_bytes=268435456"});
  ASSERT_TRUE(server.ready());
  MemoryReport report(server, "three_draws");
  auto stub = server.Stub();
  // Three draws of 100 MB, all live at once for the sum.
  const Var rng = tensor(DType::kUInt64, {2}, "rng");
  const int64_t n = 12'500'000;
  Var total;
  Var state = rng;
  for (int i = 0; i < 3; ++i) {
    auto d = random_variable("normal", state, {constant(0.0), constant(1.0)}, {n});
    ASSERT_TRUE(d.ok()) << d.status();
    state = (*d)[0];
    total = i == 0 ? (*d)[1] : total + (*d)[1];
  }
  const std::string id = CompileOrDie(*stub, {rng}, {sum(total)});
  const auto start = Clock::now();
  grpc::Status s = ExecuteOn(*stub, id, {RngState(1)});
  std::printf("ATTACK three_draws_300MB %.1f ms: %s\n", MillisSince(start),
              s.error_message().c_str());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_call_bytes")) << s.error_message();
  EXPECT_TRUE(Serves(*stub));
}

// A hostile size from a few bytes: one element broadcast to a 10^6-square matrix (8 TB) or to a
// batch of 2^40 2 x 2 matrices (32 TiB), or to a 10^4-square one (800 MB) past the call's
// budget, for a Cholesky (plain or Blockwise): refused at once, before anything is allocated
// (broadcast_to's copy is the first to ask), with its size in bytes or the budget named.
TEST(RuntimeAttackTest, AHostileMatrixOrBatchIsRefusedBeforeItIsAllocated) {
  ServerProcess server(kiln::testing::ServerBin(), {"--threads=2", "--max_call_bytes=268435456"});
  ASSERT_TRUE(server.ready());
  auto stub = server.Stub();
  const Var x = dscalar("x"), n = lscalar("n");
  const std::string square = CompileOrDie(*stub, {x, n}, {cholesky(broadcast_to(x, {n, n}))});
  const Var batched = blockwise(cholesky(dmatrix())->owner()->op_ptr(), "(m,m)->(m,m)",
                                {broadcast_to(x, {n, constant(int64_t{2}), constant(int64_t{2})})});
  const std::string batch = CompileOrDie(*stub, {x, n}, {batched});
  const Tensor four = *Tensor::FromValues<double>(DType::kFloat64, {}, std::vector{4.0});
  for (const auto& [id, size, words] : std::vector<std::tuple<std::string, int64_t, std::string>>{
           {square, 1000000, "8000000000000 bytes"},
           {square, 10000, "--max_call_bytes"},
           {batch, int64_t{1} << 40, "35184372088832 bytes"}}) {
    const auto start = Clock::now();
    grpc::Status s = ExecuteOn(*stub, id, {four, Long(size)});
    const double ms = MillisSince(start);
    std::printf("ATTACK hostile_linalg %lld %.1f ms: %s\n", static_cast<long long>(size), ms,
                s.error_message().c_str());
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_TRUE(absl::StrContains(s.error_message(), words)) << s.error_message();
    EXPECT_LT(ms, 1000 * kSlack);
  }
  EXPECT_TRUE(Serves(*stub));
}

TEST(RuntimeAttackTest, AnAnswerLargerThanAMessageIsRefusedBeforeItIsCopied) {
  ServerProcess server(kiln::testing::ServerBin(), {"--threads=2", "--max_message_bytes=16777216"});
  ASSERT_TRUE(server.ready());
  MemoryReport report(server, "large_answer");
  auto stub = server.Stub();
  const Var n = lscalar("n");
  const std::string id = CompileOrDie(*stub, {n}, {alloc(constant(1.5), {n})});
  grpc::Status s = ExecuteOn(*stub, id, {Long(10'000'000)});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_message_bytes")) << s.error_message();
  v1::ExecuteResponse resp;
  ASSERT_TRUE(ExecuteOn(*stub, id, {Long(1000)}, std::chrono::seconds(10), &resp).ok());
  EXPECT_EQ(FromProto(resp.outputs(0))->size(), 1000);
}

TEST(RuntimeAttackTest, AStreamIsCheckedAgainstTheSignatureAsChunksArrive) {
  ServerProcess server(kiln::testing::ServerBin(), {"--threads=2", "--max_call_bytes=268435456"});
  ASSERT_TRUE(server.ready());
  MemoryReport report(server, "stream");
  auto stub = server.Stub();
  const Var x = dvector("x");
  const std::string id = CompileOrDie(*stub, {x}, {x * 2.0});
  auto stream_with = [&](std::vector<v1::TensorChunk> chunks) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto stream = stub->ExecuteStream(&ctx);
    v1::ExecuteStreamRequest first;
    first.mutable_request()->set_function_id(id);
    stream->Write(first);
    for (v1::TensorChunk& c : chunks) {
      v1::ExecuteStreamRequest msg;
      *msg.mutable_chunk() = std::move(c);
      if (!stream->Write(msg)) break;  // the server has refused already
    }
    stream->WritesDone();
    v1::TensorChunk out;
    while (stream->Read(&out)) {
    }
    return stream->Finish();
  };
  auto chunk = [](uint32_t index, std::vector<int64_t> shape, int64_t bytes) {
    v1::TensorChunk c;
    c.set_index(index);
    c.set_dtype(v1::DTYPE_FLOAT64);
    for (int64_t d : shape) c.add_shape(d);
    c.set_data(std::string(bytes, '\0'));
    return c;
  };
  // Four arguments of 1 MiB for a function of one.
  std::vector<v1::TensorChunk> four;
  for (uint32_t i = 0; i < 4; ++i) four.push_back(chunk(i, {131072}, 1 << 20));
  grpc::Status s = stream_with(std::move(four));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "takes 1 arguments but argument 1 arrived"))
      << s.error_message();
  // One argument declaring 512 MB, past the call's budget, refused on its first chunk.
  s = stream_with({chunk(0, {int64_t{64} << 20}, 1024)});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "--max_call_bytes")) << s.error_message();
  // More bytes than the declared shape holds.
  s = stream_with({chunk(0, {2}, 24)});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(Serves(*stub));
}

TEST(RuntimeAttackTest, ResidentSizeFallsBackAfterALargeCall) {
#ifdef KILN_ASAN
  GTEST_SKIP() << "AddressSanitizer's allocator keeps freed memory in its quarantine; "
                  "call_limits_test checks the buffer cache's own accounting";
#endif
  ServerProcess server(kiln::testing::ServerBin(), {"--threads=2"});
  ASSERT_TRUE(server.ready());
  auto stub = server.Stub();
  auto drawn_sum = [&](int64_t n) {
    const Var rng = tensor(DType::kUInt64, {2}, "rng");
    auto d = random_variable("normal", rng, {constant(0.0), constant(1.0)}, {n});
    EXPECT_TRUE(d.ok()) << d.status();
    return CompileOrDie(*stub, {rng}, {sum(exp((*d)[1]) + (*d)[1])});
  };
  const std::string small = drawn_sum(1000);
  ASSERT_TRUE(ExecuteOn(*stub, small, {RngState(1)}).ok());
  // Buffers of 100 MB stay in the freed-buffer cache (256 MB here) until the server is idle;
  // those of 400 MB do not fit it and go back at once.
  const int64_t idle = server.resident_bytes();
  for (const int64_t n : {int64_t{12'500'000}, int64_t{50'000'000}}) {
    const std::string large = drawn_sum(n);
    int64_t peak = idle;
    std::atomic<bool> running{true};
    std::thread sampler([&] {
      while (running) {
        peak = std::max(peak, server.resident_bytes());
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
    ASSERT_TRUE(ExecuteOn(*stub, large, {RngState(1)}).ok());
    running = false;
    sampler.join();
    int64_t resident = server.resident_bytes();
    const auto start = Clock::now();
    // Back to idle, within the noise of a few pages (the bound is 100 MB).
    while (resident - idle > (int64_t{32} << 20) && MillisSince(start) < 10000) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      resident = server.resident_bytes();
    }
    std::printf(
        "ATTACK large_call %.0f MB buffers: idle %.0f MB, peak %.0f MB, %.0f MB %.1f s "
        "after the call\n",
        n * 8 / 1e6, idle / 1048576.0, peak / 1048576.0, resident / 1048576.0,
        MillisSince(start) / 1000);
    EXPECT_GT(peak - idle, n * 8);  // the call did take the memory
    EXPECT_LT(resident - idle, int64_t{32} << 20);
  }
}

}  // namespace
}  // namespace kiln
