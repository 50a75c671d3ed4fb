#include "server/local_lane.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <optional>
#include <system_error>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "google/protobuf/arena.h"
#include "proto/convert/error_reason.h"
#include "server/calls.h"
#include "server/log.h"

namespace kiln::server {
namespace {

using Clock = std::chrono::steady_clock;

// The most bytes of an answer's buffer a connection keeps for its next answers.
constexpr size_t kKeptFrameBytes = 64 << 10;

// A recv or send that waits no longer than `timeout` (SO_RCVTIMEO, SO_SNDTIMEO).
void SetTimeouts(int fd, absl::Duration timeout) {
  const timeval tv = absl::ToTimeval(timeout);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

// Writes `resp` (its size computed by ByteSizeLong already) as a frame at `out`, which has
// room for 4 + size bytes: its length (4 bytes, little-endian), then the message.
void SerializeFrame(const v1::LaneResponse& resp, size_t size, char* out) {
  const uint32_t n = static_cast<uint32_t>(size);
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  resp.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out + 4));
}

// Writes `resp` (its size computed by ByteSizeLong already) as one frame through `out`, a buffer
// kept across frames, with the descriptor `passed` (SCM_RIGHTS) when it is not -1; false when
// the client is gone or stopped reading.
bool WriteFrame(int fd, const v1::LaneResponse& resp, size_t size, std::string& out,
                int passed = -1) {
  out.resize(4 + size);
  SerializeFrame(resp, size, out.data());
  size_t sent = 0;
  if (passed >= 0) {  // the descriptor goes with the first bytes
    const int64_t k = lane::SendWithDescriptor(fd, out.data(), out.size(), passed);
    if (k <= 0) return false;
    sent = static_cast<size_t>(k);
  }
  while (sent < out.size()) {
    const ssize_t k = send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    sent += static_cast<size_t>(k);
  }
  return true;
}

// RESOURCE_EXHAUSTED for a request frame of n bytes over --max_message_bytes.
absl::Status CheckFrameSize(uint64_t n, const LaneOptions& options) {
  if (n <= static_cast<uint64_t>(options.max_frame_bytes)) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("a lane frame of ", n, " bytes is over this server's limit of ",
                   options.max_frame_bytes, " (--max_message_bytes)"));
}

