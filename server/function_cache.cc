#include "server/function_cache.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/graph/canonical.h"
#include "proto/convert/error_reason.h"
#include "server/log.h"

namespace kiln::server {

const char* CacheSourceName(CacheSource source) {
  switch (source) {
    case CacheSource::kMemory:
      return "memory";
    case CacheSource::kDisk:
      return "disk";
    case CacheSource::kShared:
      return "redis";
    default:
      return "compiled";
  }
}

FunctionCache::FunctionCache(int64_t memory_bytes, std::optional<DiskCache> disk,
                             std::shared_ptr<SharedTier> shared)
    : memory_bytes_(memory_bytes), disk_(std::move(disk)), shared_(std::move(shared)) {}

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

namespace {

// The function an entry of a lower tier holds; null when absent or unusable.
std::shared_ptr<const CompiledFunction> Decoded(const std::string& id,
                                                const absl::StatusOr<std::string>& bytes) {
  if (!bytes.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<const CompiledFunction>> f = DecodeCompiled(*bytes);
  if (!f.ok() || (*f)->id != id) return nullptr;
  return *std::move(f);
}

// How long a replica waiting for another's compile sleeps between looks at the shared tier.
constexpr auto kLeasePoll = std::chrono::milliseconds(20);

}  // namespace

std::shared_ptr<const CompiledFunction> FunctionCache::LoadFromDisk(const std::string& id) {
  return disk_ ? Decoded(id, disk_->Load(id)) : nullptr;
}

std::shared_ptr<const CompiledFunction> FunctionCache::LoadShared(const std::string& id) {
  if (shared_ == nullptr) return nullptr;
  std::shared_ptr<const CompiledFunction> f = Decoded(id, shared_->Load(id));
  if (f != nullptr) shared_->Touch(id);
  return f;
}

FunctionCache::Result FunctionCache::CompileAndStore(const CompileJob& job) {
  Result result = Compile(job);
  if (!result.ok()) return result;
  if (disk_) StoreOnDisk(**result);
  if (shared_ != nullptr) {
    if (absl::Status s = shared_->Store(job.id, (*result)->stored); s.ok()) {
      shared_->Touch(job.id);
    } else {
      Log(LogLevel::kWarning, "the shared tier cannot store a function",
          {{"function_id", job.id}, {"error", std::string(s.message())}});
    }
  }
  return result;
}

std::pair<FunctionCache::Result, CacheSource> FunctionCache::LoadOrCompile(const CompileJob& job) {
  auto matches = [&](const std::shared_ptr<const CompiledFunction>& f) {
    return f != nullptr && f->canonical_form == job.canonical_form;
  };
  if (LocalOnly(job)) return {Compile(job), CacheSource::kCompiled};
  if (auto f = LoadShared(job.id); matches(f)) return {f, CacheSource::kShared};
  if (auto f = LoadFromDisk(job.id); matches(f)) {
    if (shared_ != nullptr) shared_->Store(job.id, f->stored).IgnoreError();
    return {f, CacheSource::kDisk};
  }
  if (shared_ == nullptr) return {CompileAndStore(job), CacheSource::kCompiled};
  bool waited = false;
  for (;;) {
    absl::StatusOr<bool> leased = shared_->TryLease(job.id);
    if (!leased.ok() || *leased) {  // the lease is ours, or Redis is down: compile here
      Result result = CompileAndStore(job);
      if (leased.ok()) shared_->Release(job.id);
      return {std::move(result), CacheSource::kCompiled};
    }
    // Another replica compiles: its result comes, or its lease lapses when it dies.
    if (!waited) {
      waited = true;
      absl::MutexLock lock(&mutex_);
      ++stats_.lease_waits;
    }
    if (job.interrupt) {
      if (absl::Status s = job.interrupt(); !s.ok()) {
        return {absl::Status(s.code(),
                             absl::StrCat("waiting for another replica's compile: ", s.message())),
                CacheSource::kCompiled};
      }
    }
    std::this_thread::sleep_for(kLeasePoll);
    if (auto f = LoadShared(job.id); matches(f)) return {f, CacheSource::kShared};
  }
}

void FunctionCache::StoreOnDisk(const CompiledFunction& f) {
  absl::Status stored = disk_->Store(f.id, f.stored);
  if (stored.ok()) return;
  {
    absl::MutexLock lock(&mutex_);
    ++stats_.disk_write_errors;
  }
  Log(LogLevel::kWarning, "the disk tier cannot store a function; it stays in memory",
      {{"function_id", f.id}, {"error", std::string(stored.message())}});
}

void FunctionCache::GetOrCompile(const CompileJob& job, Done done) {
  std::shared_ptr<const CompiledFunction> hit;
  {
    absl::MutexLock lock(&mutex_);
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
  auto [result, found] = LoadOrCompile(job);
  std::vector<std::pair<const CompileJob*, Done>> waiters;
  {
    absl::MutexLock lock(&mutex_);
    if (found == CacheSource::kDisk) {
      ++stats_.disk_hits;
    } else if (found == CacheSource::kShared) {
      ++stats_.shared_hits;
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
    if (!result.ok() &&
        (absl::IsCancelled(result.status()) || absl::IsDeadlineExceeded(result.status()))) {
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
  absl::MutexLock lock(&mutex_);
  auto it = requests_.find(key);
  if (it == requests_.end() || it->second.first != request_bytes) return nullptr;
  std::shared_ptr<const CompiledFunction> f = LookupLocked(it->second.second);
  if (f != nullptr) ++stats_.memory_hits;
  return f;
}

void FunctionCache::RememberRequest(const std::string& request_bytes, const std::string& id) {
  std::string key = Sha256Hex(request_bytes);
  absl::MutexLock lock(&mutex_);
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
    absl::MutexLock lock(&mutex_);
    if (auto f = LookupLocked(id)) return f;
  }
  if (auto f = LoadShared(id)) {
    absl::MutexLock lock(&mutex_);
    ++stats_.shared_hits;
    InsertLocked(f);
    return f;
  }
  if (auto f = LoadFromDisk(id)) {
    absl::MutexLock lock(&mutex_);
    ++stats_.disk_hits;
    InsertLocked(f);
    return f;
  }
  return NotFound(id);
}

absl::Status FunctionCache::NotFound(const std::string& id) {
  return WithReason(
      absl::NotFoundError(absl::StrCat(
          "function ", id, " is not in the cache (unknown or evicted): compile it again")),
      v1::FUNCTION_NOT_FOUND, {{"function_id", id}});
}

std::shared_ptr<const CompiledFunction> FunctionCache::Peek(const std::string& id) const {
  absl::MutexLock lock(&mutex_);
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second.function;
}

CacheStats FunctionCache::stats() const {
  absl::MutexLock lock(&mutex_);
  CacheStats stats = stats_;
  stats.shared_up = shared_ == nullptr || shared_->up();
  return stats;
}

}  // namespace kiln::server
