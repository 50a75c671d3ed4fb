#include "server/shm_regions.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "proto/convert/error_reason.h"

namespace kiln::server {

bool ValidShmName(const std::string& name) {
  constexpr std::string_view kPrefix = "/kiln-";
  if (!name.starts_with(kPrefix)) return false;
  const size_t n = name.size() - kPrefix.size();
  if (n < 16 || n > 128) return false;
  return std::all_of(name.begin() + kPrefix.size(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
  });
}

namespace {

// The guarded copy running on this thread, if any: where SIGBUS returns to. Volatile: the
// handler reads it, so its stores around the memcpy must not be elided.
thread_local sigjmp_buf* volatile copy_fault = nullptr;
struct sigaction previous_sigbus;

// SIGBUS inside a guarded copy ends the copy; any other goes to the handler that was there
// before (by default, the process ends as it would have).
void OnSigbus(int, siginfo_t*, void*) {
  if (copy_fault != nullptr) siglongjmp(*copy_fault, 1);
  sigaction(SIGBUS, &previous_sigbus, nullptr);  // the faulting access runs again under it
}

// memcpy that returns false instead of ending the process when the source or destination is
// a mapping past its object's end (the client shrank it).
bool GuardedCopy(void* dst, const void* src, size_t n) {
  static const bool installed = [] {
    struct sigaction action = {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGBUS, &action, &previous_sigbus) == 0;
  }();
  if (!installed) return false;
  sigjmp_buf fault;
  if (sigsetjmp(fault, 0) != 0) {
    copy_fault = nullptr;
    return false;
  }
  copy_fault = &fault;
  std::memcpy(dst, src, n);
  copy_fault = nullptr;
  return true;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Region>> Region::Map(int fd, uint64_t size) {
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("RegisterRegion: cannot map ", size, " bytes: ", std::strerror(errno)));
  }
  return std::make_shared<Region>(base, size);
}

Region::~Region() { munmap(base_, size_); }

absl::Status Region::CheckSlice(const char* what, uint64_t offset, uint64_t n) const {
  if (offset > size_ || n > size_ - offset) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": bytes [", offset, ", ", offset, " + ",
                                                   n, ") are outside the region's ", size_));
  }
  return absl::OkStatus();
}

absl::Status Region::Read(uint64_t offset, uint64_t n, void* out) const {
  RETURN_IF_ERROR(CheckSlice("shared-memory region", offset, n));
  if (!GuardedCopy(out, base_ + offset, n)) {
    return absl::DataLossError(absl::StrCat("shared-memory region: ", n, " bytes at ", offset,
                                            " could not be read: the object shrank after "
                                            "registration"));
  }
  return absl::OkStatus();
}

absl::Status Region::Write(uint64_t offset, uint64_t n, const void* data) const {
  RETURN_IF_ERROR(CheckSlice("shared-memory region", offset, n));
  if (!GuardedCopy(base_ + offset, data, n)) {
    return absl::DataLossError(absl::StrCat("shared-memory region: ", n, " bytes at ", offset,
                                            " could not be written: the object shrank after "
                                            "registration"));
  }
  return absl::OkStatus();
}

void Region::Touch() { last_used_ns_ = SteadyNowNs(); }

RegionRegistry::RegionRegistry(RegionLimits limits)
    : limits_(limits),
      sweeper_(std::make_unique<Sweeper>(limits_.enabled ? limits_.ttl : absl::ZeroDuration(),
                                         [this] { Expire(); })) {}

RegionRegistry::~RegionRegistry() { sweeper_.reset(); }

