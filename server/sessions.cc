#include "server/sessions.h"

#include <sys/random.h>

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/tensor/status_macros.h"
#include "proto/convert/error_reason.h"

namespace kiln::server {
namespace {

constexpr size_t kRememberedExpiredIds = 4096;

}  // namespace

std::string IdOf(const std::string& key) {
  if (key.empty()) return "(not a session id: 32 hex digits)";
  const size_t slash = key.find('/');
  return slash == std::string::npos ? key : key.substr(slash + 1);
}

std::string SessionKey(const std::string& tenant, const std::string& id) {
  bool hex = id.size() == 32;
  for (char c : id) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!hex) return "";  // not an id this server made: found nowhere
  return tenant.empty() ? id : absl::StrCat(tenant, "/", id);
}

std::string RandomId() {
  char bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n > 0) got += static_cast<size_t>(n);  // EINTR: try again
  }
  return absl::BytesToHexString(absl::string_view(bytes, sizeof(bytes)));
}

absl::StatusOr<SessionSnapshot> MemorySession::Read(const std::vector<std::string>& names) const {
  absl::MutexLock lock(&mutex_);
  SessionSnapshot out;
  out.version = version_;
  out.values.reserve(names.size());
  for (const std::string& name : names) {
    auto it = values_.find(name);
    if (it == values_.end()) {
      return absl::FailedPreconditionError(absl::StrCat("the session has no shared variable '",
                                                        name, "': set it with SetShared first"));
    }
    out.values.push_back(it->second);
  }
  return out;
}

absl::Status MemorySession::Write(std::vector<std::pair<std::string, Tensor>> values,
                                  int64_t if_version, const CallRecord*) {
  // Charged for the bytes it shows, a value may pin no more (not a small view of a large buffer).
  for (auto& [name, value] : values) value = value.Compact();
  absl::MutexLock lock(&mutex_);
  if (if_version != kAnyVersion && if_version != version_) {
    return absl::AbortedError("the session changed since its variables were read");
  }
  int64_t delta = 0;
  for (const auto& [name, value] : values) {
    delta += value.nbytes();
    if (auto it = values_.find(name); it != values_.end()) delta -= it->second.nbytes();
  }
  const SessionLimits& limits = store_->limits();
  if (limits.max_session_bytes > 0 && delta > 0 && bytes_ + delta > limits.max_session_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the session would hold ", bytes_ + delta,
                     " bytes of shared variables, more than this server's limit of ",
                     limits.max_session_bytes, " per session (--max_session_bytes)"));
  }
  RETURN_IF_ERROR(store_->Reserve(owner_, delta));
  bytes_ += delta;
  ++version_;
  for (auto& [name, value] : values) values_[name] = std::move(value);
  return absl::OkStatus();
}

// A retried call can reach this process only if it is still running, and then its first
// attempt's response was lost after the call ended; calls are not recorded here.
absl::StatusOr<std::string> MemorySession::Recorded(const std::string& call_id) const {
  return absl::NotFoundError(absl::StrCat("no call ", call_id, " recorded"));
}

absl::StatusOr<Tensor> MemorySession::Get(const std::string& name) const {
  absl::MutexLock lock(&mutex_);
  auto it = values_.find(name);
  if (it == values_.end()) {
    return absl::NotFoundError(absl::StrCat("the session has no shared variable '", name, "'"));
  }
  return it->second;
}

