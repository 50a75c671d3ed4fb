#include "core/tensor/allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <new>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/tensor.h"

namespace kiln {
namespace {

// Buffers from this size up are huge-page backed and cached when freed.
constexpr size_t kLargeBuffer = size_t{1} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

// The cache's default cap: KILN_BUFFER_CACHE_BYTES, or 1 GiB.
size_t DefaultCacheBytes() {
  const char* env = std::getenv("KILN_BUFFER_CACHE_BYTES");
  return env != nullptr ? static_cast<size_t>(std::strtoull(env, nullptr, 10)) : size_t{1} << 30;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Freed large buffers by size; rounded sizes make repeated shapes hit exactly.
class BufferCache {
 public:
  void* Take(size_t size) {
    last_use_ns_.store(NowNs(), std::memory_order_relaxed);
    absl::MutexLock lock(&mu_);
    auto it = free_.find(size);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    bytes_ -= size;
    return p;
  }
  // Keeps the buffer if the cap allows; false means the caller frees it.
  bool Put(void* p, size_t size) {
    last_use_ns_.store(NowNs(), std::memory_order_relaxed);
    absl::MutexLock lock(&mu_);
    if (bytes_ + size > cap_) return false;
    free_.emplace(size, p);
    bytes_ += size;
    return true;
  }
  // Lowers (or raises) the cap, freeing what is held past it.
  void SetCap(size_t cap) {
    std::vector<void*> freed;
    {
      absl::MutexLock lock(&mu_);
      cap_ = cap;
      freed = EvictTo(cap);
    }
    for (void* p : freed) std::free(p);
  }
  int64_t TrimIfIdle(double idle_seconds) {
    if (NowNs() - last_use_ns_.load(std::memory_order_relaxed) < idle_seconds * 1e9) return 0;
    std::vector<void*> freed;
    int64_t before;
    {
      absl::MutexLock lock(&mu_);
      before = static_cast<int64_t>(bytes_);
      freed = EvictTo(0);
    }
    for (void* p : freed) std::free(p);  // outside the lock: munmap takes a while
    return before;
  }
  int64_t bytes() {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(bytes_);
  }

 private:
  // Takes the largest buffers out until at most `keep` bytes remain; the caller frees them.
  std::vector<void*> EvictTo(size_t keep) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<void*> out;
    while (bytes_ > keep && !free_.empty()) {
      auto last = std::prev(free_.end());
      bytes_ -= last->first;
      out.push_back(last->second);
      free_.erase(last);
    }
    return out;
  }
  absl::Mutex mu_;
  std::multimap<size_t, void*> free_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t cap_ ABSL_GUARDED_BY(mu_) = DefaultCacheBytes();
  std::atomic<int64_t> last_use_ns_{0};
};

BufferCache& Cache() {
  static BufferCache* cache = new BufferCache();  // never destroyed: buffers may outlive main
  return *cache;
}

std::atomic<size_t> max_buffer_bytes{0};

// Freed small buffers (up to kSmallBuffer bytes, by size class of kTensorAlignment bytes), kept
// by the thread that freed them for its next small tensors: a graph of many small nodes takes
// and frees one per node per call. At most kSmallCacheBytes per thread; none under a sanitizer,
// which must see every free.
#if defined(__SANITIZE_ADDRESS__)
#define KILN_SMALL_BUFFER_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define KILN_SMALL_BUFFER_CACHE 0
#endif
#endif
#ifndef KILN_SMALL_BUFFER_CACHE
#define KILN_SMALL_BUFFER_CACHE 1
#endif
constexpr size_t kSmallBuffer = 16384;
constexpr size_t kSmallCacheBytes = size_t{1} << 20;
constexpr int kSmallPerClass = 32;

// This thread's cache: zero-initialised plain data (one thread-local lookup per use, no guard),
// emptied at thread exit by a SmallBuffersCleaner registered on the first Put.
struct SmallBuffers {
  struct Class {
    void* blocks[kSmallPerClass];
    int count;
  };
  Class classes[kSmallBuffer / kTensorAlignment];
  size_t bytes;
  bool registered;  // the cleaner is registered
  bool dead;        // the cleaner has run: nothing more is kept (thread or process exit)

