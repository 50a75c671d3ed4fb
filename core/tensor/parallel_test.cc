#include "core/tensor/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
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

}  // namespace
}  // namespace kiln
