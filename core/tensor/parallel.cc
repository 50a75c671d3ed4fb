#include "core/tensor/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/ThreadPool>

namespace kiln {
namespace {

int ConfiguredThreads() {
  if (const char* env = std::getenv("KILN_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// Chunks per thread: enough that a slowed thread's share is taken over by the others.
constexpr int64_t kChunksPerThread = 8;

// The pool's workers; the calling thread runs one chunk itself, so the pool has one fewer.
Eigen::ThreadPool* Pool() {
  static Eigen::ThreadPool* pool =
      NumThreads() > 1 ? new Eigen::ThreadPool(NumThreads() - 1) : nullptr;
  return pool;
}

}  // namespace

int NumThreads() {
  static const int n = ConfiguredThreads();
  return n;
}

void ParallelFor(int64_t n, int64_t min_chunk, absl::FunctionRef<void(int64_t, int64_t)> fn) {
  const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk));
  const int threads = static_cast<int>(std::min<int64_t>(NumThreads(), max_chunks));
  Eigen::ThreadPool* pool = Pool();
  if (threads <= 1 || pool == nullptr || pool->CurrentThreadId() >= 0) {
    if (n > 0) fn(0, n);  // small work, one core, or already on a worker: run inline
    return;
  }
  // Fixed chunks, handed out in order to whichever thread is free: a core slowed by other work
  // (a shared machine's neighbours) takes fewer of them instead of holding up the call.
  const int64_t chunks = std::min<int64_t>(max_chunks, int64_t{threads} * kChunksPerThread);
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) {
      fn(n * c / chunks, n * (c + 1) / chunks);
    }
  };
  Eigen::Barrier barrier(threads - 1);
  for (int t = 1; t < threads; ++t) {
    pool->Schedule([&] {
      work();
      barrier.Notify();
    });
  }
  work();
  barrier.Wait();
}

}  // namespace kiln
