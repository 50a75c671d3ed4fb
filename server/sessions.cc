#include "server/sessions.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kiln::server {

absl::StatusOr<std::vector<Tensor>> Session::Read(const std::vector<std::string>& names) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Tensor> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    auto it = values_.find(name);
    if (it == values_.end()) {
      return absl::FailedPreconditionError(absl::StrCat("the session has no shared variable '",
                                                        name, "': set it with SetShared first"));
    }
    out.push_back(it->second);
  }
  return out;
}

void Session::Write(std::vector<std::pair<std::string, Tensor>> values) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [name, value] : values) values_[name] = std::move(value);
}

absl::StatusOr<Tensor> Session::Get(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = values_.find(name);
  if (it == values_.end()) {
    return absl::NotFoundError(absl::StrCat("the session has no shared variable '", name, "'"));
  }
  return it->second;
}

absl::Status Session::Delete(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (values_.erase(name) == 0) {
    return absl::NotFoundError(absl::StrCat("the session has no shared variable '", name, "'"));
  }
  return absl::OkStatus();
}

std::map<std::string, Tensor> Session::List() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return values_;
}

std::string SessionStore::Create() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  const std::string id = absl::StrFormat("%016x%016x", rng(), rng());
  std::lock_guard<std::mutex> lock(mutex_);
  sessions_.emplace(id, std::make_shared<Session>());
  return id;
}

absl::StatusOr<std::shared_ptr<Session>> SessionStore::Get(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return absl::NotFoundError(absl::StrCat("no session '", id, "'"));
  return it->second;
}

absl::Status SessionStore::Delete(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (sessions_.erase(id) == 0) return absl::NotFoundError(absl::StrCat("no session '", id, "'"));
  return absl::OkStatus();
}

size_t SessionStore::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sessions_.size();
}

}  // namespace kiln::server
