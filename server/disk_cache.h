// The cache's second tier: one file per function id in a directory, so that a restarted server
// (or another replica sharing the directory) loads functions without compiling them again.
#ifndef KILN_SERVER_DISK_CACHE_H_
#define KILN_SERVER_DISK_CACHE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kiln::server {

class DiskCache {
 public:
  // Entries live in `dir`, created if missing.
  static absl::StatusOr<DiskCache> Open(std::string dir);

  // Writes the entry atomically: a temporary file, flushed, then renamed over <id>.kfn, so a
  // reader sees the whole entry or none and writers need no lock between them.
  absl::Status Store(const std::string& id, std::string_view bytes) const;
  // The entry's bytes: NOT_FOUND when absent; DATA_LOSS when its checksum does not match (the
  // corrupt file is removed, so the next compile replaces it).
  absl::StatusOr<std::string> Load(const std::string& id) const;

  const std::string& dir() const { return dir_; }

 private:
  explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}
  std::string PathOf(const std::string& id) const;
  std::string dir_;
};

// True for a function id: 64 lowercase hex digits (never a path).
bool IsFunctionId(std::string_view id);

}  // namespace kiln::server

#endif  // KILN_SERVER_DISK_CACHE_H_
