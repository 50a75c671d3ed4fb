// A lane connection speaking raw frames to a real server (server/local_lane.h), with or without
// its shared-memory ring, for tests that send what no client would.
#ifndef KILN_TESTS_TESTING_RAW_LANE_H_
#define KILN_TESTS_TESTING_RAW_LANE_H_

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "kiln/v1/service.pb.h"
#include "proto/convert/tensor_convert.h"
#include "proto/lane/ring.h"
#include "server/server.h"

namespace kiln::testing {

// A lane connection speaking raw frames.
class RawLane {
 public:
  explicit RawLane(const std::string& path) : fd_(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    const timeval tv{10, 0};  // no test waits forever
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RawLane() { close(fd_); }

  bool connected() const { return connected_; }
  // Sends `body` as one frame (false when the server has closed the connection).
  bool Send(const std::string& body) {
    const uint32_t n = static_cast<uint32_t>(body.size());
    std::string frame(reinterpret_cast<const char*>(&n), 4);
    return SendBytes(frame + body);
  }
  bool SendBytes(const std::string& bytes) {
    for (size_t sent = 0; sent < bytes.size();) {
      const ssize_t k = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (k <= 0) return false;
      sent += static_cast<size_t>(k);
    }
    return true;
  }
  // The next response; nullopt when the connection ends first.
  std::optional<v1::LaneResponse> Read() {
    uint32_t n = 0;
    if (!ReadBytes(&n, 4)) return std::nullopt;
    std::string body(n, '\0');
    if (!ReadBytes(body.data(), n)) return std::nullopt;
    v1::LaneResponse resp;
    if (!resp.ParseFromString(body)) return std::nullopt;
    return resp;
  }
  v1::LaneResponse Call(const v1::LaneRequest& req) {
    EXPECT_TRUE(Send(req.SerializeAsString()));
    std::optional<v1::LaneResponse> resp = Read();
    EXPECT_TRUE(resp.has_value());
    return resp.value_or(v1::LaneResponse());
  }
  v1::LaneResponse Hello(const std::string& authorization = "") {
    v1::LaneRequest req;
    req.mutable_hello()->set_authorization(authorization);
    return Call(req);
  }
  // A hello that asks for the ring: its answer, and the ring when the server granted it (its
  // memfd received with the answer's first bytes).
  v1::LaneResponse RingHello(std::unique_ptr<lane::Ring>* ring) {
    v1::LaneRequest req;
    req.mutable_hello()->set_ring(true);
    EXPECT_TRUE(Send(req.SerializeAsString()));
    uint32_t n = 0;
    int fd = -1;
    v1::LaneResponse resp;
    if (lane::ReceiveWithDescriptor(fd_, &n, 4, &fd) != 4) return resp;
    std::string body(n, '\0');
    EXPECT_TRUE(ReadBytes(body.data(), n));
    EXPECT_TRUE(resp.ParseFromString(body));
    if (fd >= 0) {
      auto opened = lane::Ring::Open(fd, resp.ring_slot_bytes());
      EXPECT_TRUE(opened.ok()) << opened.status();
      if (opened.ok()) *ring = std::move(*opened);
    }
    return resp;
  }
  // One call through `ring`: the frame in its slot (or over the socket, when larger), the answer
  // from its slot or the socket as the ring says; nullopt when the connection ends first.
  std::optional<v1::LaneResponse> RingCall(lane::Ring& ring, const v1::LaneRequest& req) {
    const std::string body = req.SerializeAsString();
    const uint32_t n = static_cast<uint32_t>(body.size());
    if (4 + body.size() <= ring.slot_bytes()) {
      std::memcpy(ring.OutSlot(lane::Side::kClient), &n, 4);
      std::memcpy(ring.OutSlot(lane::Side::kClient) + 4, body.data(), body.size());
      ring.Post(lane::Side::kClient, 4 + body.size());
    } else {
      ring.Post(lane::Side::kClient, lane::kOnSocket);
      if (!Send(body)) return std::nullopt;
    }
    return RingAnswer(ring);
  }
  // The answer to what was posted in `ring`; nullopt when the connection ends first.
  std::optional<v1::LaneResponse> RingAnswer(lane::Ring& ring) {
    lane::SpinPolicy policy;
    absl::StatusOr<uint64_t> size = ring.Await(
        lane::Side::kClient, absl::ZeroDuration(), policy, absl::Now() + absl::Seconds(10),
        absl::Milliseconds(20), [this] {
          pollfd p{fd_, POLLIN | POLLRDHUP, 0};
          return poll(&p, 1, 0) != 0 ? absl::UnavailableError("ended") : absl::OkStatus();
        });
    if (!size.ok()) return std::nullopt;
    if (*size == lane::kOnSocket) return Read();
    EXPECT_GE(*size, 4u);
    EXPECT_LE(*size, ring.slot_bytes());
    v1::LaneResponse resp;
    EXPECT_TRUE(
        resp.ParseFromArray(ring.InSlot(lane::Side::kClient) + 4, static_cast<int>(*size - 4)));
    return resp;
  }
  // True when the server has closed its end (after whatever responses are pending).
  bool Ended() {
    char byte;
    return recv(fd_, &byte, 1, 0) == 0;
  }

 private:
  bool ReadBytes(void* out, size_t n) {
    char* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t k = recv(fd_, p, n, 0);
      if (k <= 0) return false;
      p += k;
      n -= static_cast<size_t>(k);
    }
    return true;
  }

  int fd_;
  bool connected_ = false;
};

inline v1::LaneRequest ExecuteOf(const std::string& function_id, const Tensor& arg,
                                 int64_t timeout_ms = 0) {
  v1::LaneRequest req;
  req.mutable_execute()->set_function_id(function_id);
  *req.mutable_execute()->add_args() = ToProto(arg);
  req.set_timeout_ms(timeout_ms);
  return req;
}

// Waits up to 10 s for the server's metrics to contain `text`.
inline bool MetricsSay(const server::Server& server, const std::string& text) {
  for (int i = 0; i < 500; ++i) {
    if (absl::StrContains(server.MetricsText(), text)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_TESTING_RAW_LANE_H_
