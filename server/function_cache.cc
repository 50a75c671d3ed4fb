#include "server/function_cache.h"

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/graph/canonical.h"
#include "proto/convert/error_reason.h"
#include "server/log.h"
#include "server/stored_tiers.h"

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

namespace {

// The tiers below memory of a server: the shared tier, then the disk.
std::vector<std::unique_ptr<FunctionTier>> LowerTiers(std::optional<DiskCache> disk,
                                                      std::shared_ptr<SharedTier> shared) {
  std::vector<std::unique_ptr<FunctionTier>> tiers;
  if (shared != nullptr) tiers.push_back(std::make_unique<SharedFunctionTier>(std::move(shared)));
  if (disk) tiers.push_back(std::make_unique<DiskTier>(*std::move(disk)));
  return tiers;
}

// How long a replica waiting for another's compile sleeps between looks at the shared tier.
constexpr auto kLeasePoll = std::chrono::milliseconds(20);

}  // namespace

FunctionCache::FunctionCache(int64_t memory_bytes, std::optional<DiskCache> disk,
                             std::shared_ptr<SharedTier> shared)
    : FunctionCache(memory_bytes, LowerTiers(std::move(disk), std::move(shared))) {}

FunctionCache::FunctionCache(int64_t memory_bytes,
                             std::vector<std::unique_ptr<FunctionTier>> lower) {
  auto memory = std::make_unique<MemoryTier>(memory_bytes);
  memory_ = memory.get();
  tiers_.push_back(std::move(memory));
  for (std::unique_ptr<FunctionTier>& tier : lower) {
    if (lease_ == nullptr && tier->lease() != nullptr) {
      lease_ = tier->lease();
      lease_tier_ = tiers_.size();
    }
    tiers_.push_back(std::move(tier));
  }
  hits_.assign(tiers_.size(), 0);
  store_errors_.assign(tiers_.size(), 0);
}

FunctionCache::Found FunctionCache::FindIn(size_t t, const std::string& id,
                                           const std::string* form) {
  std::shared_ptr<const CompiledFunction> f = tiers_[t]->Find(id);
  if (f == nullptr || (form != nullptr && f->canonical_form != *form)) return {};
  {
    absl::MutexLock lock(&mutex_);
    ++hits_[t];
  }
  StoreIn(0, t, f);
  return {std::move(f), tiers_[t]->source()};
}

FunctionCache::Found FunctionCache::FindFrom(size_t first, const std::string& id,
                                             const std::string* form) {
  for (size_t t = first; t < tiers_.size(); ++t) {
    if (Found found = FindIn(t, id, form); found.function != nullptr) return found;
  }
  return {};
}

void FunctionCache::StoreIn(size_t first, size_t end,
                            const std::shared_ptr<const CompiledFunction>& f) {
  for (size_t t = end; t-- > first;) {
    absl::Status stored = tiers_[t]->Store(f);
    if (stored.ok()) continue;
    {
      absl::MutexLock lock(&mutex_);
      ++store_errors_[t];
    }
    Log(LogLevel::kWarning, "a cache tier cannot store a function; the tiers above it keep it",
        {{"tier", CacheSourceName(tiers_[t]->source())},
         {"function_id", f->id},
         {"error", std::string(stored.message())}});
  }
}

FunctionCache::Result FunctionCache::CompileAndStore(const CompileJob& job) {
  Result result = Compile(job);
  if (result.ok()) StoreIn(0, tiers_.size(), *result);
  return result;
}

std::pair<FunctionCache::Result, CacheSource> FunctionCache::LoadOrCompile(const CompileJob& job) {
  if (LocalOnly(job)) {  // kept in this replica's memory alone
    Result result = Compile(job);
    if (result.ok()) StoreIn(0, 1, *result);
    return {std::move(result), CacheSource::kCompiled};
  }
  if (Found hit = FindFrom(1, job.id, &job.canonical_form); hit.function != nullptr) {
    return {std::move(hit.function), hit.source};
  }
  if (lease_ == nullptr) return {CompileAndStore(job), CacheSource::kCompiled};
  return CompileLeased(job);
}

