#include "core/runtime/allocator.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <new>

#include "absl/synchronization/mutex.h"
#include "core/runtime/tensor.h"

namespace kiln {
namespace {

// Buffers from this size up are huge-page backed and cached when freed.
constexpr size_t kLargeBuffer = size_t{1} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

// The cache's byte budget: KILN_BUFFER_CACHE_BYTES, or 1 GiB.
size_t CacheBudget() {
  static const size_t budget = [] {
    const char* env = std::getenv("KILN_BUFFER_CACHE_BYTES");
    return env != nullptr ? static_cast<size_t>(std::strtoull(env, nullptr, 10)) : size_t{1} << 30;
  }();
  return budget;
}

// Freed large buffers by size; rounded sizes make repeated shapes hit exactly.
class BufferCache {
 public:
  void* Take(size_t size) {
    absl::MutexLock lock(&mu_);
    auto it = free_.find(size);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    bytes_ -= size;
    return p;
  }
  // Keeps the buffer if the budget allows; false means the caller frees it.
  bool Put(void* p, size_t size) {
    absl::MutexLock lock(&mu_);
    if (bytes_ + size > CacheBudget()) return false;
    free_.emplace(size, p);
    bytes_ += size;
    return true;
  }
  int64_t bytes() {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(bytes_);
  }

 private:
  absl::Mutex mu_;
  std::multimap<size_t, void*> free_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

BufferCache& Cache() {
  static BufferCache* cache = new BufferCache();  // never destroyed: buffers may outlive main
  return *cache;
}

void FreeLarge(void* p, size_t size) {
  if (!Cache().Put(p, size)) std::free(p);
}

std::atomic<size_t> max_buffer_bytes{0};

}  // namespace

BufferLimitExceeded::BufferLimitExceeded(size_t bytes, size_t limit)
    : message_("a tensor of " + std::to_string(bytes) + " bytes exceeds the limit of " +
               std::to_string(limit) + " bytes") {}

void SetMaxBufferBytes(size_t bytes) { max_buffer_bytes = bytes; }

std::shared_ptr<void> AllocateBuffer(size_t bytes) {
  if (const size_t limit = max_buffer_bytes.load(std::memory_order_relaxed);
      limit != 0 && bytes > limit) {
    throw BufferLimitExceeded(bytes, limit);
  }
  if (bytes < kLargeBuffer) {
    const size_t size = std::max(
        kTensorAlignment, (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment);
    void* p = ::operator new(size, std::align_val_t(kTensorAlignment));
    return std::shared_ptr<void>(
        p, [](void* q) { ::operator delete(q, std::align_val_t(kTensorAlignment)); });
  }
  const size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = Cache().Take(size);
  if (p == nullptr) {
    p = std::aligned_alloc(kHugePage, size);
    if (p == nullptr) throw std::bad_alloc();
    madvise(p, size, MADV_HUGEPAGE);
  }
  return std::shared_ptr<void>(p, [size](void* q) { FreeLarge(q, size); });
}

int64_t CachedBufferBytes() { return Cache().bytes(); }

}  // namespace kiln
