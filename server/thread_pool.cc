#include "server/thread_pool.h"

#include <algorithm>
#include <exception>

#include "server/log.h"

namespace kiln::server {

ThreadPool::ThreadPool(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) workers_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::Schedule(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  ready_.notify_one();
}

void ThreadPool::Work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
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
