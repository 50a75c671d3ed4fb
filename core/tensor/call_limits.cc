#include "core/tensor/call_limits.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/tensor/thread_state.h"

namespace kiln {
namespace {

std::atomic<int64_t> failure_countdown{0};
// Owns thread_state.budget (read only where a buffer must keep its budget alive).
thread_local std::shared_ptr<MemoryBudget> current_budget;

}  // namespace

constinit thread_local ThreadState thread_state KILN_INITIAL_EXEC_TLS;

MemoryBudget::MemoryBudget(absl::string_view what, int64_t limit,
                           std::shared_ptr<MemoryBudget> parent)
    : what_(what), limit_(limit), parent_(std::move(parent)) {}

void MemoryBudget::Add(int64_t bytes) {
  const int64_t now = used_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

absl::Status MemoryBudget::Charge(int64_t bytes) {
  // Taken first and given back on refusal, so that concurrent charges never pass the limit.
  const int64_t now = used_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (limit_ > 0 && now > limit_) {
    used_.fetch_sub(bytes, std::memory_order_relaxed);
    return absl::ResourceExhaustedError(absl::StrCat("a buffer of ", bytes, " bytes would take ",
                                                     what_, " past its limit of ", limit_,
                                                     " bytes (", now - bytes, " held)"));
  }
  if (parent_ != nullptr) {
    if (absl::Status s = parent_->Charge(bytes); !s.ok()) {
      used_.fetch_sub(bytes, std::memory_order_relaxed);
      return s;
    }
  }
  // The peak, from what this charge saw (no second read-modify-write of used_).
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return absl::OkStatus();
}

void MemoryBudget::Release(int64_t bytes) {
  used_.fetch_sub(bytes, std::memory_order_relaxed);
  if (parent_ != nullptr) parent_->Release(bytes);
}

void MemoryBudget::Count(int64_t bytes) {
  if (bytes > 0) {
    Add(bytes);
  } else {
    used_.fetch_add(bytes, std::memory_order_relaxed);
  }
}

absl::Status MemoryBudget::Check() const {
  if (limit_ > 0 && peak() > limit_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("held more than ", what_, " of ", limit_, " bytes"));
  }
  return absl::OkStatus();
}

int64_t FailAllocationAfter(int64_t n) {
  return std::max<int64_t>(0, failure_countdown.exchange(n, std::memory_order_relaxed));
}

bool AllocationShouldFail() {
  if (failure_countdown.load(std::memory_order_relaxed) <= 0) return false;
  return failure_countdown.fetch_sub(1, std::memory_order_relaxed) == 1;
}

const std::function<absl::Status()>* CurrentInterrupt() { return thread_state.interrupt; }
const std::shared_ptr<MemoryBudget>& CurrentBudget() { return current_budget; }
MemoryBudget* CurrentBudgetPtr() { return thread_state.budget; }

InterruptScope::InterruptScope(const std::function<absl::Status()>* interrupt)
    : saved_(thread_state.interrupt) {
  if (interrupt != nullptr && *interrupt) thread_state.interrupt = interrupt;
}
InterruptScope::~InterruptScope() { thread_state.interrupt = saved_; }

MemoryBudgetScope::MemoryBudgetScope(std::shared_ptr<MemoryBudget> budget)
    : saved_(std::exchange(current_budget, std::move(budget))) {
  thread_state.budget = current_budget.get();
}
MemoryBudgetScope::~MemoryBudgetScope() {
  // The pointer first: freeing the ending budget must not count into it.
  thread_state.budget = saved_.get();
  std::shared_ptr<MemoryBudget> ending = std::exchange(current_budget, std::move(saved_));
}

absl::Status PollInterrupt() {
  const std::function<absl::Status()>* interrupt = thread_state.interrupt;
  if (interrupt == nullptr) return absl::OkStatus();
  return (*interrupt)();
}

}  // namespace kiln
