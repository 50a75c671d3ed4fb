// The compiled-function cache every client shares: an in-memory LRU under a byte budget over an
// optional directory of serialized functions. Concurrent compiles of one graph run once.
#ifndef KILN_SERVER_FUNCTION_CACHE_H_
#define KILN_SERVER_FUNCTION_CACHE_H_

#include <cstdint>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "server/compiled_function.h"
#include "server/disk_cache.h"

namespace kiln::server {

struct CacheStats {
  uint64_t compiles = 0, memory_hits = 0, disk_hits = 0, misses = 0, evictions = 0;
  uint64_t entries = 0, bytes = 0;
};

// Where GetOrCompile found the function.
enum class CacheSource { kCompiled, kMemory, kDisk };
const char* CacheSourceName(CacheSource source);

class FunctionCache {
 public:
  // `memory_bytes`: the LRU's budget; `disk`: the second tier, if any.
  FunctionCache(int64_t memory_bytes, std::optional<DiskCache> disk);

  // The function of `job`: from memory, else from disk, else compiled. Callers asking for one
  // id while it compiles wait for that compile rather than starting another; the compile runs to
  // the end even when its first caller goes away. A hit whose canonical form differs from the
  // job's (a hash collision) is never returned.
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> GetOrCompile(const CompileJob& job,
                                                                       CacheSource* source);
  // The function in memory that a byte-identical compile request produced before (a client
  // sending the same graph again pays a hash of its bytes, not a canonicalization); null
  // otherwise. Counts as a memory hit.
  std::shared_ptr<const CompiledFunction> FindByRequest(const std::string& request_bytes);
  // Remembers that these request bytes compile to `id`.
  void RememberRequest(const std::string& request_bytes, const std::string& id);

  // The function of `id` from memory or disk; NOT_FOUND when neither has it.
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> Find(const std::string& id);

  CacheStats stats() const;

 private:
  using Result = absl::StatusOr<std::shared_ptr<const CompiledFunction>>;
  // Called with mutex_ held.
  std::shared_ptr<const CompiledFunction> LookupLocked(const std::string& id);
  void InsertLocked(std::shared_ptr<const CompiledFunction> f);
  // The disk tier's entry, decoded; null when absent or unusable.
  std::shared_ptr<const CompiledFunction> LoadFromDisk(const std::string& id);

  const int64_t memory_bytes_;
  const std::optional<DiskCache> disk_;
  mutable std::mutex mutex_;
  struct Entry {
    std::shared_ptr<const CompiledFunction> function;
    std::list<std::string>::iterator lru;
  };
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> lru_;  // most recently used first
  std::unordered_map<std::string, std::shared_future<Result>> inflight_;
  // SHA-256 of request bytes -> (the bytes, compared on a hit; the function id).
  std::unordered_map<std::string, std::pair<std::string, std::string>> requests_;
  size_t request_bytes_ = 0;
  CacheStats stats_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_FUNCTION_CACHE_H_
