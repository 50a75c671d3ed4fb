// Sessions: the values of shared variables, by name, that executions read and update.
#ifndef KILN_SERVER_SESSIONS_H_
#define KILN_SERVER_SESSIONS_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/runtime/tensor.h"

namespace kiln::server {

class Session {
 public:
  // The values of `names` read together; FAILED_PRECONDITION naming the first one missing.
  absl::StatusOr<std::vector<Tensor>> Read(const std::vector<std::string>& names) const;
  // Replaces several values at once: a reader sees all of them or none.
  void Write(std::vector<std::pair<std::string, Tensor>> values);
  // One value; NOT_FOUND when the session has no variable of that name.
  absl::StatusOr<Tensor> Get(const std::string& name) const;
  absl::Status Delete(const std::string& name);
  // Every variable, by name.
  std::map<std::string, Tensor> List() const;
  // Held by a call with updates from before it reads until after it writes, so that concurrent
  // updating calls on one session run one after another and never lose an update.
  std::mutex& update_mutex() { return update_mutex_; }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Tensor> values_;
  std::mutex update_mutex_;
};

// Every session of the server, by id.
class SessionStore {
 public:
  // A new session with a random 128-bit id.
  std::string Create();
  // NOT_FOUND when the id is unknown.
  absl::StatusOr<std::shared_ptr<Session>> Get(const std::string& id) const;
  absl::Status Delete(const std::string& id);
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_SESSIONS_H_
