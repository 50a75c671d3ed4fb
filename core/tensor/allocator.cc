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
#include "core/tensor/thread_state.h"

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

// Freed small blocks (up to kSmallBuffer bytes, by size class of kTensorAlignment bytes), kept
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
// A buffer below kLargeBuffer shares one block with its shared_ptr's control block, which takes
// the first kHeader bytes (the data stays 64-byte aligned after it).
constexpr size_t kHeader = kTensorAlignment;
constexpr size_t kSmallBuffer = 16384 + kHeader;  // 16 KiB of data and its header
constexpr size_t kSmallCacheBytes = size_t{1} << 20;
constexpr int kSmallPerClass = 32;

}  // namespace

// This thread's cache, zero-initialised on the heap (ThreadState holds a pointer: the thread-local
// stays a few words), made on the first free and emptied at thread exit by a SmallBuffersCloser.
struct SmallBuffers {
  struct Class {
    void* blocks[kSmallPerClass];
    int count;
  };
  Class classes[kSmallBuffer / kTensorAlignment];
  size_t bytes;
};

namespace {

// Frees what this thread's cache holds when the thread ends; nothing is kept after.
struct SmallBuffersCloser {
  ~SmallBuffersCloser() {
    ThreadState& ts = thread_state;
    if (SmallBuffers* cache = ts.small_buffers) {
      for (auto& c : cache->classes) {
        for (int i = 0; i < c.count; ++i) std::free(c.blocks[i]);
      }
      std::free(cache);
    }
    ts.small_buffers = nullptr;
    ts.small_buffers_closed = true;
  }
};

// Makes this thread's cache (plain calloc: not counted as a heap block of the call that frees
// first); null once the thread is ending or when memory is short.
[[gnu::noinline]] SmallBuffers* OpenSmallBuffers(ThreadState& ts) {
  if (ts.small_buffers_closed) return nullptr;
  auto* cache = static_cast<SmallBuffers*>(std::calloc(1, sizeof(SmallBuffers)));
  if (cache == nullptr) return nullptr;
  [[maybe_unused]] thread_local SmallBuffersCloser closer;
  ts.small_buffers = cache;
  return cache;
}

void* TakeSmall(ThreadState& ts, size_t size) {
  SmallBuffers* cache = ts.small_buffers;
  if (cache == nullptr) return nullptr;
  SmallBuffers::Class& c = cache->classes[size / kTensorAlignment - 1];
  if (c.count == 0) return nullptr;
  cache->bytes -= size;
  return c.blocks[--c.count];
}

// False when the block is not kept (the caller frees it).
bool PutSmall(ThreadState& ts, void* p, size_t size) {
  SmallBuffers* cache = ts.small_buffers;
  if (cache == nullptr && (cache = OpenSmallBuffers(ts)) == nullptr) return false;
  SmallBuffers::Class& c = cache->classes[size / kTensorAlignment - 1];
  if (c.count == kSmallPerClass || cache->bytes + size > kSmallCacheBytes) return false;
  c.blocks[c.count++] = p;
  cache->bytes += size;
  return true;
}

// Memory of `size` bytes: aligned heap for small blocks, huge pages (cached) for large ones.
void* TakeMemory(ThreadState& ts, size_t size) {
  if (KILN_SMALL_BUFFER_CACHE && size <= kSmallBuffer) {
    if (void* p = TakeSmall(ts, size)) return p;
  }
  if (size < kLargeBuffer) return std::aligned_alloc(kTensorAlignment, size);
  if (void* p = Cache().Take(size)) return p;
  void* p = std::aligned_alloc(kHugePage, size);
  if (p != nullptr) madvise(p, size, MADV_HUGEPAGE);
  return p;
}

void GiveBackMemory(ThreadState& ts, void* p, size_t size) {
  if (KILN_SMALL_BUFFER_CACHE && size <= kSmallBuffer && PutSmall(ts, p, size)) return;
  if (size < kLargeBuffer || !Cache().Put(p, size)) std::free(p);
}

// The allocator of a small buffer's control block: the header of the block already taken, given
// back whole (header and data) when the control block goes.
template <typename T>
struct InBlock {
  using value_type = T;
  InBlock(void* block, size_t bytes) : block(block), bytes(bytes) {}
  template <typename U>
  InBlock(const InBlock<U>& other) : block(other.block), bytes(other.bytes) {}  // NOLINT
  T* allocate(size_t n) {
    static_assert(sizeof(T) <= kHeader && alignof(T) <= kHeader, "the header is too small");
    if (n != 1) throw std::bad_alloc();
    return static_cast<T*>(block);
  }
  void deallocate(T*, size_t) { GiveBackMemory(thread_state, block, bytes); }
  template <typename U>
  bool operator==(const InBlock<U>& other) const {
    return block == other.block;
  }
  void* block;
  size_t bytes;
};

// Allocates a large buffer's control block from the small blocks (one 64-byte class), so that it
// costs a cached block and not a malloc besides its buffer.
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
    void* p = TakeMemory(thread_state, Bytes(n));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) { GiveBackMemory(thread_state, p, Bytes(n)); }
  template <typename U>
  bool operator==(const BlockAllocator<U>&) const {
    return true;
  }
};

