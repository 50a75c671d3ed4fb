// The cache's second tier: one file per function id in a directory, so that a restarted server
// (or another replica sharing the directory) loads functions without compiling them again.
#ifndef KILN_SERVER_DISK_CACHE_H_
#define KILN_SERVER_DISK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kiln::server {

class DiskCache {
 public:
  // Entries live in `dir`, created if missing. With `max_bytes` > 0, the entries together stay
  // under it: the least recently used go first (a load refreshes an entry's time).
  static absl::StatusOr<DiskCache> Open(std::string dir, int64_t max_bytes = 0);

  // Writes the entry atomically: a temporary file, flushed, then renamed over <id>.kfn, so a
  // reader sees the whole entry or none and writers need no lock between them.
  absl::Status Store(const std::string& id, std::string_view bytes) const;
  // The entry's bytes: NOT_FOUND when absent; DATA_LOSS when its checksum does not match (the
  // corrupt file is removed, so the next compile replaces it).
  absl::StatusOr<std::string> Load(const std::string& id) const;

  // Removes least recently used entries until the directory holds at most 90% of max_bytes,
  // and temporary files a killed writer left over an hour ago. Several servers sharing the
  // directory may trim at once: an entry removed twice is removed. Returns the entries removed.
  int Trim() const;

  const std::string& dir() const { return dir_; }

 private:
  DiskCache(std::string dir, int64_t max_bytes)
      : dir_(std::move(dir)),
        max_bytes_(max_bytes),
        approx_bytes_(std::make_shared<std::atomic<int64_t>>(0)) {}
  std::string PathOf(const std::string& id) const;
  std::string dir_;
  int64_t max_bytes_;
  // Bytes in the directory as last counted plus those stored since (shared by copies).
  std::shared_ptr<std::atomic<int64_t>> approx_bytes_;
};

// The envelope every cache tier stores: the SHA-256 of the bytes in hex, a newline, the bytes.
std::string SealEntry(std::string_view bytes);
// The bytes of a sealed entry; DATA_LOSS when the checksum does not match.
absl::StatusOr<std::string> OpenEntry(std::string_view entry);

// True for a function id: 64 lowercase hex digits (never a path).
bool IsFunctionId(std::string_view id);

}  // namespace kiln::server

#endif  // KILN_SERVER_DISK_CACHE_H_
