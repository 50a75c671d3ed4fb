#include "core/tensor/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace kiln {
namespace {

// The chunks of one call: disjoint, in order, covering [0, n) once.
std::vector<std::pair<int64_t, int64_t>> Chunks(int64_t n, int64_t min_chunk) {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  ParallelFor(n, min_chunk, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mu);
    chunks.push_back({begin, end});
  });
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

TEST(ParallelForTest, ChunksCoverTheRangeOnceAtLeastMinChunkEach) {
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{1000}, int64_t{65536}, int64_t{1000003}}) {
    SCOPED_TRACE(n);
    const auto chunks = Chunks(n, 1 << 12);
    int64_t next = 0;
    for (const auto& [begin, end] : chunks) {
      EXPECT_EQ(begin, next);
      EXPECT_LT(begin, end);
      if (chunks.size() > 1) EXPECT_GE(end - begin, (1 << 12) - 1);
      next = end;
    }
    EXPECT_EQ(next, n);
    if (n == 0) EXPECT_TRUE(chunks.empty());
  }
  // Small work runs as one chunk on the caller; large work is split (into fixed chunks, the
  // same on every call, whichever thread takes each).
  EXPECT_EQ(Chunks(1000, 1 << 12).size(), 1u);
  if (NumThreads() > 1) {
    EXPECT_GT(Chunks(1000003, 1 << 12).size(), 1u);
    EXPECT_EQ(Chunks(1000003, 1 << 12), Chunks(1000003, 1 << 12));
  }
}

// A call from inside a chunk (inline on a worker, split on the caller) finishes and covers its range.
TEST(ParallelForTest, NestedCallsFinish) {
  std::atomic<int64_t> total{0};
  ParallelFor(1 << 20, 1 << 12, [&](int64_t begin, int64_t end) {
    ParallelFor(end - begin, 1, [&](int64_t b, int64_t e) { total += e - b; });
  });
  EXPECT_EQ(total.load(), 1 << 20);
}

// Calls ParallelFor over [0, n) and returns whether every index was visited exactly once.
bool CoversOnce(int64_t n, int64_t min_chunk) {
  std::unique_ptr<std::atomic<int>[]> visits(new std::atomic<int>[n > 0 ? n : 1]());
  ParallelFor(n, min_chunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) visits[i].fetch_add(1, std::memory_order_relaxed);
  });
  for (int64_t i = 0; i < n; ++i) {
    if (visits[i].load() != 1) return false;
  }
  return true;
}

// Ranges smaller than, equal to and a little above the thread count, with chunks of one index.
TEST(ParallelForTest, SmallRangesCoverEveryIndexOnce) {
  for (int64_t n = 0; n <= 4 * NumThreads() + 3; ++n) {
    for (int64_t min_chunk : {1, 2, 3}) {
      EXPECT_TRUE(CoversOnce(n, min_chunk)) << n << " " << min_chunk;
    }
  }
}

// A call after the workers have gone to sleep (a pause far longer than their spin) still finishes.
TEST(ParallelForTest, CallsAfterIdlePausesFinish) {
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(i % 2 == 0 ? 2000 : 30));
    EXPECT_TRUE(CoversOnce(1000, 1)) << i;
  }
}

// Many callers at once (more than the pool has job slots), each making many calls of every size,
// some nested, some after an idle pause: every index of every call is visited exactly once.
TEST(ParallelForTest, ConcurrentCallersStress) {
  constexpr int kCallers = 12;
  constexpr int kCalls = 400;
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < kCallers; ++t) {
    callers.emplace_back([t, &failures] {
      for (int i = 0; i < kCalls; ++i) {
        const int64_t n = (i * 7919 + t * 104729) % (i % 10 == 0 ? 100000 : 97);
        if (!CoversOnce(n, 1 + i % 3)) failures.fetch_add(1);
        if (i % 16 == 0) {  // nested calls: inline on a worker, split on a caller
          std::atomic<int64_t> total{0};
          ParallelFor(64, 1, [&](int64_t begin, int64_t end) {
            for (int64_t j = begin; j < end; ++j) {
              ParallelFor(j, 1, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
            }
          });
          if (total.load() != 64 * 63 / 2) failures.fetch_add(1);
        }
        if (i % 50 == t % 50) std::this_thread::sleep_for(std::chrono::microseconds(300));
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace kiln