// A small buffer's deleter: its memory goes with the control block (InBlock); a charged buffer
// gives its bytes back to the budget it was charged to, which it keeps alive until then.
struct Uncharged {
  void operator()(void*) const {}
};
struct Charged {
  void operator()(void*) const { budget->Release(bytes); }
  std::shared_ptr<MemoryBudget> budget;
  int64_t bytes;
};

// A large buffer's deleter: gives its memory back (to the cache) and its charge, if any.
struct LargeDeleter {
  void operator()(void* p) const {
    GiveBackMemory(thread_state, p, size);
    if (budget != nullptr) budget->Release(static_cast<int64_t>(size));
  }
  size_t size;
  std::shared_ptr<MemoryBudget> budget;
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
  ThreadState& ts = thread_state;  // the one thread-local lookup of the allocation
  MemoryBudget* const budget = ts.budget;
  if (budget != nullptr) {
    if (absl::Status s = budget->Charge(static_cast<int64_t>(size)); !s.ok()) {
      throw BudgetExceeded(std::string(s.message()));
    }
  }
  if (size >= kLargeBuffer) {
    void* p = TakeMemory(ts, size);
    if (p == nullptr) {
      if (budget != nullptr) budget->Release(static_cast<int64_t>(size));
      throw std::bad_alloc();
    }
    return std::shared_ptr<void>(p,
                                 LargeDeleter{size, budget != nullptr ? CurrentBudget() : nullptr},
                                 BlockAllocator<char>());
  }
  // One block for the control block and the data: one take and one give-back per buffer.
  const size_t block_bytes = kHeader + size;
  void* block = TakeMemory(ts, block_bytes);
  if (block == nullptr) {
    if (budget != nullptr) budget->Release(static_cast<int64_t>(size));
    throw std::bad_alloc();
  }
  void* p = static_cast<char*>(block) + kHeader;
  if (budget == nullptr) {
    return std::shared_ptr<void>(p, Uncharged{}, InBlock<char>(block, block_bytes));
  }
  // The owning pointer only for a charged buffer, which keeps its budget alive.
  return std::shared_ptr<void>(p, Charged{CurrentBudget(), static_cast<int64_t>(size)},
                               InBlock<char>(block, block_bytes));
}

int64_t CachedBufferBytes() { return Cache().bytes(); }

void SetBufferCacheBytes(size_t bytes) { Cache().SetCap(std::min(bytes, DefaultCacheBytes())); }

int64_t TrimBufferCacheIfIdle(double idle_seconds) { return Cache().TrimIfIdle(idle_seconds); }

}  // namespace kiln
