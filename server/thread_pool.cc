#include "server/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include "absl/synchronization/mutex.h"
#include "server/log.h"

namespace kiln::server {

namespace {

// A task running longer than this holds its worker for a long call.
constexpr int64_t kLongTaskNs = 100'000'000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ThreadPool::ThreadPool(int threads, int max_threads)
    : max_threads_(std::max({1, threads, max_threads})),
      min_threads_(std::max(1, threads)),
      task_start_(new std::atomic<int64_t>[max_threads_]()) {
  absl::MutexLock lock(&mutex_);
  for (int i = 0; i < std::max(1, threads); ++i) StartWorker();
  monitor_ = std::thread([this] { Monitor(); });
}

ThreadPool::~ThreadPool() {
  std::vector<std::thread> workers;
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
    workers = std::move(workers_);  // none starts once stopping
  }
  ready_.SignalAll();
  queued_.SignalAll();
  monitor_.join();
  for (std::thread& t : workers) t.join();
}

void ThreadPool::StartWorker() {
  ++idle_;  // counted idle from the start, so that a burst does not start a worker per task
  const int slot = static_cast<int>(workers_.size());
  workers_.emplace_back([this, slot] { Work(slot); });
}

int ThreadPool::LongRunning() const {
  const int64_t now = NowNs();
  int n = 0;
  for (size_t i = 0; i < workers_.size(); ++i) {
    const int64_t start = task_start_[i].load(std::memory_order_relaxed);
    n += start != 0 && now - start > kLongTaskNs;
  }
  return n;
}

void ThreadPool::MaybeGrow() {
  // No worker free, and long calls hold some: one more, so that `threads` workers stay for the
  // others (a burst of short calls queues as before).
  const int workers = static_cast<int>(workers_.size());
  if (idle_ < static_cast<int>(tasks_.size()) && !stopping_ && workers < max_threads_ &&
      workers - LongRunning() < min_threads_) {
    StartWorker();
  }
}

void ThreadPool::Schedule(std::function<void()> task) {
  {
    absl::MutexLock lock(&mutex_);
    tasks_.push_back(std::move(task));
    MaybeGrow();
  }
  ready_.Signal();
  queued_.Signal();
}

void ThreadPool::Monitor() {
  absl::MutexLock lock(&mutex_);
  while (!stopping_) {
    while (!stopping_ && tasks_.empty()) queued_.Wait(&mutex_);
    queued_.WaitWithTimeout(&mutex_, absl::Milliseconds(50));
    const int before = static_cast<int>(workers_.size());
    MaybeGrow();
    if (static_cast<int>(workers_.size()) > before) ready_.Signal();
  }
}

int ThreadPool::threads() {
  absl::MutexLock lock(&mutex_);
  return static_cast<int>(workers_.size());
}

void ThreadPool::Work(int slot) {
  absl::MutexLock lock(&mutex_);
  for (;;) {
    while (!stopping_ && tasks_.empty()) ready_.Wait(&mutex_);
    if (tasks_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    --idle_;
    task_start_[slot].store(NowNs(), std::memory_order_relaxed);
    mutex_.Unlock();
    // A task answers its own call with any error; what escapes it is logged, never fatal.
    try {
      task();
    } catch (const std::exception& e) {
      Log(LogLevel::kError, "a task threw", {{"error", e.what()}});
    } catch (...) {
      Log(LogLevel::kError, "a task threw", {{"error", "unknown exception"}});
    }
    task = nullptr;  // what it holds goes before the lock is taken
    task_start_[slot].store(0, std::memory_order_relaxed);
    mutex_.Lock();
    ++idle_;
  }
}

}  // namespace kiln::server
