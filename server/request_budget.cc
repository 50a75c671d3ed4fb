#include "server/request_budget.h"

#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "absl/strings/str_cat.h"

namespace kiln::server {
namespace {

// jemalloc's control interface, when kiln-server is linked with it.
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

// Freed memory above this is returned to the system when a request ends.
constexpr int64_t kTrimAbove = int64_t{64} << 20;

}  // namespace

void ReleaseFreeMemory() {
  if (mallctl != nullptr) {
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);  // 4096: MALLCTL_ARENAS_ALL
  } else {
    malloc_trim(0);
  }
}

std::shared_ptr<MemoryBudget> MakeServerBudget(int64_t max_bytes) {
  if (max_bytes <= 0) return nullptr;
  return std::make_shared<MemoryBudget>(
      "this server's memory budget across calls (--max_server_bytes)", max_bytes);
}

RequestBudget::RequestBudget(std::string method, const BudgetLimits& limits,
                             std::shared_ptr<MemoryBudget> server)
    : method_(std::move(method)),
      limits_(limits),
      start_(std::chrono::steady_clock::now()),
      memory_(
          std::make_shared<MemoryBudget>("this server's memory budget per call (--max_call_bytes)",
                                         limits.max_bytes, std::move(server))) {}

std::function<absl::Status()> BudgetedInterrupt(std::function<absl::Status()> call,
                                                std::shared_ptr<const RequestBudget> budget) {
  // A poll can come every few microseconds, so the checks (their clocks were an eighth of a
  // large compile's time) run on every 32nd poll only, and on any poll in a new tick of the
  // coarse clock (a few ns to read): a call whose polls are few and far apart, such as a
  // program of a dozen long steps, still sees its deadline within a step and a tick.
  struct Polls {
    std::atomic<uint32_t> count{0};
    std::atomic<int64_t> tick{0};
  };
  auto polls = std::make_shared<Polls>();
  return [call = std::move(call), budget = std::move(budget), polls] {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    const int64_t tick = int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
    const bool new_tick = polls->tick.exchange(tick, std::memory_order_relaxed) != tick;
    if (polls->count.fetch_add(1, std::memory_order_relaxed) % 32 != 0 && !new_tick) {
      return absl::OkStatus();
    }
    if (call) {
      if (absl::Status s = call(); !s.ok()) return s;
    }
    return budget->Check();
  };
}

BudgetScope::BudgetScope(const RequestBudget& budget) {
  if (CurrentBudgetPtr() != nullptr) return;
  installed_ = &budget;
  scope_ = std::make_unique<MemoryBudgetScope>(budget.memory());
}

BudgetScope::~BudgetScope() {
  if (installed_ == nullptr) return;
  scope_.reset();
  if (installed_->peak_bytes() > kTrimAbove) ReleaseFreeMemory();
}

absl::Status RequestBudget::Check() const {
  if (absl::Status s = memory_->Check(); !s.ok()) {
    return absl::ResourceExhaustedError(
        absl::StrCat(method_, " ", s.message(), "; split the graph or raise the limit"));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (limits_.max_seconds > 0 && seconds > limits_.max_seconds) {
    return absl::DeadlineExceededError(absl::StrCat(method_, " took more than this server's ",
                                                    limits_.max_seconds,
                                                    " s per request (--max_request_seconds)"));
  }
  return absl::OkStatus();
}

}  // namespace kiln::server

#if defined(__SANITIZE_ADDRESS__)
#define KILN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_ASAN 1
#endif
#endif

#ifdef KILN_ASAN
// Under AddressSanitizer, which owns operator new, its allocation hooks do the counting.
// (Declared here: GCC does not install sanitizer/allocator_interface.h.)
extern "C" {
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, size_t),
                                              void (*free_hook)(const volatile void*));
size_t __sanitizer_get_allocated_size(const volatile void* p);
}

namespace {

void CountAllocation(const volatile void* p, size_t n) {
  if (kiln::MemoryBudget* b = kiln::CurrentBudgetPtr()) b->Count(static_cast<int64_t>(n));
}
void CountFree(const volatile void* p) {
  if (kiln::MemoryBudget* b = kiln::CurrentBudgetPtr()) {
    b->Count(-static_cast<int64_t>(__sanitizer_get_allocated_size(p)));
  }
}
[[maybe_unused]] const int kHooksInstalled =
    __sanitizer_install_malloc_and_free_hooks(CountAllocation, CountFree);

}  // namespace

#else
namespace {

// Heap blocks from this size up are refused past the thread's budget (kernels' scratch vectors);
// smaller ones are only counted, since a small allocation may come where throwing cannot be
// handled, and the budget's Check() catches their sum.
constexpr size_t kRefusedAbove = size_t{1} << 20;

// Counts the block `p` of `n` bytes asked into the thread's budget; a large one past the budget
// is freed and refused.
void* Counted(void* p, size_t n) {
  if (p == nullptr) throw std::bad_alloc();
  kiln::MemoryBudget* b = kiln::CurrentBudgetPtr();
  if (b == nullptr) return p;
  if (kiln::AllocationShouldFail()) {
    std::free(p);
    throw std::bad_alloc();
  }
  const int64_t usable = static_cast<int64_t>(malloc_usable_size(p));
  if (n >= kRefusedAbove && b->limit() > 0 && b->used() + usable > b->limit()) {
    std::free(p);
    throw kiln::BudgetExceeded(absl::StrCat("a block of ", n, " bytes would take ", b->what(),
                                            " past its limit of ", b->limit(), " bytes (",
                                            b->used(), " held)"));
  }
  b->Count(usable);
  return p;
}

}  // namespace

// The server's allocation functions: malloc and free, counted against the thread's budget.
void* operator new(size_t n) { return Counted(std::malloc(n == 0 ? 1 : n), n); }
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept {
  if (p != nullptr) {
    if (kiln::MemoryBudget* b = kiln::CurrentBudgetPtr()) {
      b->Count(-static_cast<int64_t>(malloc_usable_size(p)));
    }
  }
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }
void* operator new(size_t n, std::align_val_t align) {
  const size_t a = static_cast<size_t>(align);
  return Counted(std::aligned_alloc(a, (std::max<size_t>(n, 1) + a - 1) / a * a), n);
}
void* operator new[](size_t n, std::align_val_t align) { return operator new(n, align); }
void operator delete(void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { operator delete(p); }
#endif
