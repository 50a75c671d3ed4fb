#include "server/request_budget.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "absl/strings/str_cat.h"

namespace kiln::server {
namespace {

thread_local RequestBudget* t_budget = nullptr;

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

RequestBudget::RequestBudget(std::string method, const BudgetLimits& limits)
    : method_(std::move(method)), limits_(limits), start_(std::chrono::steady_clock::now()) {}

BudgetScope::BudgetScope(RequestBudget& budget) {
  if (t_budget != nullptr) return;
  t_budget = &budget;
  installed_ = &budget;
}

BudgetScope::~BudgetScope() {
  if (installed_ == nullptr) return;
  t_budget = nullptr;
  if (installed_->peak_bytes() > kTrimAbove) ReleaseFreeMemory();
}

absl::Status RequestBudget::Check() const {
  if (limits_.max_bytes > 0 && peak_ > limits_.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        method_, " held more than this server's memory budget of ", limits_.max_bytes,
        " bytes per request (--max_request_memory_bytes); split the graph or raise the limit"));
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
  if (kiln::server::t_budget != nullptr) kiln::server::t_budget->Add(static_cast<int64_t>(n));
}
void CountFree(const volatile void* p) {
  if (kiln::server::t_budget != nullptr) {
    kiln::server::t_budget->Sub(static_cast<int64_t>(__sanitizer_get_allocated_size(p)));
  }
}
[[maybe_unused]] const int kHooksInstalled =
    __sanitizer_install_malloc_and_free_hooks(CountAllocation, CountFree);

}  // namespace

#else
// The server's allocation functions: malloc and free, counted against the thread's budget.
void* operator new(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  if (kiln::server::t_budget != nullptr) {
    kiln::server::t_budget->Add(static_cast<int64_t>(malloc_usable_size(p)));
  }
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept {
  if (p != nullptr && kiln::server::t_budget != nullptr) {
    kiln::server::t_budget->Sub(static_cast<int64_t>(malloc_usable_size(p)));
  }
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }
void* operator new(size_t n, std::align_val_t align) {
  const size_t a = static_cast<size_t>(align);
  void* p = std::aligned_alloc(a, (std::max<size_t>(n, 1) + a - 1) / a * a);
  if (p == nullptr) throw std::bad_alloc();
  if (kiln::server::t_budget != nullptr) {
    kiln::server::t_budget->Add(static_cast<int64_t>(malloc_usable_size(p)));
  }
  return p;
}
void* operator new[](size_t n, std::align_val_t align) { return operator new(n, align); }
void operator delete(void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { operator delete(p); }
#endif
