// The compiled-function cache every client shares: an ordered list of tiers (memory, then the
// shared tier in Redis, then the disk; function_tier.h) walked from the top, a compile when none
// holds the function, and the compile stored in every tier. Concurrent compiles of one graph run
// once on a replica, and once in a cluster through the shared tier's compile lease.
#ifndef KILN_SERVER_FUNCTION_CACHE_H_
#define KILN_SERVER_FUNCTION_CACHE_H_

#include <cstdint>
#include <functional>
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
#include "server/function_tier.h"
#include "server/memory_tier.h"
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

class FunctionCache {
 public:
  // `memory_bytes`: the LRU's budget; `disk`: the local disk tier, if any; `shared`: the tier
  // every replica shares (Redis), if any. Lookups go memory, shared, disk, then compile.
  FunctionCache(int64_t memory_bytes, std::optional<DiskCache> disk,
                std::shared_ptr<SharedTier> shared = nullptr);
  // Memory, then `lower` in lookup order; the first of them with a lease() holds the compile
  // lease, and a replica waiting for another's compile watches that tier.
  FunctionCache(int64_t memory_bytes, std::vector<std::unique_ptr<FunctionTier>> lower);

  using Result = absl::StatusOr<std::shared_ptr<const CompiledFunction>>;
  using Done = std::function<void(Result, CacheSource)>;
  // Calls done with the function of `job`: from the first tier holding it, else compiled here,
  // on the calling thread (with a shared tier, by the one replica that takes the compile lease:
  // the others wait for its result, or take over when its lease lapses). A caller asking for an
  // id that another is compiling does not wait: its `done` runs on that compile's thread when it
  // ends (the compile runs to the end even when its first caller has gone). A hit whose
  // canonical form differs from the job's (a hash collision) is never returned.
  void GetOrCompile(const CompileJob& job, Done done);

  // The function in memory that a byte-identical compile request produced before (a client
  // sending the same graph again pays a hash of its bytes, not a canonicalization), by the
  // request's key (RequestKey: the SHA-256 of its bytes, as function ids are of canonical
  // forms); null otherwise. Counts as a memory hit.
  std::shared_ptr<const CompiledFunction> FindByRequest(const std::string& request_key);
  // Remembers that the request of this key compiles to `id`.
  void RememberRequest(const std::string& request_key, const std::string& id);

  // The function of `id` if memory holds it, else null; no I/O, no statistics.
  std::shared_ptr<const CompiledFunction> Peek(const std::string& id) const;
  // Every function the memory tier holds, most recently used first (MemoryTier::Held).
  std::vector<std::shared_ptr<const CompiledFunction>> Held() const { return memory_->Held(); }
  // Drops the function of `id` from memory (the lower tiers keep theirs); false when absent.
  bool Evict(const std::string& id) { return memory_->Remove(id); }
  // The function of `id` from the first tier holding it; NOT_FOUND when none has it.
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> Find(const std::string& id);

  CacheStats stats() const;
  // The NOT_FOUND of an id no tier has.
  static absl::Status NotFound(const std::string& id);

 private:
  // A function and the tier it came from (kCompiled: none).
  struct Found {
    std::shared_ptr<const CompiledFunction> function;
    CacheSource source = CacheSource::kCompiled;
  };
  // The function of `id` in tier `t`, after filling the tiers above it; none when that tier does
  // not hold it, or (with `form`) holds another canonical form under the id.
  Found FindIn(size_t t, const std::string& id, const std::string* form);
  // The first tier from `first` down holding the function (see FindIn).
  Found FindFrom(size_t first, const std::string& id, const std::string* form);
  // Stores f in tiers [first, end), the lowest first; a failure is counted and logged, and f
  // stays in the tiers above.
  void StoreIn(size_t first, size_t end, const std::shared_ptr<const CompiledFunction>& f);
  // The leader of a flight's answer: from a tier below memory, or a compile.
  std::pair<Result, CacheSource> LoadOrCompile(const CompileJob& job);
  // Compiles `job` and stores the function in every tier.
  Result CompileAndStore(const CompileJob& job);
  // Compiles `job` under the cluster's lease, or takes the function another replica compiled.
  std::pair<Result, CacheSource> CompileLeased(const CompileJob& job);
  // Answers the callers that waited for a flight with its result.
  void AnswerWaiters(const Result& result, std::vector<std::pair<const CompileJob*, Done>> waiters);

  std::vector<std::unique_ptr<FunctionTier>> tiers_;  // memory first, then in lookup order
  MemoryTier* memory_;                                // tiers_[0]
  SharedTier* lease_ = nullptr;                       // the compile lease's tier, if any
  size_t lease_tier_ = 0;                             // its index in tiers_
  mutable absl::Mutex mutex_;
  // Per id being compiled: the jobs waiting for it and what to call when it ends.
  std::unordered_map<std::string, std::vector<std::pair<const CompileJob*, Done>>> inflight_
      ABSL_GUARDED_BY(mutex_);
  // Request key (RequestKey) -> the function id.
  std::unordered_map<std::string, std::string> requests_ ABSL_GUARDED_BY(mutex_);
  std::vector<uint64_t> hits_ ABSL_GUARDED_BY(mutex_);          // by tier
  std::vector<uint64_t> store_errors_ ABSL_GUARDED_BY(mutex_);  // by tier
  CacheStats stats_ ABSL_GUARDED_BY(mutex_);  // compiles, misses, lease waits, waiting
};

}  // namespace kiln::server

#endif  // KILN_SERVER_FUNCTION_CACHE_H_
