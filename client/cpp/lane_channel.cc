#include "client/cpp/lane_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "client/cpp/shm_channel.h"
#include "core/tensor/status_macros.h"
#include "proto/convert/error_reason.h"

namespace kiln::client {
namespace {

// A connection idle longer is looked at (for a close by the server) before use.
constexpr std::chrono::seconds kIdleLook(1);

std::string Mode() {
  const char* v = std::getenv("KILN_LANE");
  return v == nullptr || *v == '\0' ? "auto" : v;
}

// Sends `body` as one frame: its 4-byte little-endian length, then it.
absl::Status SendFrame(int fd, std::string_view body) {
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((body.size() >> (8 * i)) & 0xff);
  frame.append(body);
  for (size_t sent = 0; sent < frame.size();) {
    const ssize_t k = send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return absl::UnavailableError(absl::StrCat("lane send: ", std::strerror(errno)));
    sent += static_cast<size_t>(k);
  }
  return absl::OkStatus();
}

absl::Status ReadExact(int fd, char* out, size_t n) {
  while (n > 0) {
    const ssize_t k = recv(fd, out, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) return absl::UnavailableError("the server closed the lane");
    if (k < 0) return absl::UnavailableError(absl::StrCat("lane read: ", std::strerror(errno)));
    out += k;
    n -= static_cast<size_t>(k);
  }
  return absl::OkStatus();
}

// The next frame's response; with `passed`, the descriptor that came with its first bytes
// (SCM_RIGHTS; -1 if none).
absl::StatusOr<v1::LaneResponse> ReadFrame(int fd, int* passed = nullptr) {
  unsigned char header[4];
  if (passed != nullptr) {
    if (lane::ReceiveWithDescriptor(fd, header, 4, passed) != 4) {
      return absl::UnavailableError("the server closed the lane");
    }
  } else if (absl::Status s = ReadExact(fd, reinterpret_cast<char*>(header), 4); !s.ok()) {
    return s;
  }
  const uint32_t n = header[0] | header[1] << 8 | header[2] << 16 | uint32_t{header[3]} << 24;
  std::string body(n, '\0');
  if (absl::Status s = ReadExact(fd, body.data(), n); !s.ok()) return s;
  v1::LaneResponse resp;
  if (!resp.ParseFromString(body)) return absl::DataLossError("the lane's answer is not a LaneResponse");
  return resp;
}

// Whether the server has closed the connection, or written to it (which, while a call waits in
// the ring, it does only before closing).
bool ServerLeft(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return poll(&p, 1, 0) != 0;
}

// The server's status, with its reason (proto/convert/error_reason.h).
absl::Status StatusOf(const v1::LaneResponse& resp) {
  return StatusFromWire(resp.code(), resp.message(), resp.details());
}

}  // namespace

LaneChannel::LaneChannel(const std::string& address, const v1::GetVersionResponse& version,
                         std::string authorization, Refresh refresh)
    : path_(version.local_socket()),
      pid_(version.local_pid()),
      instance_(version.instance()),
      authorization_(std::move(authorization)),
      refresh_(std::move(refresh)),
      usable_(Mode() != "off" && !path_.empty() && OnThisHost(address)),
      required_(Mode() == "on") {}

LaneChannel::~LaneChannel() { Drop(); }

void LaneChannel::Drop() {
  if (ring_ != nullptr) ring_->Post(lane::Side::kClient, lane::kOnSocket);  // goodbye
  ring_.reset();
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

absl::Status LaneChannel::Connect() {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.empty() || path_.size() >= sizeof(addr.sun_path)) {
    return absl::FailedPreconditionError("the server has no lane reachable from here");
  }
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  absl::Status status = [&]() -> absl::Status {
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      return absl::UnavailableError(absl::StrCat("lane ", path_, ": ", std::strerror(errno)));
    }
    ucred peer{};
    socklen_t len = sizeof(peer);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 ||
        static_cast<uint32_t>(peer.pid) != pid_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "lane ", path_, " is held by process ", peer.pid, ", not the server's ", pid_));
    }
    v1::LaneRequest hello;
    hello.mutable_hello()->set_authorization(authorization_);
    const char* ring = std::getenv("KILN_LANE_RING");
    hello.mutable_hello()->set_ring(ring == nullptr || std::string_view(ring) != "0");
    if (absl::Status s = SendFrame(fd, hello.SerializeAsString()); !s.ok()) return s;
    int passed = -1;
    absl::StatusOr<v1::LaneResponse> resp = ReadFrame(fd, &passed);
    if (!resp.ok()) {
      if (passed >= 0) close(passed);
      return resp.status();
    }
    if (resp->code() != 0 || resp->instance() != instance_ || resp->ring_slot_bytes() == 0) {
      if (passed >= 0) close(passed);
      if (resp->code() != 0) return StatusOf(*resp);
      if (resp->instance() != instance_) {
        return absl::FailedPreconditionError(absl::StrCat("lane ", path_, " is another server's"));
      }
    } else if (passed >= 0) {  // a ring that cannot be mapped leaves the socket
      absl::StatusOr<std::unique_ptr<lane::Ring>> opened =
          lane::Ring::Open(passed, resp->ring_slot_bytes());
      if (opened.ok()) ring_ = std::move(*opened);
    }
    return absl::OkStatus();
  }();
  if (!status.ok()) {
    close(fd);
    return status;
  }
  fd_ = fd;
  used_ = std::chrono::steady_clock::now();
  return absl::OkStatus();
}

