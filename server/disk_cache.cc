#include "server/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph/canonical.h"

namespace kiln::server {
namespace {

constexpr size_t kChecksumHex = 64;

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

std::string SealEntry(std::string_view bytes) {
  return absl::StrCat(Sha256Hex(bytes), "\n", absl::string_view(bytes.data(), bytes.size()));
}

absl::StatusOr<std::string> OpenEntry(std::string_view entry) {
  if (entry.size() < kChecksumHex + 1 || entry[kChecksumHex] != '\n' ||
      Sha256Hex(entry.substr(kChecksumHex + 1)) != entry.substr(0, kChecksumHex)) {
    return absl::DataLossError("the entry's checksum does not match its bytes");
  }
  return std::string(entry.substr(kChecksumHex + 1));
}

bool IsFunctionId(std::string_view id) {
  if (id.size() != 64) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::StatusOr<DiskCache> DiskCache::Open(std::string dir, int64_t max_bytes) {
  if (dir.empty()) return absl::InvalidArgumentError("the cache directory is empty");
  std::error_code made;
  std::filesystem::create_directories(dir, made);  // with its parents (~/.cache may be new)
  if (made) {
    return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", made.message()));
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(dir, " is not a directory"));
  }
  DiskCache cache(std::move(dir), max_bytes);
  cache.Trim();  // counts the bytes, and removes what a bound set lower than before exceeds
  return cache;
}

int DiskCache::Trim() const {
  struct Entry {
    std::filesystem::path path;
    int64_t bytes;
    std::filesystem::file_time_type used;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& f : std::filesystem::directory_iterator(dir_, ec)) {
    std::error_code fec;
    const std::string name = f.path().filename().string();
    const auto used = f.last_write_time(fec);
    const auto bytes = static_cast<int64_t>(f.file_size(fec));
    if (fec) continue;  // removed meanwhile by another server
    if (name.ends_with(".tmp")) {
      if (now - used > std::chrono::hours(1)) std::filesystem::remove(f.path(), fec);
      continue;
    }
    if (!name.ends_with(".kfn")) continue;
    entries.push_back({f.path(), bytes, used});
    total += bytes;
  }
  int removed = 0;
  if (max_bytes_ > 0 && total > max_bytes_) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.used < b.used; });
    for (const Entry& e : entries) {
      if (total <= max_bytes_ / 10 * 9) break;
      std::error_code rec;
      std::filesystem::remove(e.path, rec);
      total -= e.bytes;
      ++removed;
    }
  }
  approx_bytes_->store(total);
  return removed;
}

std::string DiskCache::PathOf(const std::string& id) const {
  return absl::StrCat(dir_, "/", id, ".kfn");
}

absl::Status DiskCache::Store(const std::string& id, std::string_view bytes) const {
  if (!IsFunctionId(id)) return absl::InvalidArgumentError("not a function id");
  static std::atomic<uint64_t> counter{0};
  const std::string tmp =
      absl::StrCat(dir_, "/.", id, ".", getpid(), ".", counter.fetch_add(1), ".tmp");
  const std::string content = SealEntry(bytes);
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", tmp);
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      unlink(tmp.c_str());
      return Errno("cannot write", tmp);
    }
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    unlink(tmp.c_str());
    return Errno("cannot flush", tmp);
  }
  if (rename(tmp.c_str(), PathOf(id).c_str()) != 0) {
    unlink(tmp.c_str());
    return Errno("cannot rename", tmp);
  }
  if (max_bytes_ > 0 && approx_bytes_->fetch_add(static_cast<int64_t>(content.size())) +
                                static_cast<int64_t>(content.size()) >
                            max_bytes_) {
    Trim();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> DiskCache::Load(const std::string& id) const {
  if (!IsFunctionId(id)) return absl::NotFoundError(absl::StrCat("no function '", id, "'"));
  const std::string path = PathOf(id);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("no cached function ", id));
  std::stringstream buffer;
  buffer << in.rdbuf();
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now: the last to be trimmed
  absl::StatusOr<std::string> body = OpenEntry(buffer.str());
  if (!body.ok()) {
    unlink(path.c_str());
    return absl::DataLossError(absl::StrCat("cache entry ", path, " is corrupt; removed"));
  }
  return body;
}

}  // namespace kiln::server
