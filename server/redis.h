// A small pool of blocking connections to one Redis server (Debian's hiredis underneath). Every
// command has a timeout; a broken connection is dropped and a new one made by a later command,
// at most once a second while Redis is down, so an outage costs callers a fast UNAVAILABLE, not
// a connect timeout each.
#ifndef KILN_SERVER_REDIS_H_
#define KILN_SERVER_REDIS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kiln::server {

// One reply of Redis: nil, an integer, a string (bulk or status) or an array of replies.
struct RedisReply {
  enum class Kind { kNil, kInteger, kString, kArray };
  Kind kind = Kind::kNil;
  int64_t integer = 0;
  std::string str;
  std::vector<RedisReply> elements;
};

class Redis {
 public:
  // `address` is host:port or redis://host:port (no connection is made yet: Redis may start
  // later). INVALID_ARGUMENT when it cannot be parsed.
  static absl::StatusOr<std::unique_ptr<Redis>> Create(const std::string& address,
                                                       absl::Duration timeout = absl::Seconds(1));
  ~Redis();

  // Runs one command (binary-safe arguments). UNAVAILABLE when Redis cannot be reached;
  // RESOURCE_EXHAUSTED when Redis is out of memory (-OOM); INTERNAL for any other error reply.
  absl::StatusOr<RedisReply> Command(const std::vector<std::string_view>& args);
  // EVAL of a Lua script with its keys and arguments.
  absl::StatusOr<RedisReply> Eval(std::string_view script,
                                  const std::vector<std::string_view>& keys,
                                  const std::vector<std::string_view>& args);

  // False after a command could not reach Redis, until one does again.
  bool up() const { return up_.load(); }
  // Commands that could not reach Redis.
  uint64_t errors() const { return errors_.load(); }
  const std::string& address() const { return address_; }

 private:
  struct Connection;
  Redis(std::string address, std::string host, int port, absl::Duration timeout);
  // A pooled connection, or a new one; UNAVAILABLE while Redis is known to be down.
  absl::StatusOr<std::unique_ptr<Connection>> Take();
  void Return(std::unique_ptr<Connection> c);
  void MarkDown();

  const std::string address_, host_;
  const int port_;
  const absl::Duration timeout_;
  absl::Mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mutex_);
  absl::Time retry_after_ ABSL_GUARDED_BY(mutex_) = absl::InfinitePast();
  std::atomic<bool> up_{true};
  std::atomic<uint64_t> errors_{0};
};

}  // namespace kiln::server

#endif  // KILN_SERVER_REDIS_H_
