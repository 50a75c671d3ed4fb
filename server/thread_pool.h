// The server's own workers: compiles and executions run here, off gRPC's callback threads. Calls
// that run long cannot hold back those behind them: a task that finds no idle worker while some
// workers have been on one task for over 100 ms starts one more worker (up to a bound), so that
// `threads` workers stay for everything else, and the operating system shares the cores.
#ifndef KILN_SERVER_THREAD_POOL_H_
#define KILN_SERVER_THREAD_POOL_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
namespace kiln::server {

class ThreadPool {
 public:
  // `threads` workers from the start, and more while long tasks hold some, up to `max_threads`
  // (at least `threads`); workers started so stay for later.
  explicit ThreadPool(int threads, int max_threads = 0);
  // Runs the queued tasks to the end, then joins the workers.
  ~ThreadPool();
  void Schedule(std::function<void()> task);
  // Workers started so far.
  int threads();

 private:
  void StartWorker() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Workers whose task has run longer than kLongTask.
  int LongRunning() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Starts a worker when tasks wait, none is idle and long tasks leave fewer than `threads` for
  // the rest.
  void MaybeGrow() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Every 50 ms while tasks wait: MaybeGrow (the tasks ahead may have become long since).
  void Monitor();
  void Work(int slot);
  absl::Mutex mutex_;
  absl::CondVar ready_, queued_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  int idle_ ABSL_GUARDED_BY(mutex_) = 0;  // workers waiting for a task
  const int max_threads_, min_threads_;
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(mutex_);
  // When each worker's task began (steady clock, ns); 0 while it waits.
  std::unique_ptr<std::atomic<int64_t>[]> task_start_;
  std::thread monitor_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_THREAD_POOL_H_