// Whether the client has closed its end of the connection `fd`.
bool HungUp(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

// WriteFrame of a frame written once (an error's).
bool WriteFrame(int fd, const v1::LaneResponse& resp) {
  std::string out;
  return WriteFrame(fd, resp, resp.ByteSizeLong(), out);
}

// The answer to a call that failed: its code, message and reason (as gRPC's binary details).
v1::LaneResponse ErrorResponse(const absl::Status& status) {
  v1::LaneResponse resp;
  resp.set_code(static_cast<int>(status.code()));
  resp.set_message(std::string(status.message()));
  resp.set_details(StatusDetails(status));
  return resp;
}

// A connection's incoming bytes, cut into frames. Reads go through a buffer: a small call's
// header and body come in one recv.
class FrameReader {
 public:
  FrameReader(int fd, const LaneOptions& options) : fd_(fd), options_(options) {}

  // The next frame's bytes; OK with `eof` set when the client closed the connection (or it
  // idled past the timeout, or the lane stops) between frames.
  absl::Status Next(std::string* frame, bool* eof) {
    *eof = false;
    uint8_t header[4];
    bool closed = false;
    if (begin_ == end_) Spin();
    RETURN_IF_ERROR(Take(header, 4, /*idle=*/true, &closed));
    if (closed) {
      *eof = true;
      return absl::OkStatus();
    }
    const uint64_t n = uint64_t{header[0]} | uint64_t{header[1]} << 8 |
                       uint64_t{header[2]} << 16 | uint64_t{header[3]} << 24;
    RETURN_IF_ERROR(CheckFrameSize(n, options_));
    // The first MiB is taken as it arrives, so that a length alone reserves little; a client
    // that has sent that much gets room for the rest at once.
    frame->clear();
    while (frame->size() < n) {
      const size_t at = frame->size();
      frame->resize(at == 0 ? std::min<uint64_t>(n, 1 << 20) : n);
      RETURN_IF_ERROR(Take(reinterpret_cast<uint8_t*>(frame->data() + at), frame->size() - at,
                           /*idle=*/false, &closed));
      if (closed) return absl::DataLossError("the client closed the lane inside a frame");
    }
    return absl::OkStatus();
  }

 private:
  static constexpr size_t kBufferBytes = 64 << 10;

  // Waits up to --local_spin for the next frame awake: a client calling in a loop then finds
  // this thread running instead of paying for its wake-up. The spins back off as
  // lane::SpinPolicy says (after one that missed or was preempted).
  void Spin() {
    if (options_.spin <= absl::ZeroDuration() || !policy_.ShouldSpin()) return;
    policy_.Record(lane::SpinFor(options_.spin, 1, [this] {
      char byte;
      return recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) >= 0 || errno != EAGAIN;
    }));
  }

  // Exactly n bytes: first the buffered ones, then the rest (straight into `out` when they
  // would fill the buffer). With `idle` (a frame's first bytes), `closed` when the stream
  // ends, or stays idle past --local_timeout, before the first of them.
  absl::Status Take(uint8_t* out, size_t n, bool idle, bool* closed) {
    if (idle && begin_ < end_) {  // the frame began in an earlier read: it has begun now
      deadline_ = Clock::now() + absl::ToChronoNanoseconds(options_.timeout);
    }
    size_t got = 0;
    while (got < n) {
      if (begin_ < end_) {
        const size_t k = std::min(n - got, end_ - begin_);
        std::memcpy(out + got, buffer_.data() + begin_, k);
        begin_ += k;
        got += k;
        continue;
      }
      begin_ = end_ = 0;
      const bool direct = n - got >= kBufferBytes;
      if (!direct && buffer_.empty()) buffer_.resize(kBufferBytes);
      size_t k = 0;
      RETURN_IF_ERROR(Read(direct ? out + got : reinterpret_cast<uint8_t*>(buffer_.data()),
                           direct ? n - got : kBufferBytes, idle && got == 0, closed, &k));
      if (*closed) return absl::OkStatus();
      if (direct) {
        got += k;
      } else {
        end_ = k;
      }
      if (got + end_ < n && Clock::now() > deadline_) return TooSlow();
    }
    return absl::OkStatus();
  }

  absl::Status TooSlow() const {
    return absl::DeadlineExceededError(
        absl::StrCat("a lane frame took longer than --local_timeout (",
                     absl::FormatDuration(options_.timeout), ") to arrive"));
  }

  // One recv of at most `max` bytes into `out` (`read`: how many), retried until some come.
  // With `idle` (nothing of the frame read yet), `closed` when the stream ends or stays idle
  // past --local_timeout first; inside a frame, DATA_LOSS or DEADLINE_EXCEEDED instead.
  absl::Status Read(uint8_t* out, size_t max, bool idle, bool* closed, size_t* read) {
    while (true) {
      const ssize_t k = recv(fd_, out, max, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k > 0) {
        if (idle) {  // the frame has begun: from now on it has --local_timeout
          deadline_ = Clock::now() + absl::ToChronoNanoseconds(options_.timeout);
        }
        *read = static_cast<size_t>(k);
        return absl::OkStatus();
      }
      if (idle) {
        *closed = true;
        return absl::OkStatus();
      }
      if (k == 0) return absl::DataLossError("the client closed the lane inside a frame");
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        return absl::UnavailableError(absl::StrCat("lane read: ", std::strerror(errno)));
      }
      if (Clock::now() > deadline_) return TooSlow();
    }
  }

  const int fd_;
  const LaneOptions& options_;
  Clock::time_point deadline_;
  std::string buffer_;  // bytes [begin_, end_) received but not yet taken
  size_t begin_ = 0, end_ = 0;
  lane::SpinPolicy policy_;
};

