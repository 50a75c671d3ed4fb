#include "server/redis_sessions.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/tensor/status_macros.h"
#include "proto/convert/error_reason.h"
#include "proto/convert/tensor_convert.h"

namespace kiln::server {
namespace {

std::string RedisKey(const std::string& key) { return absl::StrCat("kiln:session:", key); }

// The tenant's sessions by expiry (a sorted set) and their bytes (a hash), both keyed by session
// key, for its quotas. `key` is a store key: "<tenant>/<id>", or "<id>" without tenants.
std::pair<std::string, std::string> TenantKeys(const std::string& key) {
  const size_t slash = key.find('/');
  const std::string tenant = slash == std::string::npos ? "" : key.substr(0, slash);
  return {absl::StrCat("kiln:tenant:", tenant, ":sessions"),
          absl::StrCat("kiln:tenant:", tenant, ":bytes")};
}

// Lua shared by the scripts: the time on Redis's clock in ms, and the removal of a tenant's
// sessions that expired (KEYS[2] the sorted set, KEYS[3] the bytes).
#define KILN_LUA_PRELUDE                                                            \
  "local t = redis.call('time') local now = t[1] * 1000 + math.floor(t[2] / 1000) " \
  "local function purge() "                                                         \
  "  local gone = redis.call('zrangebyscore', KEYS[2], '-inf', now) "               \
  "  for _, m in ipairs(gone) do redis.call('hdel', KEYS[3], m) end "               \
  "  if #gone > 0 then redis.call('zremrangebyscore', KEYS[2], '-inf', now) end "   \
  "end "

// KEYS: the session, the tenant's sessions and bytes. ARGV: the TTL in ms (0: none), the
// tenant's session quota and byte quota (0: none). Returns 1, or 0 at the session quota.
constexpr char kCreateScript[] = KILN_LUA_PRELUDE R"lua(
purge()
local quota = tonumber(ARGV[2])
if quota > 0 and redis.call('zcard', KEYS[2]) >= quota then return 0 end
redis.call('hset', KEYS[1], 'v', 0, 'b', 0, 'qb', ARGV[3])
local ttl = tonumber(ARGV[1])
if ttl > 0 then redis.call('pexpire', KEYS[1], ttl) end
redis.call('zadd', KEYS[2], ttl > 0 and now + ttl or '+inf', KEYS[1])
redis.call('hset', KEYS[3], KEYS[1], 0)
return 1
)lua";

// KEYS: the session, the tenant's sessions. ARGV: the TTL in ms (0: none). Refreshes the idle
// expiry; returns 0 when the session does not exist.
constexpr char kTouchScript[] = R"lua(
local ttl = tonumber(ARGV[1])
if ttl <= 0 then return redis.call('exists', KEYS[1]) end
if redis.call('pexpire', KEYS[1], ttl) == 0 then return 0 end
local t = redis.call('time')
redis.call('zadd', KEYS[2], 'XX', t[1] * 1000 + math.floor(t[2] / 1000) + ttl, KEYS[1])
return 1
)lua";

// KEYS: the session, the tenant's sessions and bytes. Returns 1, or 0 when it did not exist.
constexpr char kDropScript[] = R"lua(
redis.call('zrem', KEYS[2], KEYS[1])
redis.call('hdel', KEYS[3], KEYS[1])
return redis.call('del', KEYS[1])
)lua";
std::string Field(const std::string& name) { return absl::StrCat("s:", name); }
// How long a call's outputs are kept for its retries.
constexpr char kCallRecordMs[] = "600000";

// KEYS: the session, the tenant's sessions and bytes, and if given the call's record. ARGV: the
// expected version (-1: any), the byte limit of one session (0: none), the TTL in ms (0: none),
// the record's TTL and bytes, then field and value pairs. Returns the new version, -1 when the
// session is gone, -2 on a version conflict, -3 past the session's byte limit, -4 past the
// tenant's byte quota (kept in the session as 'qb' when it was created).
constexpr char kWriteScript[] = KILN_LUA_PRELUDE R"lua(
local v = redis.call('hget', KEYS[1], 'v')
if not v then return -1 end
if ARGV[1] ~= '-1' and v ~= ARGV[1] then return -2 end
local bytes = tonumber(redis.call('hget', KEYS[1], 'b'))
local delta = 0
for i = 6, #ARGV, 2 do
  delta = delta + #ARGV[i + 1] - redis.call('hstrlen', KEYS[1], ARGV[i])
end
local limit = tonumber(ARGV[2])
if limit > 0 and delta > 0 and bytes + delta > limit then return -3 end
local quota = tonumber(redis.call('hget', KEYS[1], 'qb') or '0')
if quota > 0 and delta > 0 then
  purge()
  local total = 0
  for _, n in ipairs(redis.call('hvals', KEYS[3])) do total = total + tonumber(n) end
  if total + delta > quota then return -4 end
