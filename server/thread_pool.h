// The server's own workers: compiles and executions run here, off gRPC's callback threads.
#ifndef KILN_SERVER_THREAD_POOL_H_
#define KILN_SERVER_THREAD_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::server {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  // Runs the queued tasks to the end, then joins the workers.
  ~ThreadPool();
  void Schedule(std::function<void()> task);

 private:
  void Work();
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_THREAD_POOL_H_