absl::Status MemorySession::Delete(const std::string& name) {
  absl::MutexLock lock(&mutex_);
  auto it = values_.find(name);
  if (it == values_.end()) {
    return absl::NotFoundError(absl::StrCat("the session has no shared variable '", name, "'"));
  }
  bytes_ -= it->second.nbytes();
  store_->Reserve(owner_, -it->second.nbytes()).IgnoreError();
  values_.erase(it);
  ++version_;
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, Tensor>> MemorySession::List() const {
  absl::MutexLock lock(&mutex_);
  return values_;
}

std::vector<std::pair<std::string, std::map<std::string, Tensor>>> MemorySessionStore::Contents()
    const {
  std::vector<std::pair<std::string, std::shared_ptr<MemorySession>>> sessions;
  {
    absl::MutexLock lock(&mutex_);
    sessions.assign(sessions_.begin(), sessions_.end());
  }
  std::vector<std::pair<std::string, std::map<std::string, Tensor>>> contents;
  contents.reserve(sessions.size());
  for (const auto& [key, session] : sessions) {
    absl::MutexLock lock(&session->mutex_);
    contents.emplace_back(key, session->values_);
  }
  return contents;
}

MemorySession::~MemorySession() {
  if (store_ != nullptr) store_->Release(owner_, bytes_);
}

MemorySessionStore::MemorySessionStore(SessionLimits limits)
    : limits_(limits), sweeper_(std::make_unique<Sweeper>(limits_.ttl, [this] { Expire(); })) {}

MemorySessionStore::~MemorySessionStore() {
  sweeper_.reset();
  // The sessions go first: each counts itself out of tenants_ as it goes.
  std::map<std::string, std::shared_ptr<MemorySession>> dropped;
  {
    absl::MutexLock lock(&mutex_);
    dropped.swap(sessions_);
  }
}

absl::StatusOr<std::string> MemorySessionStore::Create(const SessionOwner& owner) {
  std::string id = RandomId();
  auto session = std::make_shared<MemorySession>(this, owner);
  session->last_used_ns_ = SteadyNowNs();
  absl::MutexLock lock(&mutex_);
  if (limits_.max_sessions > 0 && static_cast<int64_t>(sessions_.size()) >= limits_.max_sessions) {
    session->store_ = nullptr;  // never counted in
    return absl::ResourceExhaustedError(
        absl::StrCat("this server already holds its limit of ", limits_.max_sessions,
                     " sessions (--max_sessions); delete one or retry later"));
  }
  TenantUse& use = tenants_[owner.tenant];
  if (owner.max_sessions > 0 && use.sessions >= owner.max_sessions) {
    session->store_ = nullptr;
    return WithReason(absl::ResourceExhaustedError(absl::StrCat(
                          "tenant '", owner.tenant, "' already holds its quota of ",
                          owner.max_sessions, " sessions (sessions=); delete one or retry later")),
                      v1::QUOTA_EXCEEDED, {{"quota", "sessions"}, {"tenant", owner.tenant}});
  }
  ++use.sessions;
  sessions_.emplace(SessionKey(owner.tenant, id), std::move(session));
  return id;
}

absl::StatusOr<std::shared_ptr<Session>> MemorySessionStore::Get(const std::string& key) {
  absl::MutexLock lock(&mutex_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) {
    if (expired_ids_.contains(key)) {
      return WithReason(
          absl::NotFoundError(absl::StrCat("session '", IdOf(key), "' expired after ",
                                           absl::FormatDuration(limits_.ttl),
                                           " idle (--session_ttl); create a new one")),
          v1::SESSION_NOT_FOUND, {{"session", IdOf(key)}});
    }
    return WithReason(absl::NotFoundError(absl::StrCat("no session '", IdOf(key), "'")),
                      v1::SESSION_NOT_FOUND, {{"session", IdOf(key)}});
  }
  it->second->last_used_ns_ = SteadyNowNs();
  return it->second;
}

absl::Status MemorySessionStore::Delete(const std::string& key) {
  std::shared_ptr<MemorySession> dropped;  // released outside the lock
  absl::MutexLock lock(&mutex_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) {
    return WithReason(absl::NotFoundError(absl::StrCat("no session '", IdOf(key), "'")),
                      v1::SESSION_NOT_FOUND, {{"session", IdOf(key)}});
  }
  dropped = std::move(it->second);
  sessions_.erase(it);
  return absl::OkStatus();
}

int MemorySessionStore::Expire() {
  if (!Expires(limits_.ttl)) return 0;
  const int64_t cutoff = SteadyNowNs() - absl::ToInt64Nanoseconds(limits_.ttl);
  std::vector<std::shared_ptr<MemorySession>> dropped;  // released outside the lock
  absl::MutexLock lock(&mutex_);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (it->second->last_used_ns_.load() >= cutoff) {
      ++it;
      continue;
    }
    if (expired_ids_.insert(it->first).second) expired_order_.push_back(it->first);
    if (expired_order_.size() > kRememberedExpiredIds) {
      expired_ids_.erase(expired_order_.front());
      expired_order_.pop_front();
    }
    dropped.push_back(std::move(it->second));
    it = sessions_.erase(it);
  }
  expired_count_ += dropped.size();
  return static_cast<int>(dropped.size());
}

size_t MemorySessionStore::size() const {
  absl::MutexLock lock(&mutex_);
  return sessions_.size();
}

absl::Status MemorySessionStore::Reserve(const SessionOwner& owner, int64_t delta) {
  absl::MutexLock lock(&mutex_);
  TenantUse& use = tenants_[owner.tenant];
  if (delta > 0 && limits_.max_total_bytes > 0 &&
      total_bytes_.load() + delta > limits_.max_total_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the sessions would hold more than this server's limit of ",
                     limits_.max_total_bytes, " bytes in all (--max_sessions_bytes)"));
  }
  if (delta > 0 && owner.max_bytes > 0 && use.bytes + delta > owner.max_bytes) {
    return WithReason(absl::ResourceExhaustedError(
                          absl::StrCat("tenant '", owner.tenant, "' would hold ", use.bytes + delta,
                                       " bytes of shared variables, more than its quota of ",
                                       owner.max_bytes, " (session_bytes=)")),
                      v1::QUOTA_EXCEEDED, {{"quota", "session_bytes"}, {"tenant", owner.tenant}});
  }
  total_bytes_ += delta;
  use.bytes += delta;
  return absl::OkStatus();
}

void MemorySessionStore::Release(const SessionOwner& owner, int64_t bytes) {
  absl::MutexLock lock(&mutex_);
  TenantUse& use = tenants_[owner.tenant];
  total_bytes_ -= bytes;
  use.bytes -= bytes;
  if (--use.sessions == 0) tenants_.erase(owner.tenant);
}

}  // namespace kiln::server
