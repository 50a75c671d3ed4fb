#include "core/runtime/parallel.h"

#include <algorithm>
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
  const int chunks = static_cast<int>(std::min<int64_t>(NumThreads(), max_chunks));
  Eigen::ThreadPool* pool = Pool();
  if (chunks <= 1 || pool == nullptr || pool->CurrentThreadId() >= 0) {
    if (n > 0) fn(0, n);  // small work, one core, or already on a worker: run inline
    return;
  }
  Eigen::Barrier barrier(chunks - 1);
  auto bound = [&](int c) { return n * c / chunks; };
  for (int c = 1; c < chunks; ++c) {
    pool->Schedule([&, c] {
      fn(bound(c), bound(c + 1));
      barrier.Notify();
    });
  }
  fn(0, bound(1));
  barrier.Wait();
}

}  // namespace kiln