absl::StatusOr<bool> LaneChannel::Connected() {
  if (fd_ >= 0 && std::chrono::steady_clock::now() - used_ > kIdleLook) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) Drop();  // readable while idle: the server closed it
  }
  if (fd_ >= 0) return true;
  if (!usable_) return false;
  absl::Status s = Connect();
  if (!s.ok() && refresh_) {  // a restarted server: its new socket, process and instance
    absl::StatusOr<v1::GetVersionResponse> version = refresh_();
    if (version.ok()) {
      path_ = version->local_socket();
      pid_ = version->local_pid();
      instance_ = version->instance();
      s = Connect();
    }
  }
  if (s.ok()) return true;
  usable_ = false;
  if (required_) return s;
  return false;
}

std::optional<absl::StatusOr<v1::ExecuteResponse>> LaneChannel::Execute(
    const v1::ExecuteRequest& req, int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || !usable_) return std::nullopt;
  absl::StatusOr<bool> connected = Connected();
  if (!connected.ok()) return connected.status();
  if (!*connected) return std::nullopt;
  // req lent to the LaneRequest for its serialization, not copied.
  v1::LaneRequest call;
  call.unsafe_arena_set_allocated_execute(const_cast<v1::ExecuteRequest*>(&req));
  call.set_timeout_ms(timeout_ms);
  const std::string body = call.SerializeAsString();
  call.unsafe_arena_release_execute();
  // The server gone (a restart): nothing ran, gRPC takes this call.
  if (ring_ != nullptr && ServerLeft(fd_)) {
    Drop();
    return std::nullopt;
  }
  if (ring_ == nullptr && !SendFrame(fd_, body).ok()) {
    Drop();
    return std::nullopt;
  }
  absl::StatusOr<v1::LaneResponse> resp = ring_ != nullptr ? RingCall(body, timeout_ms)
                                                           : ReadFrame(fd_);
  used_ = std::chrono::steady_clock::now();
  if (!resp.ok()) {
    Drop();
    return absl::UnavailableError(absl::StrCat("the lane to ", path_, " broke during a call: ",
                                               resp.status().message()));
  }
  if (resp->code() != 0) return StatusOf(*resp);
  return std::move(*resp->mutable_execute());
}

absl::StatusOr<v1::LaneResponse> LaneChannel::RingCall(const std::string& body,
                                                      int64_t timeout_ms) {
  constexpr absl::Duration kSpin = absl::Microseconds(100);
  if (4 + body.size() <= ring_->slot_bytes()) {
    char* slot = ring_->OutSlot(lane::Side::kClient);
    for (int i = 0; i < 4; ++i) slot[i] = static_cast<char>((body.size() >> (8 * i)) & 0xff);
    std::memcpy(slot + 4, body.data(), body.size());
    ring_->Post(lane::Side::kClient, 4 + body.size());
  } else {
    ring_->Post(lane::Side::kClient, lane::kOnSocket);
    RETURN_IF_ERROR(SendFrame(fd_, body));
  }
  // A call with a deadline waits for its answer up to 5 s past it (the server ends it first).
  const absl::Time deadline = timeout_ms > 0
                                  ? absl::Now() + absl::Milliseconds(timeout_ms) + absl::Seconds(5)
                                  : absl::InfiniteFuture();
  absl::StatusOr<uint64_t> size = ring_->Await(
      lane::Side::kClient, kSpin, spin_, deadline, absl::Milliseconds(50), [this] {
        return ServerLeft(fd_) ? absl::UnavailableError("the server closed the lane")
                               : absl::OkStatus();
      });
  if (!size.ok()) return size.status();
  if (*size == lane::kOnSocket) return ReadFrame(fd_);
  if (*size < 4 || *size > ring_->slot_bytes()) {
    return absl::DataLossError("the lane ring's answer has a size outside its slot");
  }
  v1::LaneResponse resp;
  if (!resp.ParseFromArray(ring_->InSlot(lane::Side::kClient) + 4, static_cast<int>(*size - 4))) {
    return absl::DataLossError("the lane ring's answer is not a LaneResponse");
  }
  return resp;
}

}  // namespace kiln::client