end
for i = 6, #ARGV, 2 do redis.call('hset', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('hset', KEYS[1], 'b', bytes + delta)
redis.call('hset', KEYS[3], KEYS[1], bytes + delta)
if tonumber(ARGV[3]) > 0 then redis.call('pexpire', KEYS[1], ARGV[3]) end
if KEYS[4] then redis.call('set', KEYS[4], ARGV[5], 'PX', ARGV[4]) end
return redis.call('hincrby', KEYS[1], 'v', 1)
)lua";

// KEYS: the session, the tenant's sessions and bytes; ARGV[1]: the field. Returns 1, or 0 when
// there is no such variable.
constexpr char kDeleteScript[] = R"lua(
local n = redis.call('hstrlen', KEYS[1], ARGV[1])
if redis.call('hdel', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('hset', KEYS[3], KEYS[1], redis.call('hincrby', KEYS[1], 'b', -n))
redis.call('hincrby', KEYS[1], 'v', 1)
return 1
)lua";

absl::Status SessionGone(const std::string& key) {
  return WithReason(
      absl::NotFoundError(absl::StrCat("no session '", IdOf(key),
                                       "' (deleted, or expired after --session_ttl idle)")),
      v1::SESSION_NOT_FOUND, {{"session", IdOf(key)}});
}

absl::StatusOr<Tensor> Decode(const std::string& bytes, const std::string& name) {
  v1::Tensor proto;
  if (!proto.ParseFromString(bytes)) {
    return absl::DataLossError(absl::StrCat("shared variable '", name, "' is corrupt in redis"));
  }
  return FromProto(proto);
}

class RedisSession final : public Session {
 public:
  RedisSession(std::shared_ptr<Redis> redis, std::string id, const SessionLimits& limits)
      : redis_(std::move(redis)),
        id_(std::move(id)),
        key_(RedisKey(id_)),
        tenant_keys_(TenantKeys(key_)),
        limits_(limits) {}

