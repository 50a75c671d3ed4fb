// The C++ client's same-host lane (server/local_lane.h): when the server says it listens on a
// Unix socket (GetVersion.local_socket) and that socket is reachable from here and held by the
// server's own process (SO_PEERCRED against GetVersion.local_pid, checked before the token is
// sent), Execute goes through it instead of gRPC. KILN_LANE=off: never; on: an error when it
// cannot be used; auto (the default): when it can. The connection asks for the server's
// shared-memory ring (proto/lane/ring.h; KILN_LANE_RING=0: not), through which its calls then
// pass, spinning up to 100 us for an answer before sleeping.
#ifndef KILN_CLIENT_CPP_LANE_CHANNEL_H_
#define KILN_CLIENT_CPP_LANE_CHANNEL_H_

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "kiln/v1/service.pb.h"
#include "proto/lane/ring.h"

namespace kiln::client {

class LaneChannel {
 public:
  // The server's lane as GetVersion says it now (after a restart, a new process).
  using Refresh = std::function<absl::StatusOr<v1::GetVersionResponse>()>;

  LaneChannel(const std::string& address, const v1::GetVersionResponse& version,
              std::string authorization, Refresh refresh);
  ~LaneChannel();
  LaneChannel(const LaneChannel&) = delete;
  LaneChannel& operator=(const LaneChannel&) = delete;

  // False when off, or when the server has no lane reachable from here.
  bool usable() const { return usable_; }
  // KILN_LANE=on: a lane that cannot be had is an error.
  bool required() const { return required_; }
  // Execute's response (or the server's error) over the lane; nullopt when this call cannot use
  // it (another thread's call has it, or it is unusable): the caller then uses gRPC.
  // UNAVAILABLE when the connection broke after the call was sent.
  std::optional<absl::StatusOr<v1::ExecuteResponse>> Execute(const v1::ExecuteRequest& req,
                                                              int64_t timeout_ms = 0);

 private:
  // The connection, made and checked on first use; false when the lane cannot be had.
  absl::StatusOr<bool> Connected();
  absl::Status Connect();
  void Drop();
  // One call's frame (`body` after its length) through the ring, and the answer.
  absl::StatusOr<v1::LaneResponse> RingCall(const std::string& body, int64_t timeout_ms);

  std::string path_;
  uint32_t pid_ = 0;
  std::string instance_;
  const std::string authorization_;
  const Refresh refresh_;
  bool usable_ = false;
  bool required_ = false;  // KILN_LANE=on
  std::mutex mutex_;       // one call at a time on the connection
  int fd_ = -1;
  std::unique_ptr<lane::Ring> ring_;  // the connection's ring, when the server granted it
  lane::SpinPolicy spin_;
  std::chrono::steady_clock::time_point used_;
};

}  // namespace kiln::client

#endif  // KILN_CLIENT_CPP_LANE_CHANNEL_H_
