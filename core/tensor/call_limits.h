// What bounds the call running on a thread: its interrupt (a deadline, a cancellation), which long
// kernels poll at a fixed work interval, and its memory budget, which every tensor buffer
// allocated on the thread is charged to before it is taken.
#ifndef KILN_CORE_TENSOR_CALL_LIMITS_H_
#define KILN_CORE_TENSOR_CALL_LIMITS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kiln {

// Bytes a call (or the whole server) may hold, charged before memory is taken. Thread-safe.
class MemoryBudget {
 public:
  // `what` names the budget in errors ("the call's memory budget (--max_call_bytes)"), a literal
  // (it is not copied: a budget per call costs no string); a limit of 0 means none. Charges go to
  // `parent` too (the server's budget across calls), when given.
  MemoryBudget(absl::string_view what, int64_t limit,
               std::shared_ptr<MemoryBudget> parent = nullptr);

  // Charges `bytes` to this budget and its parents, or charges nothing and returns
  // RESOURCE_EXHAUSTED naming the budget that would go past its limit.
  absl::Status Charge(int64_t bytes);
  // Gives back bytes charged earlier.
  void Release(int64_t bytes);
  // Counts heap bytes taken (or, negative, given back) outside tensors: never refused here, but
  // part of used() and peak(), which the call polls.
  void Count(int64_t bytes);

  // Bytes held now, and the most held at once.
  int64_t used() const { return used_.load(std::memory_order_relaxed); }
  int64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  int64_t limit() const { return limit_; }
  absl::string_view what() const { return what_; }
  // RESOURCE_EXHAUSTED when the peak has gone past the limit (counted bytes can take it there).
  absl::Status Check() const;

 private:
  void Add(int64_t bytes);
  const absl::string_view what_;
  const int64_t limit_;
  const std::shared_ptr<MemoryBudget> parent_;
  std::atomic<int64_t> used_{0}, peak_{0};
};

// Thrown by the allocator when a budget refuses a buffer: a bad_alloc, which callers already
// turn into RESOURCE_EXHAUSTED, with the budget's message.
class BudgetExceeded : public std::bad_alloc {
 public:
  explicit BudgetExceeded(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// For tests of allocation failures: the `n`th tensor buffer (or, in kiln-server, heap block taken
// under a budget) from now fails with std::bad_alloc, as if memory had run out; 0 disables.
// Returns how many allocations were still to come before the last such failure (0: it came).
int64_t FailAllocationAfter(int64_t n);
// True when the allocation being made is the one FailAllocationAfter chose.
bool AllocationShouldFail();

// The interrupt and budget of the call running on this thread (null when none).
const std::function<absl::Status()>* CurrentInterrupt();
const std::shared_ptr<MemoryBudget>& CurrentBudget();
// The same budget as a plain pointer, safe to read in operator new and delete (even while the
// thread's thread-locals are being destroyed).
MemoryBudget* CurrentBudgetPtr();

// Installs an interrupt on this thread while it lives (null keeps the one installed); the one
// before comes back after.
class InterruptScope {
 public:
  explicit InterruptScope(const std::function<absl::Status()>* interrupt);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  const std::function<absl::Status()>* saved_;
};

// Installs a memory budget on this thread while it lives; the one before comes back after.
class MemoryBudgetScope {
 public:
  explicit MemoryBudgetScope(std::shared_ptr<MemoryBudget> budget);
  ~MemoryBudgetScope();
  MemoryBudgetScope(const MemoryBudgetScope&) = delete;
  MemoryBudgetScope& operator=(const MemoryBudgetScope&) = delete;

 private:
  std::shared_ptr<MemoryBudget> saved_;
};

// The current interrupt's status (OK when none is installed).
absl::Status PollInterrupt();

// For a kernel loop whose work is not bounded by its input and output sizes: Tick(units) is
// cheap and polls the call's interrupt once every kPollInterval units of work (about 100 us).
class InterruptPoller {
 public:
  static constexpr int64_t kPollInterval = int64_t{1} << 16;
  absl::Status Tick(int64_t units = 1) {
    left_ -= units;
    if (left_ > 0) return absl::OkStatus();
    left_ = kPollInterval;
    return PollInterrupt();
  }

 private:
  int64_t left_ = kPollInterval;
};

}  // namespace kiln

#endif  // KILN_CORE_TENSOR_CALL_LIMITS_H_
