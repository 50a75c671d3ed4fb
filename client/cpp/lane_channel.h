// The C++ client's same-host lane (server/local_lane.h): when the server says it listens on a
// Unix socket (GetVersion.local_socket) and that socket is reachable from here and held by the
// server's own process (SO_PEERCRED against GetVersion.local_pid, checked before the token is
// sent), Execute goes through it instead of gRPC. KILN_LANE=off: never; on: an error when it
// cannot be used; auto (the default): when it can.
#ifndef KILN_CLIENT_CPP_LANE_CHANNEL_H_
#define KILN_CLIENT_CPP_LANE_CHANNEL_H_

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "kiln/v1/service.pb.h"

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

  std::string path_;
  uint32_t pid_ = 0;
  std::string instance_;
  const std::string authorization_;
  const Refresh refresh_;
  bool usable_ = false;
  bool required_ = false;  // KILN_LANE=on
  std::mutex mutex_;       // one call at a time on the connection
  int fd_ = -1;
  std::chrono::steady_clock::time_point used_;
};

}  // namespace kiln::client

#endif  // KILN_CLIENT_CPP_LANE_CHANNEL_H_