  absl::StatusOr<SessionSnapshot> Read(const std::vector<std::string>& names) const override {
    std::vector<std::string> fields;
    for (const std::string& name : names) fields.push_back(Field(name));
    std::vector<std::string_view> args = {"HMGET", key_, "v"};
    args.insert(args.end(), fields.begin(), fields.end());
    ASSIGN_OR_RETURN(RedisReply r, redis_->Command(args));
    if (r.elements.empty() || r.elements[0].kind != RedisReply::Kind::kString) {
      return SessionGone(id_);
    }
    SessionSnapshot out;
    out.version = std::stoll(r.elements[0].str);
    for (size_t i = 0; i < names.size(); ++i) {
      const RedisReply& e = r.elements[i + 1];
      if (e.kind != RedisReply::Kind::kString) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the session has no shared variable '", names[i], "': set it with SetShared first"));
      }
      absl::StatusOr<Tensor> t = Decode(e.str, names[i]);
      if (!t.ok()) return t.status();
      out.values.push_back(*std::move(t));
    }
    return out;
  }

  absl::Status Write(std::vector<std::pair<std::string, Tensor>> values, int64_t if_version,
                     const CallRecord* record) override {
    std::vector<std::string> owned = {absl::StrCat(if_version),
                                      absl::StrCat(limits_.max_session_bytes),
                                      absl::StrCat(absl::ToInt64Milliseconds(limits_.ttl)),
                                      kCallRecordMs, record != nullptr ? record->outputs : ""};
    for (const auto& [name, value] : values) {
      owned.push_back(Field(name));
      owned.push_back(ToProto(value).SerializeAsString());
    }
    std::vector<std::string_view> keys = {key_, tenant_keys_.first, tenant_keys_.second};
    const std::string record_key =
        record != nullptr ? absl::StrCat(key_, ":call:", record->call_id) : "";
    if (record != nullptr) keys.push_back(record_key);
    absl::StatusOr<RedisReply> r =
        redis_->Eval(kWriteScript, keys, std::vector<std::string_view>(owned.begin(), owned.end()));
    if (!r.ok()) return r.status();
    switch (r->integer) {
      case -1:
        return SessionGone(id_);
      case -2:
        return absl::AbortedError("the session changed since its variables were read");
      case -3:
        return absl::ResourceExhaustedError(
            absl::StrCat("the session would hold more than this server's limit of ",
                         limits_.max_session_bytes, " bytes (--max_session_bytes)"));
      case -4:
        return WithReason(absl::ResourceExhaustedError("the tenant's sessions would hold more "
                                                       "bytes than its quota (session_bytes=)"),
                          v1::QUOTA_EXCEEDED, {{"quota", "session_bytes"}});
      default:
        return absl::OkStatus();
    }
  }

  absl::StatusOr<std::string> Recorded(const std::string& call_id) const override {
    ASSIGN_OR_RETURN(RedisReply r, redis_->Command({"GET", absl::StrCat(key_, ":call:", call_id)}));
    if (r.kind != RedisReply::Kind::kString) {
      return absl::NotFoundError(absl::StrCat("no call ", call_id, " recorded"));
    }
    return std::move(r.str);
  }

  absl::StatusOr<Tensor> Get(const std::string& name) const override {
    ASSIGN_OR_RETURN(RedisReply r, redis_->Command({"HGET", key_, Field(name)}));
    if (r.kind != RedisReply::Kind::kString) {
      return absl::NotFoundError(absl::StrCat("the session has no shared variable '", name, "'"));
    }
    return Decode(r.str, name);
  }

  absl::Status Delete(const std::string& name) override {
    absl::StatusOr<RedisReply> r =
        redis_->Eval(kDeleteScript, {key_, tenant_keys_.first, tenant_keys_.second}, {Field(name)});
    if (!r.ok()) return r.status();
    if (r->integer == 0) {
      return absl::NotFoundError(absl::StrCat("the session has no shared variable '", name, "'"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::map<std::string, Tensor>> List() const override {
    ASSIGN_OR_RETURN(RedisReply r, redis_->Command({"HGETALL", key_}));
    std::map<std::string, Tensor> out;
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2) {
      const std::string& field = r.elements[i].str;
      if (!absl::StartsWith(field, "s:")) continue;
      absl::StatusOr<Tensor> t = Decode(r.elements[i + 1].str, field.substr(2));
      if (!t.ok()) return t.status();
      out.emplace(field.substr(2), *std::move(t));
    }
    return out;
  }

 private:
  const std::shared_ptr<Redis> redis_;
  const std::string id_, key_;
  const std::pair<std::string, std::string> tenant_keys_;  // its tenant's sessions and bytes
  const SessionLimits limits_;
};

}  // namespace

RedisSessionStore::RedisSessionStore(std::shared_ptr<Redis> redis, SessionLimits limits)
    : redis_(std::move(redis)), limits_(limits) {}

std::string RedisSessionStore::TtlMs() const {
  const bool expires =
      limits_.ttl > absl::ZeroDuration() && limits_.ttl != absl::InfiniteDuration();
  return absl::StrCat(expires ? absl::ToInt64Milliseconds(limits_.ttl) : 0);
}

absl::StatusOr<std::string> RedisSessionStore::Create(const SessionOwner& owner) {
  std::string id = RandomId();
  const std::string key = RedisKey(SessionKey(owner.tenant, id));
  const auto [sessions, bytes] = TenantKeys(key);
  absl::StatusOr<RedisReply> r =
      redis_->Eval(kCreateScript, {key, sessions, bytes},
                   {TtlMs(), absl::StrCat(owner.max_sessions), absl::StrCat(owner.max_bytes)});
  if (!r.ok()) return r.status();
  if (r->integer == 0) {
    return WithReason(absl::ResourceExhaustedError(absl::StrCat(
                          "tenant '", owner.tenant, "' already holds its quota of ",
                          owner.max_sessions, " sessions (sessions=); delete one or retry later")),
                      v1::QUOTA_EXCEEDED, {{"quota", "sessions"}, {"tenant", owner.tenant}});
  }
  return id;
}

absl::StatusOr<std::shared_ptr<Session>> RedisSessionStore::Get(const std::string& id) {
  if (id.empty()) return SessionGone(id);
  const std::string key = RedisKey(id);
  absl::StatusOr<RedisReply> r =
      redis_->Eval(kTouchScript, {key, TenantKeys(key).first}, {TtlMs()});
  if (!r.ok()) return r.status();
  if (r->integer == 0) return SessionGone(id);
  absl::MutexLock lock(&mutex_);
  if (std::shared_ptr<Session> live = live_[id].lock()) return live;
  // The last holder's release drops the entry, unless a newer object took it meanwhile.
  std::shared_ptr<Session> session(new RedisSession(redis_, id, limits_), [this, id](Session* s) {
    {
      absl::MutexLock lock(&mutex_);
      if (auto it = live_.find(id); it != live_.end() && it->second.expired()) live_.erase(it);
    }
    delete s;
  });
  live_[id] = session;
  return session;
}

absl::Status RedisSessionStore::Delete(const std::string& id) {
  if (id.empty()) return SessionGone(id);
  const std::string key = RedisKey(id);
  const auto [sessions, bytes] = TenantKeys(key);
  ASSIGN_OR_RETURN(RedisReply r, redis_->Eval(kDropScript, {key, sessions, bytes}, {}));
  if (r.integer == 0) return SessionGone(id);
  return absl::OkStatus();
}

}  // namespace kiln::server
