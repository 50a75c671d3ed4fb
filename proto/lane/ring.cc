#include "proto/lane/ring.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace kiln::lane {

// One direction's state, in the shared page: the writer bumps `seq` after each frame; the
// reader sleeps on it (a futex) after setting `sleeping`, which tells the writer to wake it.
struct alignas(64) Ring::Mailbox {
  std::atomic<uint32_t> seq;
  std::atomic<uint32_t> sleeping;
  std::atomic<uint64_t> size;
};

namespace {

constexpr uint64_t kHeaderBytes = 4096;  // the two mailboxes, then the request and answer slots
constexpr uint64_t kMinSlot = 4096, kMaxSlot = uint64_t{64} << 20;
constexpr int kMostSkipped = 64;

static_assert(std::atomic<uint32_t>::is_always_lock_free &&
                  std::atomic<uint64_t>::is_always_lock_free,
              "the mailboxes are shared between processes: their atomics must be lock-free");

// Sleeps while *word == expected, at most `timeout` (a shared mapping: not FUTEX_PRIVATE).
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, absl::Duration timeout) {
  const timespec ts = absl::ToTimespec(timeout);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void FutexWake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

uint64_t MappedBytes(uint64_t slot_bytes) { return kHeaderBytes + 2 * slot_bytes; }

absl::Status CheckSlot(uint64_t slot_bytes) {
  if (slot_bytes < kMinSlot || slot_bytes > kMaxSlot || slot_bytes % 4096 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("a lane ring's slot of ", slot_bytes,
                                                   " bytes: a multiple of 4096 from ", kMinSlot,
                                                   " to ", kMaxSlot));
  }
  return absl::OkStatus();
}

absl::Status Errno(const char* what) {
  return absl::UnavailableError(absl::StrCat("lane ring: ", what, ": ", std::strerror(errno)));
}

// A message of `iov` with room for one descriptor.
struct DescriptorMessage {
  explicit DescriptorMessage(iovec* iov) {
    msg.msg_iov = iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
  }
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
};

}  // namespace

int64_t SendWithDescriptor(int fd, const void* data, size_t n, int passed) {
  iovec iov{const_cast<void*>(data), n};
  DescriptorMessage m(&iov);
  cmsghdr* cmsg = CMSG_FIRSTHDR(&m.msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &passed, sizeof(int));
  ssize_t k;
  do {
    k = sendmsg(fd, &m.msg, MSG_NOSIGNAL);
  } while (k < 0 && errno == EINTR);
  return k;
}

int64_t ReceiveWithDescriptor(int fd, void* out, size_t n, int* passed) {
  *passed = -1;
  iovec iov{out, n};
  DescriptorMessage m(&iov);
  ssize_t k;
  do {
    k = recvmsg(fd, &m.msg, MSG_WAITALL | MSG_CMSG_CLOEXEC);
  } while (k < 0 && errno == EINTR);
  const cmsghdr* cmsg = k >= 0 ? CMSG_FIRSTHDR(&m.msg) : nullptr;
  if (cmsg != nullptr && cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS) {
    std::memcpy(passed, CMSG_DATA(cmsg), sizeof(int));
  }
  if (k != static_cast<ssize_t>(n) && *passed >= 0) {
    close(*passed);
    *passed = -1;
  }
  return k;
}

bool SpinPolicy::ShouldSpin() {
  if (skip_ == 0) return true;
  --skip_;
  return false;
}

void SpinPolicy::Record(SpinResult spin) {
  if (spin.hit && !spin.preempted) {
    backoff_ = 0;
    return;
  }
  backoff_ = std::min(backoff_ == 0 ? 1 : 2 * backoff_, kMostSkipped);
  skip_ = backoff_;
}

absl::StatusOr<std::unique_ptr<Ring>> Ring::Create(uint64_t slot_bytes) {
  if (absl::Status s = CheckSlot(slot_bytes); !s.ok()) return s;
  const int fd = memfd_create("kiln-lane-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Errno("memfd_create");
  const uint64_t bytes = MappedBytes(slot_bytes);
  // Sealed at its size: neither side can shrink it (a read past the end would be SIGBUS).
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const absl::Status s = Errno("sizing the memfd");
    close(fd);
    return s;
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const absl::Status s = Errno("mmap");
    close(fd);
    return s;
  }
  return std::unique_ptr<Ring>(new Ring(fd, base, slot_bytes));
}

