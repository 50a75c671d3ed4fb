// The function cache: a caller asking for an id being compiled does not wait on its thread,
// and is answered from that compile.
#include "server/function_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "core/kiln.h"
#include "proto/convert/graph_convert.h"

namespace kiln::server {
namespace {

CompileJob SlowJob() {
  Var x = dvector("x");
  Var y = x;
  for (int i = 0; i < 10000; ++i) y = i % 2 ? exp(y) * 0.5 : log1p(y) + y;
  v1::CompileRequest request;
  *request.mutable_graph() = *GraphToProto({x}, {y});
  auto job = PrepareCompile(request, GraphLimits{});
  EXPECT_TRUE(job.ok()) << job.status();
  return *std::move(job);
}

TEST(FunctionCacheTest, WaitersReturnAtOnceAndAreAnsweredByTheCompileInFlight) {
  FunctionCache cache(int64_t{1} << 30, std::nullopt);
  const CompileJob job = SlowJob();
  std::atomic<bool> first_done{false}, second_done{false};
  std::atomic<int> second_source{-1};
  std::thread compiling([&] {
    cache.GetOrCompile(job, [&](FunctionCache::Result r, CacheSource) {
      EXPECT_TRUE(r.ok()) << r.status();
      first_done = true;
    });
  });
  // The first call registers the id as in flight at once, then compiles for about 0.3 s.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto start = std::chrono::steady_clock::now();
  cache.GetOrCompile(job, [&](FunctionCache::Result r, CacheSource source) {
    EXPECT_TRUE(r.ok()) << r.status();
    second_source = static_cast<int>(source);
    second_done = true;
  });
  const double returned_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(first_done) << "the compile ended before the second call: make the graph bigger";
  EXPECT_FALSE(second_done);  // not answered yet: it will be by the compile in flight
  EXPECT_LT(returned_ms, 5.0);
  EXPECT_EQ(cache.stats().waiting, 1u);
  compiling.join();
  EXPECT_TRUE(second_done);
  EXPECT_EQ(second_source, static_cast<int>(CacheSource::kMemory));
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.memory_hits, 1u);
  EXPECT_EQ(stats.waiting, 0u);
}

// Profiled and DebugMode functions stay in the replica's memory; a NaN-guarded one is stored
// with its check and loads with it.
TEST(FunctionCacheTest, LocalOnlyFunctionsAreNotStored) {
  const std::string dir = ::testing::TempDir() + "/kiln-local-only";
  std::filesystem::remove_all(dir);
  Var x = dvector("x");
  auto job = [&](v1::Check check, bool profile) {
    v1::CompileRequest request;
    *request.mutable_graph() = *GraphToProto({x}, {log(x)});
    request.set_check(check);
    request.set_profile(profile);
    absl::StatusOr<CompileJob> j = PrepareCompile(request, GraphLimits{});
    EXPECT_TRUE(j.ok()) << j.status();
    return *std::move(j);
  };
  const CompileJob debug = job(v1::CHECK_DEBUG, false), profiled = job(v1::CHECK_NONE, true),
                   guarded = job(v1::CHECK_NAN_GUARD, false);
  EXPECT_TRUE(LocalOnly(debug) && LocalOnly(profiled) && !LocalOnly(guarded));
  EXPECT_NE(debug.id, guarded.id);
  EXPECT_NE(profiled.id, guarded.id);
  {
    FunctionCache cache(int64_t{1} << 30, *DiskCache::Open(dir, int64_t{1} << 30));
    for (const CompileJob* j : {&debug, &profiled, &guarded}) {
      cache.GetOrCompile(*j, [](FunctionCache::Result r, CacheSource) {
        EXPECT_TRUE(r.ok()) << r.status();
      });
    }
  }
  FunctionCache restarted(int64_t{1} << 30, *DiskCache::Open(dir, int64_t{1} << 30));
  EXPECT_TRUE(absl::IsNotFound(restarted.Find(debug.id).status()));
  EXPECT_TRUE(absl::IsNotFound(restarted.Find(profiled.id).status()));
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> f = restarted.Find(guarded.id);
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor minus_one = *Tensor::Of<double>(DType::kFloat64, {1}, {-1.0});
  const absl::Status s = (*f)->function({minus_one}).status();
  EXPECT_EQ(s.message(), "NanGuardMode: output 0 of Elemwise{log,no_inplace}(x) holds nan at flat index 0");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln::server
