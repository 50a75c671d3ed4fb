#include "server/redis.h"

#include <hiredis.h>

#include <cerrno>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "core/tensor/status_macros.h"
#include "server/log.h"

namespace kiln::server {
namespace {

// Idle connections kept for reuse; more may be open while commands run.
constexpr size_t kMaxIdle = 16;

RedisReply Convert(const redisReply& r) {
  RedisReply out;
  switch (r.type) {
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::kInteger;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.kind = RedisReply::Kind::kString;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::kArray;
      out.elements.reserve(r.elements);
      for (size_t i = 0; i < r.elements; ++i) out.elements.push_back(Convert(*r.element[i]));
      break;
    default:
      break;
  }
  return out;
}

}  // namespace

struct Redis::Connection {
  redisContext* context = nullptr;
  bool reused = false;  // served a command before
  ~Connection() {
    if (context != nullptr) redisFree(context);
  }
};

absl::StatusOr<std::unique_ptr<Redis>> Redis::Create(const std::string& address,
                                                     absl::Duration timeout) {
  absl::string_view rest = address;
  absl::ConsumePrefix(&rest, "redis://");
  const size_t colon = rest.rfind(':');
  int port = 6379;
  std::string host(rest.substr(0, colon));
  if (colon != absl::string_view::npos &&
      (!absl::SimpleAtoi(rest.substr(colon + 1), &port) || port <= 0 || port > 65535)) {
    host.clear();
  }
  if (host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--redis: '", address, "' is not host:port or redis://host:port"));
  }
  return std::unique_ptr<Redis>(new Redis(address, std::move(host), port, timeout));
}

Redis::Redis(std::string address, std::string host, int port, absl::Duration timeout)
    : address_(std::move(address)), host_(std::move(host)), port_(port), timeout_(timeout) {}

Redis::~Redis() = default;

void Redis::MarkDown() {
  errors_.fetch_add(1);
  absl::MutexLock lock(&mutex_);
  retry_after_ = absl::Now() + absl::Seconds(1);
  idle_.clear();  // they all went to the server that failed
  if (up_.exchange(false)) {
    Log(LogLevel::kWarning, "redis is unreachable", {{"redis", address_}});
  }
}

absl::StatusOr<std::unique_ptr<Redis::Connection>> Redis::Take() {
  {
    absl::MutexLock lock(&mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<Connection> c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
    if (absl::Now() < retry_after_) {
      return absl::UnavailableError(absl::StrCat("redis at ", address_, " is down"));
    }
  }
  auto c = std::make_unique<Connection>();
  c->context = redisConnectWithTimeout(host_.c_str(), port_, absl::ToTimeval(timeout_));
  if (c->context == nullptr || c->context->err != 0) {
    std::string why = c->context != nullptr ? c->context->errstr : "out of memory";
    MarkDown();
    return absl::UnavailableError(absl::StrCat("cannot connect to redis at ", address_, ": ", why));
  }
  redisSetTimeout(c->context, absl::ToTimeval(timeout_));
  redisEnableKeepAlive(c->context);
  if (!up_.exchange(true)) Log(LogLevel::kInfo, "redis is back", {{"redis", address_}});
  return c;
}

void Redis::Return(std::unique_ptr<Connection> c) {
  absl::MutexLock lock(&mutex_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(c));
}

absl::StatusOr<RedisReply> Redis::Command(const std::vector<std::string_view>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (std::string_view a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  redisReply* reply = nullptr;
  std::unique_ptr<Connection> c;
  // A pooled connection that Redis closed meanwhile (a restart) fails at once with EOF or a
  // reset, before Redis ran anything: then the command goes again on a new connection.
  for (int attempt = 0; attempt < 2 && reply == nullptr; ++attempt) {
    ASSIGN_OR_RETURN(std::unique_ptr<Connection> taken, Take());
    c = std::move(taken);
    reply = static_cast<redisReply*>(
        redisCommandArgv(c->context, static_cast<int>(argv.size()), argv.data(), lengths.data()));
    const bool closed =
        c->context->err == REDIS_ERR_EOF ||
        (c->context->err == REDIS_ERR_IO && (errno == ECONNRESET || errno == EPIPE));
    if (reply == nullptr && (!c->reused || !closed)) break;
    if (reply == nullptr) {  // the other pooled connections went to the same old server
      absl::MutexLock lock(&mutex_);
      idle_.clear();
    }
  }
  if (reply == nullptr) {  // the connection broke or timed out: it cannot be reused
    std::string why = c->context->errstr;
    MarkDown();
    return absl::UnavailableError(absl::StrCat("redis at ", address_, ": ", why));
  }
  std::unique_ptr<redisReply, void (*)(void*)> owned(reply, freeReplyObject);
  c->reused = true;
  Return(std::move(c));
  if (reply->type == REDIS_REPLY_ERROR) {
    std::string message(reply->str, reply->len);
    if (absl::StartsWith(message, "OOM")) {
      return absl::ResourceExhaustedError(
          absl::StrCat("redis at ", address_, " is full: ", message));
    }
    return absl::InternalError(absl::StrCat("redis at ", address_, ": ", message));
  }
  return Convert(*reply);
}

absl::StatusOr<RedisReply> Redis::Eval(std::string_view script,
                                       const std::vector<std::string_view>& keys,
                                       const std::vector<std::string_view>& args) {
  const std::string nkeys = absl::StrCat(keys.size());
  std::vector<std::string_view> argv = {"EVAL", script, nkeys};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return Command(argv);
}

}  // namespace kiln::server