  static SmallBuffers& Mine() {
    thread_local SmallBuffers buffers;  // (constant-initialised: no guard on each access)
    return buffers;
  }
  static void* Take(size_t size) {
    SmallBuffers& mine = Mine();
    Class& c = mine.classes[size / kTensorAlignment - 1];
    if (c.count == 0) return nullptr;
    mine.bytes -= size;
    return c.blocks[--c.count];
  }
  // False when the buffer is not kept (the caller frees it).
  static bool Put(void* p, size_t size);
};

// Frees what this thread's cache holds when the thread ends.
struct SmallBuffersCleaner {
  ~SmallBuffersCleaner() {
    SmallBuffers& mine = SmallBuffers::Mine();
    for (auto& c : mine.classes) {
      for (int i = 0; i < c.count; ++i) std::free(c.blocks[i]);
      c.count = 0;
    }
    mine.bytes = 0;
    mine.dead = true;
  }
};

bool SmallBuffers::Put(void* p, size_t size) {
  SmallBuffers& mine = Mine();
  if (!mine.registered) {
    thread_local SmallBuffersCleaner cleaner;
    mine.registered = true;
  }
  if (mine.dead) return false;
  Class& c = mine.classes[size / kTensorAlignment - 1];
  if (c.count == kSmallPerClass || mine.bytes + size > kSmallCacheBytes) return false;
  c.blocks[c.count++] = p;
  mine.bytes += size;
  return true;
}

// Memory of `size` bytes: aligned heap for small buffers, huge pages (cached) for large ones.
void* TakeMemory(size_t size) {
  if (KILN_SMALL_BUFFER_CACHE && size <= kSmallBuffer) {
    if (void* p = SmallBuffers::Take(size)) return p;
  }
  if (size < kLargeBuffer) return std::aligned_alloc(kTensorAlignment, size);
  if (void* p = Cache().Take(size)) return p;
  void* p = std::aligned_alloc(kHugePage, size);
  if (p != nullptr) madvise(p, size, MADV_HUGEPAGE);
  return p;
}

void GiveBackMemory(void* p, size_t size) {
  if (KILN_SMALL_BUFFER_CACHE && size <= kSmallBuffer && SmallBuffers::Put(p, size)) return;
  if (size < kLargeBuffer || !Cache().Put(p, size)) std::free(p);
}

// Allocates the shared_ptr control block of each buffer from the same small blocks (one 64-byte
// class), so that a tensor costs one cached block and not a malloc besides its buffer.
template <typename T>
struct BlockAllocator {
  using value_type = T;
  BlockAllocator() = default;
  template <typename U>
  BlockAllocator(const BlockAllocator<U>&) {}  // NOLINT: rebinding, as allocators do
  static size_t Bytes(size_t n) {
    return (n * sizeof(T) + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  }
  T* allocate(size_t n) {
    void* p = TakeMemory(Bytes(n));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) { GiveBackMemory(p, Bytes(n)); }
  template <typename U>
  bool operator==(const BlockAllocator<U>&) const {
    return true;
  }
};

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
  // Past the largest tensor (so that the rounding below cannot wrap).
  if (bytes > static_cast<size_t>(kMaxTensorBytes)) {
    throw BufferLimitExceeded(bytes, static_cast<size_t>(kMaxTensorBytes));
  }
  // Rounded to the alignment (small) or to whole huge pages (large), which is what is held; a
  // size the alignment rounds up to kLargeBuffer is large.
  size_t size = std::max(kTensorAlignment,
                         (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment);
  if (size >= kLargeBuffer) size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  if (AllocationShouldFail()) throw std::bad_alloc();
  std::shared_ptr<MemoryBudget> budget = CurrentBudget();
  if (budget != nullptr) {
    if (absl::Status s = budget->Charge(static_cast<int64_t>(size)); !s.ok()) {
      throw BudgetExceeded(std::string(s.message()));
    }
  }
  void* p = TakeMemory(size);
  if (p == nullptr) {
    if (budget != nullptr) budget->Release(static_cast<int64_t>(size));
    throw std::bad_alloc();
  }
  return std::shared_ptr<void>(
      p,
      [size, budget = std::move(budget)](void* q) {
        GiveBackMemory(q, size);
        if (budget != nullptr) budget->Release(static_cast<int64_t>(size));
      },
      BlockAllocator<char>());
}

int64_t CachedBufferBytes() { return Cache().bytes(); }

void SetBufferCacheBytes(size_t bytes) { Cache().SetCap(std::min(bytes, DefaultCacheBytes())); }

int64_t TrimBufferCacheIfIdle(double idle_seconds) { return Cache().TrimIfIdle(idle_seconds); }

}  // namespace kiln