// The frames of a connection that has its shared-memory ring: each comes through the ring, or
// through the socket when the ring says kOnSocket (a frame larger than its slot).
class RingFrames {
 public:
  // `gone` says whether the connection must end (the client gone, the lane stopping).
  RingFrames(lane::Ring& ring, FrameReader& socket, const LaneOptions& options,
             std::function<bool()> gone)
      : ring_(ring), socket_(socket), options_(options), gone_(std::move(gone)) {}

  // The next frame; `eof` when the connection ends first (or idles past --local_timeout).
  absl::Status Next(std::string* frame, bool* eof) {
    *eof = false;
    // The sleeps are cut in slices of a second, after each of which `gone_` is asked.
    absl::StatusOr<uint64_t> size = ring_.Await(
        lane::Side::kServer, options_.spin, policy_, absl::Now() + options_.timeout,
        absl::Seconds(1), [this] {
          return gone_() ? absl::CancelledError("the lane connection ends") : absl::OkStatus();
        });
    if (!size.ok()) {  // gone, stopping, or idle too long
      *eof = true;
      return absl::OkStatus();
    }
    // (A frame announced and then the end of the stream is a client saying goodbye: eof.)
    if (*size == lane::kOnSocket) return socket_.Next(frame, eof);
    const char* slot = ring_.InSlot(lane::Side::kServer);
    uint32_t n = 0;
    if (*size >= 4 && *size <= ring_.slot_bytes()) {
      for (int i = 0; i < 4; ++i) n |= uint32_t{static_cast<uint8_t>(slot[i])} << (8 * i);
    }
    if (*size < 4 || *size > ring_.slot_bytes() || n != *size - 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("a lane ring frame said to have ", *size, " bytes, with a length of ", n,
                       ": not a frame in a slot of ", ring_.slot_bytes()));
    }
    // (A slot may be larger than --max_message_bytes: the limit holds in the ring too.)
    RETURN_IF_ERROR(CheckFrameSize(n, options_));
    // Copied out before it is read: the client may rewrite the slot meanwhile.
    frame->assign(slot + 4, n);
    return absl::OkStatus();
  }

  // Sends `resp` (of `size` bytes, computed) through the ring, or through the socket when it is
  // larger than the slot; false when the client is gone.
  bool Write(int fd, const v1::LaneResponse& resp, size_t size, std::string& out) {
    if (4 + size <= ring_.slot_bytes()) {
      SerializeFrame(resp, size, ring_.OutSlot(lane::Side::kServer));
      ring_.Post(lane::Side::kServer, 4 + size);
      return true;
    }
    ring_.Post(lane::Side::kServer, lane::kOnSocket);
    return WriteFrame(fd, resp, size, out);
  }

 private:
  lane::Ring& ring_;
  FrameReader& socket_;
  const LaneOptions& options_;
  std::function<bool()> gone_;
  lane::SpinPolicy policy_;
};

}  // namespace

LaneCalls::LaneCalls(Calls& calls, std::function<bool()> peer_gone)
    : calls_(calls),
      peer_gone_(std::move(peer_gone)),
      first_block_(new char[kFirstBlockBytes]) {}

google::protobuf::ArenaOptions LaneCalls::ArenaOptions() const {
  // The messages and bytes of a call come from a block this connection keeps (a larger call
  // takes more blocks, given back at its end): a small call allocates nothing for them.
  google::protobuf::ArenaOptions options;
  options.initial_block = first_block_.get();
  options.initial_block_size = kFirstBlockBytes;
  return options;
}

v1::LaneResponse* LaneCalls::Handle(absl::string_view frame, bool* close,
                                    google::protobuf::Arena& arena) {
  *close = false;
  auto* req = google::protobuf::Arena::CreateMessage<v1::LaneRequest>(&arena);
  auto* resp = google::protobuf::Arena::CreateMessage<v1::LaneResponse>(&arena);
  if (!req->ParseFromArray(frame.data(), static_cast<int>(frame.size()))) {
    *resp =
        ErrorResponse(absl::InvalidArgumentError("the lane frame is not a kiln.v1.LaneRequest"));
    return resp;
  }
  auto call = [&] { return Call(*req, resp, close); };
  if (const absl::Status status = Guarded("LaneExecute", call); !status.ok()) {
    *resp = ErrorResponse(status);
  }
  return resp;
}

