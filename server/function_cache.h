// The compiled-function cache every client shares: an in-memory LRU under a byte budget over an
// optional directory of serialized functions. Concurrent compiles of one graph run once.
#ifndef KILN_SERVER_FUNCTION_CACHE_H_
#define KILN_SERVER_FUNCTION_CACHE_H_

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/compiled_function.h"
#include "server/disk_cache.h"
#include "server/shared_tier.h"

namespace kiln::server {

struct CacheStats {
  uint64_t compiles = 0, memory_hits = 0, disk_hits = 0, misses = 0, evictions = 0;
  uint64_t shared_hits = 0;  // functions another replica compiled, loaded from the shared tier
  uint64_t lease_waits = 0;  // compiles that waited for another replica's compile lease
  bool shared_up = true;     // the shared tier is reachable (or there is none)
  uint64_t entries = 0, bytes = 0;
  uint64_t waiting = 0;            // callers waiting now for a compile in flight
  uint64_t disk_write_errors = 0;  // entries the disk tier could not store (a full disk...)
};

// Where GetOrCompile found the function.
enum class CacheSource { kCompiled, kMemory, kDisk, kShared };
const char* CacheSourceName(CacheSource source);

class FunctionCache {
 public:
  // `memory_bytes`: the LRU's budget; `disk`: the local disk tier, if any; `shared`: the tier
  // every replica shares (Redis), if any. Lookups go memory, shared, disk, then compile.
  FunctionCache(int64_t memory_bytes, std::optional<DiskCache> disk,
                std::shared_ptr<SharedTier> shared = nullptr);

  using Result = absl::StatusOr<std::shared_ptr<const CompiledFunction>>;
  using Done = std::function<void(Result, CacheSource)>;
  // Calls done with the function of `job`: from memory, else from the shared tier or disk, else
  // compiled here, on the calling thread (with a shared tier, by the one replica that takes the
  // compile lease: the others wait for its result, or take over when its lease lapses). A
  // caller asking for an id that another is compiling does not wait: its `done` runs on that
  // compile's thread when it ends (the compile runs to the end even when its first caller has
  // gone). A hit whose canonical form differs from the job's (a hash collision) is never
  // returned.
  void GetOrCompile(const CompileJob& job, Done done);

  // The function in memory that a byte-identical compile request produced before (a client
  // sending the same graph again pays a hash of its bytes, not a canonicalization); null
  // otherwise. Counts as a memory hit.
  std::shared_ptr<const CompiledFunction> FindByRequest(const std::string& request_bytes);
  // Remembers that these request bytes compile to `id`.
  void RememberRequest(const std::string& request_bytes, const std::string& id);

  // The function of `id` if memory holds it, else null; no I/O, no statistics.
  std::shared_ptr<const CompiledFunction> Peek(const std::string& id) const;
  // The function of `id` from memory, the shared tier or disk; NOT_FOUND when none has it.
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> Find(const std::string& id);

  CacheStats stats() const;
  // The NOT_FOUND of an id no tier has.
  static absl::Status NotFound(const std::string& id);

 private:
  std::shared_ptr<const CompiledFunction> LookupLocked(const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void InsertLocked(std::shared_ptr<const CompiledFunction> f)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The leader of a flight's answer: from the shared tier, the disk, or a compile.
  std::pair<Result, CacheSource> LoadOrCompile(const CompileJob& job);
  // Compiles `job` and stores the function in the disk and shared tiers.
  Result CompileAndStore(const CompileJob& job);
  // The entry of a lower tier, decoded; null when absent or unusable.
  std::shared_ptr<const CompiledFunction> LoadFromDisk(const std::string& id);
  std::shared_ptr<const CompiledFunction> LoadShared(const std::string& id);
  // Writes f to the disk tier; a failure is counted and logged, and f stays in memory.
  void StoreOnDisk(const CompiledFunction& f);

  const int64_t memory_bytes_;
  const std::optional<DiskCache> disk_;
  const std::shared_ptr<SharedTier> shared_;
  mutable absl::Mutex mutex_;
  struct Entry {
    std::shared_ptr<const CompiledFunction> function;
    std::list<std::string>::iterator lru;
  };
  std::unordered_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mutex_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mutex_);  // most recently used first
  // Per id being compiled: the jobs waiting for it and what to call when it ends.
  std::unordered_map<std::string, std::vector<std::pair<const CompileJob*, Done>>> inflight_
      ABSL_GUARDED_BY(mutex_);
  // SHA-256 of request bytes -> (the bytes, compared on a hit; the function id).
  std::unordered_map<std::string, std::pair<std::string, std::string>> requests_
      ABSL_GUARDED_BY(mutex_);
  size_t request_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  CacheStats stats_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace kiln::server

#endif  // KILN_SERVER_FUNCTION_CACHE_H_
