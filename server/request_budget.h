// A request's budget: the memory it takes and the time it takes. The memory is core's
// MemoryBudget (core/runtime/call_limits.h), installed on the request's thread: every tensor
// buffer is charged to it before it is taken, and kiln-server's operator new counts the thread's
// other heap blocks into it (refusing a large block past the limit). Its parent is the server's
// budget across calls. The compiler polls Check() (RewriteOptions::interrupt,
// GradOptions::interrupt), so a request over its budget ends with RESOURCE_EXHAUSTED or
// DEADLINE_EXCEEDED and the server goes on.
#ifndef KILN_SERVER_REQUEST_BUDGET_H_
#define KILN_SERVER_REQUEST_BUDGET_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "core/tensor/call_limits.h"

namespace kiln::server {

// The flags' values; 0 disables a limit.
struct BudgetLimits {
  int64_t max_bytes = int64_t{1} << 30;  // --max_call_bytes
  double max_seconds = 60;               // --max_request_seconds
};

// Returns freed memory to the operating system: jemalloc's purge when the server runs on it,
// else glibc's malloc_trim.
void ReleaseFreeMemory();

// The server's budget across calls (--max_server_bytes), the parent of every call's; 0: none.
std::shared_ptr<MemoryBudget> MakeServerBudget(int64_t max_bytes);

class RequestBudget {
 public:
  // `server` may be null (no budget across calls).
  RequestBudget(std::string method, const BudgetLimits& limits,
                std::shared_ptr<MemoryBudget> server = nullptr);
  RequestBudget(const RequestBudget&) = delete;
  RequestBudget& operator=(const RequestBudget&) = delete;

  // RESOURCE_EXHAUSTED once the request has held more than max_bytes, DEADLINE_EXCEEDED after
  // max_seconds, naming the flag.
  absl::Status Check() const;
  // The most bytes the request held at once.
  int64_t peak_bytes() const { return memory_->peak(); }
  const std::shared_ptr<MemoryBudget>& memory() const { return memory_; }

 private:
  std::string method_;
  BudgetLimits limits_;
  std::chrono::steady_clock::time_point start_;
  std::shared_ptr<MemoryBudget> memory_;
};

// What a call polls: `call` (its deadline and cancellation; may be empty), then the budget.
// The clocks are read on every 32nd poll only.
std::function<absl::Status()> BudgetedInterrupt(std::function<absl::Status()> call,
                                                std::shared_ptr<const RequestBudget> budget);

// Installs `budget` on the calling thread while it lives (an inner scope on a thread that has a
// budget counts into the outer one). On the way out, a request that held much gives its freed
// memory back to the system. The budget may outlive the scope (a closure polling it, buffers
// still charged to it).
class BudgetScope {
 public:
  explicit BudgetScope(const RequestBudget& budget);
  ~BudgetScope();
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  const RequestBudget* installed_ = nullptr;
  std::unique_ptr<MemoryBudgetScope> scope_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_REQUEST_BUDGET_H_