absl::Status LaneCalls::Call(const v1::LaneRequest& req, v1::LaneResponse* resp, bool* close) {
  if (req.call_case() == v1::LaneRequest::kHello) {
    if (said_hello_) return absl::FailedPreconditionError("the lane's hello came twice");
    absl::StatusOr<std::shared_ptr<const Tenant>> tenant =
        calls_.Authenticate(req.hello().authorization());
    calls_.Record("LaneHello", tenant.status(), tenant.ok() ? (*tenant)->name : "");
    if (!tenant.ok()) {
      *close = true;
      return tenant.status();
    }
    said_hello_ = true;
    ring_requested_ = req.hello().ring();
    authorization_ = req.hello().authorization();
    resp->set_instance(calls_.instance());
    return absl::OkStatus();
  }
  if (req.call_case() != v1::LaneRequest::kExecute) {
    return absl::InvalidArgumentError("the lane request carries no call");
  }
  if (!said_hello_) {
    *close = true;
    return absl::FailedPreconditionError("a lane connection's first request must be its hello");
  }
  absl::StatusOr<std::shared_ptr<const Tenant>> tenant = calls_.Authenticate(authorization_);
  if (!tenant.ok()) {
    calls_.Record("LaneExecute", tenant.status(), "");
    *close = true;
    return tenant.status();
  }
  // (Capped at about 35 years, so that the sum cannot overflow.)
  const Clock::time_point deadline =
      req.timeout_ms() > 0
          ? Clock::now() + std::chrono::milliseconds(std::min<int64_t>(req.timeout_ms(), 1LL << 40))
          : Clock::time_point::max();
  auto interrupt = [this, deadline]() -> absl::Status {
    if (peer_gone_ && peer_gone_()) return absl::CancelledError("the lane's client is gone");
    if (Clock::now() > deadline) return absl::DeadlineExceededError("the call's deadline passed");
    return absl::OkStatus();
  };
  calls_.BeginCall();
  absl::Cleanup ended = [&] { calls_.EndCall(); };
  absl::Status status =
      calls_.ExecuteCall(**tenant, req.execute(), resp->mutable_execute(), interrupt, CallId{},
                         /*found=*/nullptr);
  calls_.Record("LaneExecute", status, (*tenant)->name);
  return status;
}

absl::StatusOr<std::unique_ptr<LocalLane>> LocalLane::Start(const LaneOptions& options,
                                                            Calls& calls) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (options.path.empty() || options.path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("--local_socket ", options.path, ": a path of 1 to ",
                                                   sizeof(addr.sun_path) - 1, " bytes"));
  }
  std::memcpy(addr.sun_path, options.path.data(), options.path.size());
  if (options.timeout <= absl::ZeroDuration() || options.timeout > absl::Hours(24 * 365) ||
      options.max_connections < 1 || options.spin < absl::ZeroDuration() ||
      options.spin > absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        "--local_timeout must be above 0 and at most a year, --local_max_connections at least 1, "
        "and --local_spin from 0 to 1s");
  }
  if (options.ring_slot_bytes % 4096 != 0 || options.ring_slot_bytes > (uint64_t{64} << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--local_ring_bytes=", static_cast<int64_t>(options.ring_slot_bytes),
                     ": 0 (no rings) or a multiple of 4096 up to 64 MiB"));
  }
  struct stat st;
  if (lstat(options.path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("--local_socket ", options.path, " exists and is not a socket"));
    }
    // A socket no server answers is a dead server's: replaced.
    const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live = connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(probe);
    if (live) {
      return absl::AlreadyExistsError(
          absl::StrCat("--local_socket ", options.path, ": another server listens there"));
    }
    unlink(options.path.c_str());
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      chmod(options.path.c_str(), 0660) != 0 || listen(fd, 128) != 0) {
    const std::string error = std::strerror(errno);
    if (fd >= 0) close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot listen on --local_socket ", options.path, ": ", error));
  }
  std::unique_ptr<LocalLane> lane(new LocalLane(options, calls, fd));
  if (pipe2(lane->wake_, O_CLOEXEC) != 0) {
    return absl::UnavailableError(absl::StrCat("lane: pipe: ", std::strerror(errno)));
  }
  LocalLane* self = lane.get();
  {
    absl::MutexLock lock(&lane->state_->mutex);
    ++lane->state_->open;
  }
  std::thread([self, keep = lane->state_] { self->AcceptLoop(*keep); }).detach();
  Log(LogLevel::kInfo, "lane listening",
      {{"path", options.path}, {"max_connections", absl::StrCat(options.max_connections)}});
  return lane;
}

