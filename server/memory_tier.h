// The function cache's first tier: decoded functions in this process's memory, the least
// recently used evicted past a byte budget.
#ifndef KILN_SERVER_MEMORY_TIER_H_
#define KILN_SERVER_MEMORY_TIER_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>
#include <unordered_map>

#include "absl/synchronization/mutex.h"
#include "server/function_tier.h"

namespace kiln::server {

class MemoryTier final : public FunctionTier {
 public:
  // What the tier holds now, and how many entries it evicted.
  struct Usage {
    uint64_t entries = 0, bytes = 0, evictions = 0;
  };

  // `max_bytes`: the budget of CompiledFunction::bytes() over every entry.
  explicit MemoryTier(int64_t max_bytes) : max_bytes_(max_bytes) {}

  CacheSource source() const override { return CacheSource::kMemory; }
  // The function of `id`, now the most recently used; null when absent.
  std::shared_ptr<const CompiledFunction> Find(const std::string& id) override;
  // Inserts f unless its id is present, then evicts from the least recently used end (the
  // newest entry stays, even over the budget). Never fails.
  absl::Status Store(const std::shared_ptr<const CompiledFunction>& f) override;

  // The function of `id`, its recency untouched; null when absent.
  std::shared_ptr<const CompiledFunction> Peek(const std::string& id) const;
  // What the tier holds and has evicted.
  Usage usage() const;
  // Drops the function of `id` (an operator's eviction); false when it is not held.
  bool Remove(const std::string& id);
  // Every function it holds, most recently used first; recency untouched.
  std::vector<std::shared_ptr<const CompiledFunction>> Held() const;

 private:
  struct Entry {
    std::shared_ptr<const CompiledFunction> function;
    std::list<std::string>::iterator lru;
  };
  const int64_t max_bytes_;
  mutable absl::Mutex mutex_;
  std::unordered_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mutex_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mutex_);  // most recently used first
  Usage usage_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace kiln::server

#endif  // KILN_SERVER_MEMORY_TIER_H_
