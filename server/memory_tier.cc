#include "server/memory_tier.h"

#include <utility>

#include "server/compiled_function.h"

namespace kiln::server {

std::shared_ptr<const CompiledFunction> MemoryTier::Find(const std::string& id) {
  absl::MutexLock lock(&mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.function;
}

absl::Status MemoryTier::Store(const std::shared_ptr<const CompiledFunction>& f) {
  absl::MutexLock lock(&mutex_);
  if (entries_.count(f->id)) return absl::OkStatus();
  lru_.push_front(f->id);
  usage_.bytes += f->bytes();
  entries_[f->id] = Entry{f, lru_.begin()};
  while (usage_.bytes > static_cast<uint64_t>(max_bytes_) && lru_.size() > 1) {
    auto victim = entries_.find(lru_.back());
    usage_.bytes -= victim->second.function->bytes();
    entries_.erase(victim);
    lru_.pop_back();
    ++usage_.evictions;
  }
  usage_.entries = entries_.size();
  return absl::OkStatus();
}

std::shared_ptr<const CompiledFunction> MemoryTier::Peek(const std::string& id) const {
  absl::MutexLock lock(&mutex_);
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.function;
}

bool MemoryTier::Remove(const std::string& id) {
  absl::MutexLock lock(&mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  usage_.bytes -= it->second.function->bytes();
  lru_.erase(it->second.lru);
  entries_.erase(it);
  usage_.entries = entries_.size();
  return true;
}

std::vector<std::shared_ptr<const CompiledFunction>> MemoryTier::Held() const {
  absl::MutexLock lock(&mutex_);
  std::vector<std::shared_ptr<const CompiledFunction>> held;
  held.reserve(lru_.size());
  for (const std::string& id : lru_) held.push_back(entries_.at(id).function);
  return held;
}

MemoryTier::Usage MemoryTier::usage() const {
  absl::MutexLock lock(&mutex_);
  return usage_;
}

}  // namespace kiln::server
