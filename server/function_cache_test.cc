// The function cache: a caller asking for an id being compiled does not wait on its thread,
// and is answered from that compile; a lookup walks the tiers in order and fills those above.
#include "server/function_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
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

// A tier of functions in a map that counts its lookups.
class MapTier final : public FunctionTier {
 public:
  explicit MapTier(CacheSource source) : source_(source) {}
  CacheSource source() const override { return source_; }
  std::shared_ptr<const CompiledFunction> Find(const std::string& id) override {
    ++finds;
    auto it = functions.find(id);
    return it == functions.end() ? nullptr : it->second;
  }
  absl::Status Store(const std::shared_ptr<const CompiledFunction>& f) override {
    functions[f->id] = f;
    return absl::OkStatus();
  }

  std::map<std::string, std::shared_ptr<const CompiledFunction>> functions;
  int finds = 0;

 private:
  const CacheSource source_;
};

CompileJob ScaleJob(double factor) {
  Var x = dvector("x");
  v1::CompileRequest request;
  *request.mutable_graph() = *GraphToProto({x}, {exp(x) * factor});
  absl::StatusOr<CompileJob> job = PrepareCompile(request, GraphLimits{});
  EXPECT_TRUE(job.ok()) << job.status();
  return *std::move(job);
}

std::shared_ptr<const CompiledFunction> Compiled(const CompileJob& job) {
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> f = Compile(job);
  EXPECT_TRUE(f.ok()) << f.status();
  return *std::move(f);
}

// A lookup goes down the tiers in order: the first holding the job's function (same canonical
// form) answers and names itself as the source, the tiers above it are filled, those below are
// not read; when none holds it, the compile is stored in every tier.
TEST(FunctionCacheTest, ALookupWalksTheTiersInOrderAndFillsThoseAbove) {
  auto shared_tier = std::make_unique<MapTier>(CacheSource::kShared);
  auto disk_tier = std::make_unique<MapTier>(CacheSource::kDisk);
  MapTier& shared = *shared_tier;
  MapTier& disk = *disk_tier;
  std::vector<std::unique_ptr<FunctionTier>> lower;
  lower.push_back(std::move(shared_tier));
  lower.push_back(std::move(disk_tier));
  FunctionCache cache(int64_t{1} << 30, std::move(lower));
  auto lookup = [&](const CompileJob& job) {
    std::pair<FunctionCache::Result, CacheSource> out{nullptr, CacheSource::kCompiled};
    cache.GetOrCompile(job, [&](FunctionCache::Result r, CacheSource source) {
      out = {std::move(r), source};
    });
    EXPECT_TRUE(out.first.ok()) << out.first.status();
    return out;
  };

  // On disk; the shared tier holds another graph under the id (a collision): skipped, replaced.
  const CompileJob on_disk = ScaleJob(2.0);
  const std::shared_ptr<const CompiledFunction> f = Compiled(on_disk);
  shared.functions[on_disk.id] = Compiled(ScaleJob(3.0));
  disk.functions[on_disk.id] = f;
  auto [found, source] = lookup(on_disk);
  EXPECT_EQ(source, CacheSource::kDisk);
  EXPECT_EQ(*found, f);
  EXPECT_EQ(shared.functions[on_disk.id], f);
  EXPECT_EQ(cache.Peek(on_disk.id), f);
  // Then from memory, no tier below it read.
  EXPECT_EQ(lookup(on_disk).second, CacheSource::kMemory);
  EXPECT_EQ(shared.finds, 1);
  EXPECT_EQ(disk.finds, 1);

  // In the shared tier: memory is filled, the disk below neither read nor written.
  const CompileJob in_shared = ScaleJob(4.0);
  const std::shared_ptr<const CompiledFunction> g = Compiled(in_shared);
  shared.functions[in_shared.id] = g;
  EXPECT_EQ(lookup(in_shared).second, CacheSource::kShared);
  EXPECT_EQ(cache.Peek(in_shared.id), g);
  EXPECT_EQ(disk.finds, 1);
  EXPECT_EQ(disk.functions.count(in_shared.id), 0u);

  // In none: compiled, then stored in every tier.
  const CompileJob nowhere = ScaleJob(5.0);
  auto [compiled, compiled_source] = lookup(nowhere);
  EXPECT_EQ(compiled_source, CacheSource::kCompiled);
  EXPECT_EQ(shared.functions[nowhere.id], *compiled);
  EXPECT_EQ(disk.functions[nowhere.id], *compiled);
  EXPECT_EQ(cache.Peek(nowhere.id), *compiled);

  // Execute's lookup by id walks the same tiers.
  disk.functions[ScaleJob(6.0).id] = Compiled(ScaleJob(6.0));
  EXPECT_TRUE(cache.Find(ScaleJob(6.0).id).ok());
  EXPECT_NE(cache.Peek(ScaleJob(6.0).id), nullptr);
  EXPECT_TRUE(absl::IsNotFound(cache.Find(ScaleJob(7.0).id).status()));

  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.disk_hits, 2u);
  EXPECT_EQ(stats.shared_hits, 1u);
  EXPECT_EQ(stats.memory_hits, 1u);
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(CacheSourceName(CacheSource::kShared), std::string("redis"));
}

}  // namespace
}  // namespace kiln::server
