// A request's budget: the memory its thread allocates and the time it takes. kiln-server's
// operator new and delete count each thread's bytes while a budget is installed on it; the
// compiler polls Check() (RewriteOptions::interrupt, GradOptions::interrupt), so a request over
// its budget ends with RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED and the server goes on.
#ifndef KILN_SERVER_REQUEST_BUDGET_H_
#define KILN_SERVER_REQUEST_BUDGET_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace kiln::server {

// The flags' values; 0 disables a limit.
struct BudgetLimits {
  int64_t max_bytes = int64_t{1} << 30;  // --max_request_memory_bytes
  double max_seconds = 60;               // --max_request_seconds
};

// Returns freed memory to the operating system: jemalloc's purge when the server runs on it,
// else glibc's malloc_trim.
void ReleaseFreeMemory();

class RequestBudget {
 public:
  RequestBudget(std::string method, const BudgetLimits& limits);
  RequestBudget(const RequestBudget&) = delete;
  RequestBudget& operator=(const RequestBudget&) = delete;

  // RESOURCE_EXHAUSTED once the thread has held more than max_bytes (net of what it freed)
  // since the budget began, DEADLINE_EXCEEDED after max_seconds, naming the flag.
  absl::Status Check() const;
  // The most bytes the thread held at once, net of what it freed.
  int64_t peak_bytes() const { return peak_; }

  // Called by operator new and delete with the usable size of each block.
  void Add(int64_t bytes) {
    used_ += bytes;
    if (used_ > peak_) peak_ = used_;
  }
  void Sub(int64_t bytes) { used_ -= bytes; }

 private:
  std::string method_;
  BudgetLimits limits_;
  std::chrono::steady_clock::time_point start_;
  int64_t used_ = 0, peak_ = 0;
};

// Counts the calling thread's allocations against `budget` while it lives (one budget per thread
// at a time: an inner scope counts nothing). On the way out, a request that held much gives its
// freed memory back to the system. The budget may outlive the scope (a closure polling it).
class BudgetScope {
 public:
  explicit BudgetScope(RequestBudget& budget);
  ~BudgetScope();
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  RequestBudget* installed_ = nullptr;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_REQUEST_BUDGET_H_
