// Tensor buffers: 64-byte aligned, charged to the calling thread's memory budget
// (core/runtime/call_limits.h) before they are taken; large ones on transparent huge pages and
// recycled through a bounded cache, so that a kernel writing a fresh output does not pay a page
// fault per 4 KiB. The cache is trimmed: whatever it holds past its cap is freed, and a server
// empties it once idle.
#ifndef KILN_CORE_TENSOR_ALLOCATOR_H_
#define KILN_CORE_TENSOR_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

namespace kiln {

// A buffer of at least `bytes` bytes (a distinct, valid allocation even for 0), freed or cached
// when the last reference goes. Throws BufferLimitExceeded past the process's limit and
// BudgetExceeded past the thread's memory budget (both std::bad_alloc).
std::shared_ptr<void> AllocateBuffer(size_t bytes);

// Bytes currently held by the cache of freed large buffers (for tests and statistics).
int64_t CachedBufferBytes();

// The most bytes the cache keeps: `bytes`, but never more than KILN_BUFFER_CACHE_BYTES (default
// 1 GiB, the cap until this is called); what it holds past a lowered cap is freed at once.
void SetBufferCacheBytes(size_t bytes);

// Frees the cached buffers when no buffer has been taken or freed for `idle_seconds`; returns the
// bytes freed. A server calls it periodically so that memory goes back after a burst.
int64_t TrimBufferCacheIfIdle(double idle_seconds);

// A buffer larger than the process's limit was asked for.
class BufferLimitExceeded : public std::bad_alloc {
 public:
  BufferLimitExceeded(size_t bytes, size_t limit);
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// Buffers above `bytes` fail with BufferLimitExceeded instead of being allocated (a server keeps
// one request from taking the machine's memory); 0, the default, means no limit.
void SetMaxBufferBytes(size_t bytes);

}  // namespace kiln

#endif  // KILN_CORE_TENSOR_ALLOCATOR_H_
