// The server's own workers: compiles and executions run here, off gRPC's callback threads.
#ifndef KILN_SERVER_THREAD_POOL_H_
#define KILN_SERVER_THREAD_POOL_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
namespace kiln::server {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  // Runs the queued tasks to the end, then joins the workers.
  ~ThreadPool();
  void Schedule(std::function<void()> task);

 private:
  void Work();
  absl::Mutex mutex_;
  absl::CondVar ready_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mutex_);
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_THREAD_POOL_H_