std::pair<FunctionCache::Result, CacheSource> FunctionCache::CompileLeased(const CompileJob& job) {
  bool waited = false;
  for (;;) {
    absl::StatusOr<bool> leased = lease_->TryLease(job.id);
    if (!leased.ok() || *leased) {  // the lease is ours, or Redis is down: compile here
      Result result = CompileAndStore(job);
      if (leased.ok()) lease_->Release(job.id);
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
    if (Found hit = FindIn(lease_tier_, job.id, &job.canonical_form); hit.function != nullptr) {
      return {std::move(hit.function), hit.source};
    }
  }
}

void FunctionCache::GetOrCompile(const CompileJob& job, Done done) {
  std::shared_ptr<const CompiledFunction> hit;
  {
    absl::MutexLock lock(&mutex_);
    if (auto f = memory_->Find(job.id); f && f->canonical_form == job.canonical_form) {
      ++hits_[0];
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
  // This caller compiles (or loads) for everyone who asks for the id meanwhile; the function
  // is in memory before they are answered.
  auto [result, found] = LoadOrCompile(job);
  std::vector<std::pair<const CompileJob*, Done>> waiters;
  {
    absl::MutexLock lock(&mutex_);
    if (found == CacheSource::kCompiled) {
      ++stats_.misses;
      if (result.ok()) ++stats_.compiles;
    }
    waiters = std::move(inflight_[job.id]);
    inflight_.erase(job.id);
    stats_.waiting -= waiters.size();
    for (const auto& [waiter, unused] : waiters) {
      if (result.ok() && (*result)->canonical_form == waiter->canonical_form) ++hits_[0];
    }
  }
  done(result, found);
  AnswerWaiters(result, std::move(waiters));
}

void FunctionCache::AnswerWaiters(const Result& result,
                                  std::vector<std::pair<const CompileJob*, Done>> waiters) {
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

// The request memo holds at most this many keys (a few hundred bytes each); when full it starts
// again (hits then take the canonical path once more).
constexpr size_t kMaxRequests = size_t{1} << 16;

std::shared_ptr<const CompiledFunction> FunctionCache::FindByRequest(
    const std::string& request_key) {
  absl::MutexLock lock(&mutex_);
  auto it = requests_.find(request_key);
  if (it == requests_.end()) return nullptr;
  std::shared_ptr<const CompiledFunction> f = memory_->Find(it->second);
  if (f != nullptr) ++hits_[0];
  return f;
}

void FunctionCache::RememberRequest(const std::string& request_key, const std::string& id) {
  absl::MutexLock lock(&mutex_);
  if (requests_.size() >= kMaxRequests) requests_.clear();
  requests_.emplace(request_key, id);
}

absl::StatusOr<std::shared_ptr<const CompiledFunction>> FunctionCache::Find(const std::string& id) {
  if (Found found = FindFrom(0, id, nullptr); found.function != nullptr) return found.function;
  return NotFound(id);
}

absl::Status FunctionCache::NotFound(const std::string& id) {
  return WithReason(
      absl::NotFoundError(absl::StrCat(
          "function ", id, " is not in the cache (unknown or evicted): compile it again")),
      v1::FUNCTION_NOT_FOUND, {{"function_id", id}});
}

std::shared_ptr<const CompiledFunction> FunctionCache::Peek(const std::string& id) const {
  return memory_->Peek(id);
}

CacheStats FunctionCache::stats() const {
  absl::MutexLock lock(&mutex_);
  CacheStats stats = stats_;
  for (size_t t = 0; t < tiers_.size(); ++t) {
    const CacheSource source = tiers_[t]->source();
    if (source == CacheSource::kMemory) stats.memory_hits += hits_[t];
    if (source == CacheSource::kShared) stats.shared_hits += hits_[t];
    if (source == CacheSource::kDisk) stats.disk_hits += hits_[t];
    if (source == CacheSource::kDisk) stats.disk_write_errors += store_errors_[t];
  }
  const MemoryTier::Usage usage = memory_->usage();
  stats.entries = usage.entries;
  stats.bytes = usage.bytes;
  stats.evictions = usage.evictions;
  stats.shared_up = lease_ == nullptr || lease_->up();
  return stats;
}

}  // namespace kiln::server
