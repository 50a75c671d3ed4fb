// The same-host lane's shared-memory ring: a request slot and an answer slot in one sealed memfd
// that the server makes for a lane connection and passes to its client with the hello's answer
// (SCM_RIGHTS). A call then writes its frame (the socket's frame: 4-byte length, message) into
// its slot and bumps a sequence number; the peer, spinning for a moment after its last frame,
// sees it without a system call, or sleeps on the number (a futex) and is woken by one. The
// socket stays: it carries the hello, any frame larger than a slot, and the end of the
// connection. Both sides map the same bytes, so each treats what it reads as untrusted: a size
// is checked against the slot, a frame is copied out before it is parsed, and the memfd is
// sealed so that neither side can shrink it under the other.
#ifndef KILN_PROTO_LANE_RING_H_
#define KILN_PROTO_LANE_RING_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kiln::lane {

// A frame size meaning "this frame comes over the socket" (it is larger than a slot). A client
// leaving posts it too before it closes its socket: the server's thread, woken, finds the end
// of the stream at once instead of after its next slice of sleep.
inline constexpr uint64_t kOnSocket = ~uint64_t{0};

// Sends the n bytes at `data` on the socket fd with the descriptor `passed` (SCM_RIGHTS) on
// their first byte: how many bytes went (send the rest as usual), or -1 with errno.
int64_t SendWithDescriptor(int fd, const void* data, size_t n, int passed);
// Receives n bytes into `out` (waiting for all of them) and the descriptor that came with them
// into *passed (-1 if none, and closed if the bytes fell short): how many bytes came, or -1.
int64_t ReceiveWithDescriptor(int fd, void* out, size_t n, int* passed);

// Which end of the ring a process holds: the server reads requests and writes answers.
enum class Side { kServer, kClient };

// What a spin came to: whether what it waited for came, and whether its thread was preempted
// meanwhile (the clock jumped by more than kPreemptedGap between two looks).
struct SpinResult {
  bool hit = false;
  bool preempted = false;
};
inline constexpr std::chrono::microseconds kPreemptedGap{10};

// Spins until ready() or until `spin` has passed, looking at the clock every `per_look` tries.
template <typename Ready>
SpinResult SpinFor(absl::Duration spin, int per_look, Ready ready) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point now = Clock::now();
  const Clock::time_point until = now + absl::ToChronoNanoseconds(spin);
  SpinResult result;
  for (int i = 1;; ++i) {
    if (ready()) {
      result.hit = true;
      break;
    }
    if (i % per_look != 0) continue;
    const Clock::time_point last = now;
    now = Clock::now();
    result.preempted |= now - last > kPreemptedGap;
    if (now > until) break;
  }
  return result;
}

// Spins that back off: a wait that spun in vain, or was preempted while it spun (its core was
// wanted: maybe by the very peer it waited for), is followed by 1, 2, 4 ... 64 waits that sleep
// at once; a spin that finds its frame makes the next wait spin again.
class SpinPolicy {
 public:
  // Whether the next wait spins.
  bool ShouldSpin();
  // What the spin came to.
  void Record(SpinResult spin);

 private:
  int skip_ = 0;
  int backoff_ = 0;
};

class Ring {
 public:
  // The server's ring: a new memfd of two slots of `slot_bytes` (4 KiB to 64 MiB), sealed.
  static absl::StatusOr<std::unique_ptr<Ring>> Create(uint64_t slot_bytes);
  // The client's ring: maps the memfd `fd` the server sent (and takes the descriptor).
  static absl::StatusOr<std::unique_ptr<Ring>> Open(int fd, uint64_t slot_bytes);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // The memfd (the server sends it; the ring closes it).
  int fd() const { return fd_; }
  uint64_t slot_bytes() const { return slot_bytes_; }

  // The slot `side` writes its frames into, and the one it reads the peer's from.
  char* OutSlot(Side side) const;
  const char* InSlot(Side side) const;

  // Publishes the frame of `size` bytes (at most slot_bytes, or kOnSocket) just written into
  // `side`'s slot, waking the peer if it sleeps.
  void Post(Side side, uint64_t size);

  // Waits for the peer's next frame and returns its size as posted (unchecked: kOnSocket, or a
  // size the caller checks against slot_bytes). Spins up to `spin` first (as `policy` allows),
  // then sleeps in slices of at most `slice`; after each slice calls `check`, whose error ends
  // the wait, and gives DEADLINE_EXCEEDED past `deadline`.
  absl::StatusOr<uint64_t> Await(Side side, absl::Duration spin, SpinPolicy& policy,
                                 absl::Time deadline, absl::Duration slice,
                                 const std::function<absl::Status()>& check);

  // Wakes `side` from a sleep in Await (which then calls its check): for a server stopping.
  void Wake(Side side);

 private:
  struct Mailbox;
  Ring(int fd, void* base, uint64_t slot_bytes);
  // The mailbox `side` reads: the requests' for the server, the answers' for the client.
  Mailbox& Incoming(Side side) const;
  Mailbox& Outgoing(Side side) const;

  const int fd_;
  char* const base_;
  const uint64_t slot_bytes_;
  uint32_t seen_ = 0;  // the incoming sequence number last taken
  uint32_t sent_ = 0;  // the outgoing sequence number last posted
};

}  // namespace kiln::lane

#endif  // KILN_PROTO_LANE_RING_H_
