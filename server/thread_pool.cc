#include "server/thread_pool.h"

#include <algorithm>
#include <exception>

#include "absl/synchronization/mutex.h"
#include "server/log.h"

namespace kiln::server {

ThreadPool::ThreadPool(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) workers_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  ready_.SignalAll();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::Schedule(std::function<void()> task) {
  {
    absl::MutexLock lock(&mutex_);
    tasks_.push_back(std::move(task));
  }
  ready_.Signal();
}

void ThreadPool::Work() {
  for (;;) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mutex_);
      while (!stopping_ && tasks_.empty()) ready_.Wait(&mutex_);
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    // A task answers its own call with any error; what escapes it is logged, never fatal.
    try {
      task();
    } catch (const std::exception& e) {
      Log(LogLevel::kError, "a task threw", {{"error", e.what()}});
    } catch (...) {
      Log(LogLevel::kError, "a task threw", {{"error", "unknown exception"}});
    }
  }
}

}  // namespace kiln::server
