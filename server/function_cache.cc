#include "server/function_cache.h"

#include "absl/strings/str_cat.h"
#include "core/graph/canonical.h"
#include "server/log.h"

namespace kiln::server {

const char* CacheSourceName(CacheSource source) {
  switch (source) {
    case CacheSource::kMemory:
      return "memory";
    case CacheSource::kDisk:
      return "disk";
    default:
      return "compiled";
  }
}

FunctionCache::FunctionCache(int64_t memory_bytes, std::optional<DiskCache> disk)
    : memory_bytes_(memory_bytes), disk_(std::move(disk)) {}

std::shared_ptr<const CompiledFunction> FunctionCache::LookupLocked(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.function;
}

void FunctionCache::InsertLocked(std::shared_ptr<const CompiledFunction> f) {
  const std::string id = f->id;
  if (entries_.count(id)) return;
  lru_.push_front(id);
  stats_.bytes += f->bytes();
  entries_[id] = Entry{std::move(f), lru_.begin()};
  // Evict from the least recently used end; the newest entry stays even when over budget.
  while (stats_.bytes > static_cast<uint64_t>(memory_bytes_) && lru_.size() > 1) {
    auto victim = entries_.find(lru_.back());
    stats_.bytes -= victim->second.function->bytes();
    entries_.erase(victim);
    lru_.pop_back();
    ++stats_.evictions;
  }
  stats_.entries = entries_.size();
}

std::shared_ptr<const CompiledFunction> FunctionCache::LoadFromDisk(const std::string& id) {
  if (!disk_) return nullptr;
  absl::StatusOr<std::string> bytes = disk_->Load(id);
  if (!bytes.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> f = DecodeCompiled(*bytes);
  if (!f.ok() || (*f)->id != id) return nullptr;
  return *std::move(f);
}

void FunctionCache::StoreOnDisk(const CompiledFunction& f) {
  absl::Status stored = disk_->Store(f.id, EncodeCompiled(f));
  if (stored.ok()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.disk_write_errors;
  }
  Log(LogLevel::kWarning, "the disk tier cannot store a function; it stays in memory",
      {{"function_id", f.id}, {"error", std::string(stored.message())}});
}

void FunctionCache::GetOrCompile(const CompileJob& job, Done done) {
  std::shared_ptr<const CompiledFunction> hit;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto f = LookupLocked(job.id); f && f->canonical_form == job.canonical_form) {
      ++stats_.memory_hits;
      hit = std::move(f);
    } else if (auto it = inflight_.find(job.id); it != inflight_.end()) {
      it->second.emplace_back(&job, std::move(done));  // called when that compile ends
      ++stats_.waiting;
      return;
    } else {
      inflight_[job.id];
    }
  }
  if (hit != nullptr) return done(std::move(hit), CacheSource::kMemory);
  // This caller compiles (or loads) for everyone who asks for the id meanwhile.
  Result result;
  CacheSource found = CacheSource::kCompiled;
  if (auto f = LoadFromDisk(job.id); f && f->canonical_form == job.canonical_form) {
    result = std::move(f);
    found = CacheSource::kDisk;
  } else {
    result = Compile(job);
    if (result.ok() && disk_) StoreOnDisk(**result);
  }
  std::vector<std::pair<const CompileJob*, Done>> waiters;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (found == CacheSource::kDisk) {
      ++stats_.disk_hits;
    } else {
      ++stats_.misses;
      if (result.ok()) ++stats_.compiles;
    }
    if (result.ok()) InsertLocked(*result);
    waiters = std::move(inflight_[job.id]);
    inflight_.erase(job.id);
    stats_.waiting -= waiters.size();
    for (const auto& [waiter, unused] : waiters) {
      if (result.ok() && (*result)->canonical_form == waiter->canonical_form) ++stats_.memory_hits;
    }
  }
  done(result, found);
  for (auto& [waiter, waiter_done] : waiters) {
    if (!result.ok() && (absl::IsCancelled(result.status()) ||
                         absl::IsDeadlineExceeded(result.status()))) {
      // Stopped by the first caller's deadline, not this one's: worth a retry.
      waiter_done(absl::UnavailableError(absl::StrCat("the compile this call waited for stopped: ",
                                                      result.status().message(), "; retry")),
                  CacheSource::kCompiled);
    } else if (!result.ok()) {
      waiter_done(result.status(), CacheSource::kCompiled);
    } else if ((*result)->canonical_form == waiter->canonical_form) {
      waiter_done(*result, CacheSource::kMemory);
    } else {  // a collision with this job: compiled on its own, uncached
      waiter_done(Compile(*waiter), CacheSource::kCompiled);
    }
  }
}

// The request memo is bounded by bytes; when full it starts again (hits then take the
// canonical path once more).
constexpr size_t kMaxRequestBytes = size_t{64} << 20;

std::shared_ptr<const CompiledFunction> FunctionCache::FindByRequest(
    const std::string& request_bytes) {
  const std::string key = Sha256Hex(request_bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = requests_.find(key);
  if (it == requests_.end() || it->second.first != request_bytes) return nullptr;
  std::shared_ptr<const CompiledFunction> f = LookupLocked(it->second.second);
  if (f != nullptr) ++stats_.memory_hits;
  return f;
}

void FunctionCache::RememberRequest(const std::string& request_bytes, const std::string& id) {
  std::string key = Sha256Hex(request_bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  if (request_bytes_ + request_bytes.size() > kMaxRequestBytes) {
    requests_.clear();
    request_bytes_ = 0;
  }
  if (requests_.emplace(std::move(key), std::make_pair(request_bytes, id)).second) {
    request_bytes_ += request_bytes.size();
  }
}

absl::StatusOr<std::shared_ptr<const CompiledFunction>> FunctionCache::Find(const std::string& id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto f = LookupLocked(id)) return f;
  }
  if (auto f = LoadFromDisk(id)) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.disk_hits;
    InsertLocked(f);
    return f;
  }
  return absl::NotFoundError(
      absl::StrCat("function ", id, " is not in the cache (unknown or evicted): compile it again"));
}

std::shared_ptr<const CompiledFunction> FunctionCache::Peek(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.function;
}

CacheStats FunctionCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace kiln::server
