// Same-host shared memory: POSIX shared-memory objects that clients register with their session,
// so that a call's arguments and results are named by region, offset and size instead of being
// copied into messages. The server maps each region once and copies bytes in and out with
// memcpy under a SIGBUS guard: kernels never read client memory, so a client that rewrites its
// object during a call gets its own garbage, never a changing input; one that shrinks it reads
// zeros up to the end of its last page and gets DATA_LOSS past it, never a crash.
#ifndef KILN_SERVER_SHM_REGIONS_H_
#define KILN_SERVER_SHM_REGIONS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/sweeper.h"

namespace kiln::server {

// The registry's limits (flags of kiln-server).
struct RegionLimits {
  bool enabled = true;                           // --shm
  absl::Duration ttl = absl::Seconds(60);        // --shm_ttl: idle time before a region is closed
  int64_t max_regions = 256;  // of every session together (each holds a mapping)
  int64_t max_regions_per_session = 16;
  int64_t max_bytes = int64_t{64} << 30;  // registered sizes together (the objects' memory)
};

// One registered object: its mapping and the bytes calls may use.
class Region {
 public:
  // Maps the first `size` bytes of the object open at fd (which the caller then closes).
  static absl::StatusOr<std::shared_ptr<Region>> Map(int fd, uint64_t size);
  Region(void* base, uint64_t size) : base_(static_cast<char*>(base)), size_(size) {}
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  uint64_t size() const { return size_; }
  // INVALID_ARGUMENT, naming `what`, unless [offset, offset + n) lies in the region.
  absl::Status CheckSlice(const char* what, uint64_t offset, uint64_t n) const;
  // Copies n bytes at `offset` out of the region; DATA_LOSS when the object has shrunk.
  absl::Status Read(uint64_t offset, uint64_t n, void* out) const;
  // Copies n bytes into the region at `offset`; DATA_LOSS when the object has shrunk.
  absl::Status Write(uint64_t offset, uint64_t n, const void* data) const;
  // Marks the region used now (its idle time starts again).
  void Touch();
  int64_t last_used_ns() const { return last_used_ns_.load(); }

 private:
  char* const base_;
  const uint64_t size_;
  std::atomic<int64_t> last_used_ns_{0};
};

// True for a name the server agrees to open: "/kiln-" then 16 to 128 of [A-Za-z0-9_-].
bool ValidShmName(const std::string& name);

// Every region of this replica, by session key (sessions.h's SessionKey) and region name. A
// thread closes the regions idle for longer than the TTL.
class RegionRegistry {
 public:
  explicit RegionRegistry(RegionLimits limits = {});
  ~RegionRegistry();
  RegionRegistry(const RegionRegistry&) = delete;
  RegionRegistry& operator=(const RegionRegistry&) = delete;

  // Opens `shm_name` and keeps it as the session's region `name` (replacing one of that name).
  // FAILED_PRECONDITION when --shm is off; INVALID_ARGUMENT for a bad name or size; NOT_FOUND
  // when the object cannot be opened here; RESOURCE_EXHAUSTED past a limit.
  absl::Status Register(const std::string& session_key, const std::string& name,
                        const std::string& shm_name, uint64_t byte_size);
  // NOT_FOUND when the session has no such region.
  absl::Status Unregister(const std::string& session_key, const std::string& name);
  // Closes every region of a session (deleted).
  void DropSession(const std::string& session_key);
  // The session's region `name`, marked used; NOT_FOUND (saying to register it again) when
  // there is none, or it expired.
  absl::StatusOr<std::shared_ptr<Region>> Find(const std::string& session_key,
                                               const std::string& name);
  // Closes the regions idle for longer than the TTL; returns how many.
  int Expire();

  int64_t size() const;
  int64_t bytes() const;
  const RegionLimits& limits() const { return limits_; }

 private:
  using Key = std::pair<std::string, std::string>;  // session key, region name
  const RegionLimits limits_;
  mutable absl::Mutex mutex_;
  std::map<Key, std::shared_ptr<Region>> regions_ ABSL_GUARDED_BY(mutex_);
  int64_t bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  std::unique_ptr<Sweeper> sweeper_;  // closes idle regions
};

}  // namespace kiln::server

#endif  // KILN_SERVER_SHM_REGIONS_H_