absl::StatusOr<std::unique_ptr<Ring>> Ring::Open(int fd, uint64_t slot_bytes) {
  absl::Status s = CheckSlot(slot_bytes);
  struct stat st {};
  const int seals = fcntl(fd, F_GET_SEALS);  // -1 for anything but a memfd
  if (s.ok() &&
      (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != MappedBytes(slot_bytes) ||
       seals < 0 || (seals & F_SEAL_SHRINK) == 0)) {
    s = absl::FailedPreconditionError(
        "the lane ring's descriptor is not a sealed memfd of the size the server said");
  }
  void* base =
      s.ok() ? mmap(nullptr, MappedBytes(slot_bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
             : MAP_FAILED;
  if (s.ok() && base == MAP_FAILED) s = Errno("mmap");
  if (!s.ok()) {
    close(fd);
    return s;
  }
  std::unique_ptr<Ring> ring(new Ring(fd, base, slot_bytes));
  // A client's ring starts where the server's is: nothing posted either way yet.
  ring->seen_ = ring->Incoming(Side::kClient).seq.load();
  ring->sent_ = ring->Outgoing(Side::kClient).seq.load();
  return ring;
}

Ring::Ring(int fd, void* base, uint64_t slot_bytes)
    : fd_(fd), base_(static_cast<char*>(base)), slot_bytes_(slot_bytes) {}

Ring::~Ring() {
  munmap(base_, MappedBytes(slot_bytes_));
  close(fd_);
}

Ring::Mailbox& Ring::Incoming(Side side) const {
  return reinterpret_cast<Mailbox*>(base_)[side == Side::kServer ? 0 : 1];
}

Ring::Mailbox& Ring::Outgoing(Side side) const {
  return Incoming(side == Side::kServer ? Side::kClient : Side::kServer);
}

char* Ring::OutSlot(Side side) const {
  return base_ + kHeaderBytes + (side == Side::kClient ? 0 : slot_bytes_);
}

const char* Ring::InSlot(Side side) const {
  return base_ + kHeaderBytes + (side == Side::kServer ? 0 : slot_bytes_);
}

void Ring::Post(Side side, uint64_t size) {
  Mailbox& box = Outgoing(side);
  box.size.store(size, std::memory_order_relaxed);
  // Sequentially consistent, both here and in Await: either this side sees the reader's
  // `sleeping` and wakes it, or the reader sees the new number before it sleeps.
  box.seq.store(++sent_);
  if (box.sleeping.load() != 0) FutexWake(&box.seq);
}

absl::StatusOr<uint64_t> Ring::Await(Side side, absl::Duration spin, SpinPolicy& policy,
                                     absl::Time deadline, absl::Duration slice,
                                     const std::function<absl::Status()>& check) {
  Mailbox& box = Incoming(side);
  auto arrived = [&] { return box.seq.load(std::memory_order_acquire) != seen_; };
  auto take = [&] {
    seen_ = box.seq.load(std::memory_order_acquire);
    return box.size.load(std::memory_order_relaxed);
  };
  if (arrived()) return take();
  if (spin > absl::ZeroDuration() && policy.ShouldSpin()) {
    const SpinResult spun = SpinFor(spin, 32, [&] {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      return arrived();
    });
    policy.Record(spun);
    if (spun.hit) return take();
  }
  while (true) {
    box.sleeping.store(1);
    const uint32_t seen = seen_;
    if (box.seq.load() == seen) {
      const absl::Duration left = std::max(deadline - absl::Now(), absl::ZeroDuration());
      FutexWait(&box.seq, seen, std::min(slice, left));
    }
    box.sleeping.store(0);
    if (arrived()) return take();
    // (Looked at again after a failed check: a peer that posts, then writes to its socket or
    // closes it, has posted before the check saw that.)
    if (absl::Status s = check(); !s.ok()) return arrived() ? absl::StatusOr<uint64_t>(take()) : s;
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError("no frame came through the lane ring in time");
    }
  }
}

void Ring::Wake(Side side) { FutexWake(&Incoming(side).seq); }

}  // namespace kiln::lane