LocalLane::LocalLane(const LaneOptions& options, Calls& calls, int listener)
    : options_(options), calls_(calls), listener_(listener) {}

LocalLane::~LocalLane() { Stop(); }

int LocalLane::connections() const {
  absl::MutexLock lock(&state_->mutex);
  return static_cast<int>(state_->fds.size());
}

void LocalLane::AcceptLoop(State& state) {
  while (true) {
    pollfd p[2] = {{listener_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(p, 2, -1) < 0) continue;  // EINTR
    if (p[1].revents != 0) break;
    const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {  // out of descriptors: let some close first
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      continue;
    }
    SetTimeouts(fd, options_.timeout);
    bool full = false, accepting;
    {
      absl::MutexLock lock(&state.mutex);
      accepting = state.accepting;
      full = static_cast<int>(state.fds.size()) >= options_.max_connections;
      if (accepting && !full) {
        state.fds.push_back(fd);
        ++state.open;
      }
    }
    if (!accepting) {
      close(fd);
      break;
    }
    if (full) {
      const absl::Status s = absl::ResourceExhaustedError(
          absl::StrCat("the lane has its limit of ", options_.max_connections,
                       " connections (--local_max_connections); use gRPC"));
      Log(LogLevel::kWarning, "lane connection refused", {{"error", std::string(s.message())}});
      WriteFrame(fd, ErrorResponse(s));
      close(fd);
      continue;
    }
    try {
      std::thread([this, fd, keep = state_] { Serve(fd, *keep); }).detach();
    } catch (const std::system_error& e) {  // no thread to be had: this connection is refused
      Log(LogLevel::kError, "lane connection refused: no thread", {{"error", e.what()}});
      WriteFrame(fd, ErrorResponse(absl::ResourceExhaustedError(
                         "the server cannot start a thread for this lane connection; use gRPC")));
      absl::MutexLock lock(&state.mutex);
      state.fds.erase(std::find(state.fds.begin(), state.fds.end(), fd));
      close(fd);
      --state.open;
    }
  }
  // As in Serve: from here on only `state`.
  absl::MutexLock lock(&state.mutex);
  --state.open;
}

void LocalLane::Serve(int fd, State& state) {
  {
    ucred peer{};
    socklen_t len = sizeof(peer);
    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len);
    Log(LogLevel::kDebug, "lane connection",
        {{"pid", absl::StrCat(peer.pid)}, {"uid", absl::StrCat(peer.uid)}});
    // A client gone mid-call cancels it; looked at once a millisecond at most, by the call's
    // own thread.
    Clock::time_point last_look = Clock::now();
    LaneCalls calls(calls_, [&state, fd, &last_look] {
      if (state.cancel.load()) return true;
      const Clock::time_point now = Clock::now();
      if (state.stopping.load() || now - last_look < std::chrono::milliseconds(1)) return false;
      last_look = now;
      return HungUp(fd);
    });
    FrameReader reader(fd, options_);
    std::unique_ptr<lane::Ring> ring;  // once the hello asked for it
    std::optional<RingFrames> ring_frames;
    absl::Cleanup forget_ring = [&] {
      if (ring == nullptr) return;
      absl::MutexLock lock(&state.mutex);
      state.rings.erase(std::find(state.rings.begin(), state.rings.end(), ring.get()));
    };
    std::string frame, out;
    while (true) {
      bool eof = false;
      absl::Status s = ring_frames ? ring_frames->Next(&frame, &eof) : reader.Next(&frame, &eof);
      if (!s.ok() || eof) {
        if (!s.ok()) {
          calls_.Record("LaneExecute", s, "");
          const v1::LaneResponse error = ErrorResponse(s);
          if (ring_frames) {
            ring_frames->Write(fd, error, error.ByteSizeLong(), out);
          } else {
            WriteFrame(fd, error);
          }
        }
        break;
      }
      last_look = Clock::now();
      bool close_after = false;
      google::protobuf::Arena arena(calls.ArenaOptions());
      v1::LaneResponse& resp = *calls.Handle(frame, &close_after, arena);
      size_t size = resp.ByteSizeLong();
      if (static_cast<int64_t>(size) > options_.max_frame_bytes) {
        // As gRPC refuses a reply over --max_message_bytes.
        resp = ErrorResponse(absl::ResourceExhaustedError(absl::StrCat(
            "the answer has ", size, " bytes, over this server's limit of ",
            options_.max_frame_bytes, " (--max_message_bytes): pass the outputs through a "
            "shared-memory region, or use ExecuteStream")));
        size = resp.ByteSizeLong();
      }
      if (calls.TakeRingRequest() && options_.ring_slot_bytes > 0 && !close_after) {
        // The hello's answer carries the ring; every frame after it goes through the ring.
        absl::StatusOr<std::unique_ptr<lane::Ring>> made =
            lane::Ring::Create(options_.ring_slot_bytes);
        if (made.ok()) {
          resp.set_ring_slot_bytes((*made)->slot_bytes());
          if (!WriteFrame(fd, resp, resp.ByteSizeLong(), out, (*made)->fd())) break;
          ring = std::move(*made);
          ring_frames.emplace(*ring, reader, options_,
                              [&state, fd] { return state.stopping.load() || HungUp(fd); });
          absl::MutexLock lock(&state.mutex);
          state.rings.push_back(ring.get());
          continue;
        }
        Log(LogLevel::kWarning, "lane ring refused",
            {{"error", std::string(made.status().message())}});
      }
      const bool sent =
          ring_frames ? ring_frames->Write(fd, resp, size, out) : WriteFrame(fd, resp, size, out);
      if (!sent || close_after) break;
      // A large answer's buffer is not kept.
      if (out.capacity() > kKeptFrameBytes) std::string().swap(out);
    }
  }
  // From here on only `state` (which this thread keeps alive): Stop may return, and the lane
  // go, as soon as `open` drops.
  absl::MutexLock lock(&state.mutex);
  state.fds.erase(std::find(state.fds.begin(), state.fds.end(), fd));
  close(fd);  // under the lock: Stop never shuts down a closed (or reused) descriptor
  --state.open;
}

void LocalLane::Stop(absl::Duration grace) {
  if (stopped_) return;
  stopped_ = true;
  State& state = *state_;
  state.stopping = true;
  (void)!write(wake_[1], "x", 1);
  {
    absl::MutexLock lock(&state.mutex);
    state.accepting = false;
    // Idle connections see the end of their stream, or are woken in their ring; a running call
    // finishes and answers first.
    for (int fd : state.fds) shutdown(fd, SHUT_RD);
    for (lane::Ring* ring : state.rings) ring->Wake(lane::Side::kServer);
    auto all_done = [&state]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state.mutex) {
      return state.open == 0;
    };
    if (!state.mutex.AwaitWithTimeout(absl::Condition(&all_done), grace)) {
      state.cancel = true;
      state.mutex.Await(absl::Condition(&all_done));
    }
  }
  close(listener_);
  close(wake_[0]);
  close(wake_[1]);
  unlink(options_.path.c_str());
  Log(LogLevel::kInfo, "lane stopped", {{"path", options_.path}});
}

}  // namespace kiln::server
