#include "server/redis_cache.h"

#include <sys/random.h>
#include <unistd.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/tensor/status_macros.h"
#include "server/disk_cache.h"
#include "server/log.h"

namespace kiln::server {
namespace {

// The ids kept in kiln:hot; the least loaded go first.
constexpr int kHotIds = 1000;

std::string FunctionKey(const std::string& id) { return absl::StrCat("kiln:fn:", id); }
std::string LeaseKey(const std::string& id) { return absl::StrCat("kiln:lease:", id); }

std::string Owner() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  uint64_t nonce = 0;
  while (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce)) {
  }
  return absl::StrCat(host, ":", getpid(), ":", absl::Hex(nonce));
}

// KEYS[1] is the lease; ARGV[1] the owner. Deletes it, or renews it for ARGV[2] ms, only while
// this owner holds it.
constexpr char kReleaseScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end "
    "return 0";
constexpr char kRenewScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], "
    "ARGV[2]) end return 0";
// Counts a load of ARGV[1] and keeps the ARGV[2] most loaded ids.
constexpr char kTouchScript[] =
    "redis.call('zincrby', KEYS[1], 1, ARGV[1]) "
    "redis.call('zremrangebyrank', KEYS[1], 0, -tonumber(ARGV[2]) - 1) return 0";

}  // namespace

RedisCache::RedisCache(std::shared_ptr<Redis> redis, absl::Duration ttl, absl::Duration lease)
    : redis_(std::move(redis)),
      ttl_ms_(absl::StrCat(absl::ToInt64Milliseconds(ttl))),
      lease_ms_(absl::StrCat(absl::ToInt64Milliseconds(lease))),
      lease_(lease),
      owner_(Owner()),
      renewer_([this] { RenewLoop(); }) {}

RedisCache::~RedisCache() {
  {
    absl::MutexLock lock(&mutex_);
    stopping_ = true;
  }
  cv_.SignalAll();
  renewer_.join();
}

absl::StatusOr<std::string> RedisCache::Load(const std::string& id) {
  const std::string key = FunctionKey(id);
  ASSIGN_OR_RETURN(RedisReply r, redis_->Command({"GETEX", key, "PX", ttl_ms_}));
  if (r.kind != RedisReply::Kind::kString) {
    return absl::NotFoundError(absl::StrCat("redis has no function ", id));
  }
  absl::StatusOr<std::string> body = OpenEntry(r.str);
  if (!body.ok()) {
    redis_->Command({"DEL", key}).IgnoreError();
    return absl::DataLossError(absl::StrCat("redis entry ", key, " is corrupt; removed"));
  }
  return body;
}

absl::Status RedisCache::Store(const std::string& id, std::string_view bytes) {
  return redis_->Command({"SET", FunctionKey(id), SealEntry(bytes), "PX", ttl_ms_}).status();
}

absl::StatusOr<bool> RedisCache::TryLease(const std::string& id) {
  absl::StatusOr<RedisReply> r =
      redis_->Command({"SET", LeaseKey(id), owner_, "NX", "PX", lease_ms_});
  if (!r.ok()) return r.status();
  if (r->kind == RedisReply::Kind::kNil) return false;
  absl::MutexLock lock(&mutex_);
  held_.insert(id);
  return true;
}

void RedisCache::Release(const std::string& id) {
  {
    absl::MutexLock lock(&mutex_);
    held_.erase(id);
  }
  redis_->Eval(kReleaseScript, {LeaseKey(id)}, {owner_}).IgnoreError();  // else it lapses
}

void RedisCache::Touch(const std::string& id) {
  const std::string keep = absl::StrCat(kHotIds);
  redis_->Eval(kTouchScript, {"kiln:hot"}, {id, keep}).IgnoreError();
}

absl::StatusOr<std::vector<std::string>> RedisCache::Hottest(int n) {
  absl::StatusOr<RedisReply> r =
      redis_->Command({"ZREVRANGE", "kiln:hot", "0", absl::StrCat(n - 1)});
  if (!r.ok()) return r.status();
  std::vector<std::string> ids;
  for (const RedisReply& e : r->elements) {
    if (IsFunctionId(e.str)) ids.push_back(e.str);
  }
  return ids;
}

void RedisCache::RenewLoop() {
  absl::MutexLock lock(&mutex_);
  while (!stopping_) {
    cv_.WaitWithTimeout(&mutex_, lease_ / 3);
    const std::set<std::string> held = held_;
    mutex_.Unlock();
    for (const std::string& id : held) {
      redis_->Eval(kRenewScript, {LeaseKey(id)}, {owner_, lease_ms_}).IgnoreError();
    }
    mutex_.Lock();
  }
}

}  // namespace kiln::server