absl::Status RegionRegistry::Register(const std::string& session_key, const std::string& name,
                                      const std::string& shm_name, uint64_t byte_size) {
  if (!limits_.enabled) {
    return WithReason(absl::FailedPreconditionError("this server takes no shared-memory regions "
                                                    "(--shm=false): send tensors in messages"),
                      v1::SHM_UNAVAILABLE);
  }
  if (session_key.empty()) return absl::InvalidArgumentError("RegisterRegion: no session given");
  if (name.empty() || name.size() > 256) {
    return absl::InvalidArgumentError("RegisterRegion: the region's name must have 1 to 256 bytes");
  }
  if (!ValidShmName(shm_name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RegisterRegion: shm_name '", shm_name.substr(0, 200),
        "' is not \"/kiln-\" followed by 16 to 128 of [A-Za-z0-9_-]"));
  }
  if (byte_size == 0 || byte_size > static_cast<uint64_t>(limits_.max_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("RegisterRegion: byte_size ", byte_size,
                                                   " is not in [1, ", limits_.max_bytes, "]"));
  }
  const int fd = shm_open(shm_name.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
  if (fd < 0) {
    return WithReason(absl::NotFoundError(absl::StrCat(
                          "RegisterRegion: cannot open ", shm_name, " here (", std::strerror(errno),
                          "): is the server on another host or in a container?")),
                      v1::SHM_UNAVAILABLE);
  }
  absl::Cleanup close_fd = [fd] { close(fd); };  // the mapping keeps the object
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) < byte_size) {
    return absl::InvalidArgumentError(absl::StrCat("RegisterRegion: ", shm_name, " has ",
                                                   st.st_size, " bytes, fewer than byte_size ",
                                                   byte_size));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<Region> region, Region::Map(fd, byte_size));
  region->Touch();
  std::shared_ptr<Region> replaced;  // closed outside the lock
  absl::MutexLock lock(&mutex_);
  const Key key{session_key, name};
  auto it = regions_.find(key);
  const uint64_t freed = it == regions_.end() ? 0 : it->second->size();
  if (it == regions_.end()) {
    if (static_cast<int64_t>(regions_.size()) >= limits_.max_regions) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "this server holds its limit of ", limits_.max_regions, " regions (--shm_max_regions)"));
    }
    const auto first = regions_.lower_bound({session_key, ""});
    int64_t of_session = 0;
    for (auto r = first; r != regions_.end() && r->first.first == session_key; ++r) ++of_session;
    if (of_session >= limits_.max_regions_per_session) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the session holds its limit of ", limits_.max_regions_per_session,
                       " regions: unregister one first"));
    }
  }
  if (bytes_ - static_cast<int64_t>(freed) + static_cast<int64_t>(byte_size) > limits_.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("the regions would pass this server's ",
                                                     limits_.max_bytes, " bytes (--shm_max_bytes)"));
  }
  bytes_ += static_cast<int64_t>(byte_size) - static_cast<int64_t>(freed);
  if (it != regions_.end()) {
    replaced = std::move(it->second);
    it->second = std::move(region);
  } else {
    regions_.emplace(key, std::move(region));
  }
  return absl::OkStatus();
}

absl::Status RegionRegistry::Unregister(const std::string& session_key, const std::string& name) {
  std::shared_ptr<Region> dropped;
  absl::MutexLock lock(&mutex_);
  auto it = regions_.find({session_key, name});
  if (it == regions_.end()) {
    return WithReason(absl::NotFoundError(absl::StrCat("the session has no region '", name, "'")),
                      v1::REGION_UNKNOWN, {{"region", name.substr(0, 256)}});
  }
  bytes_ -= static_cast<int64_t>(it->second->size());
  dropped = std::move(it->second);
  regions_.erase(it);
  return absl::OkStatus();
}

void RegionRegistry::DropSession(const std::string& session_key) {
  std::vector<std::shared_ptr<Region>> dropped;
  absl::MutexLock lock(&mutex_);
  auto it = regions_.lower_bound({session_key, ""});
  while (it != regions_.end() && it->first.first == session_key) {
    bytes_ -= static_cast<int64_t>(it->second->size());
    dropped.push_back(std::move(it->second));
    it = regions_.erase(it);
  }
}

absl::StatusOr<std::shared_ptr<Region>> RegionRegistry::Find(const std::string& session_key,
                                                             const std::string& name) {
  absl::MutexLock lock(&mutex_);
  auto it = regions_.find({session_key, name});
  if (it == regions_.end()) {
    return WithReason(
        absl::NotFoundError(absl::StrCat(
            "the session has no region '", name.substr(0, 256),
            "' on this server (never registered, unregistered, or idle past --shm_ttl): register "
            "it again")),
        v1::REGION_UNKNOWN, {{"region", name.substr(0, 256)}});
  }
  it->second->Touch();
  return it->second;
}

int RegionRegistry::Expire() {
  if (!Expires(limits_.ttl)) return 0;
  const int64_t cutoff = SteadyNowNs() - absl::ToInt64Nanoseconds(limits_.ttl);
  std::vector<std::shared_ptr<Region>> dropped;  // closed outside the lock
  absl::MutexLock lock(&mutex_);
  for (auto it = regions_.begin(); it != regions_.end();) {
    if (it->second->last_used_ns() >= cutoff) {
      ++it;
      continue;
    }
    bytes_ -= static_cast<int64_t>(it->second->size());
    dropped.push_back(std::move(it->second));
    it = regions_.erase(it);
  }
  return static_cast<int>(dropped.size());
}

int64_t RegionRegistry::size() const {
  absl::MutexLock lock(&mutex_);
  return static_cast<int64_t>(regions_.size());
}

int64_t RegionRegistry::bytes() const {
  absl::MutexLock lock(&mutex_);
  return bytes_;
}

}  // namespace kiln::server
