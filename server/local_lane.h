// The same-host lane: Execute over a Unix socket, beside gRPC, for clients on the server's
// machine (frames of LaneRequest and LaneResponse, see service.proto). A call costs two small
// socket writes instead of an HTTP/2 exchange; with the shared-memory ring a client asks for in
// its hello (proto/lane/ring.h), two writes to shared memory, and no system call while both
// sides spin. The same tokens, tenants, quotas and limits apply
// as on gRPC; a connection is bounded in number, in frame size and in time. A connection's calls
// run on its own thread, with no hop to the pool (the hop's wake-up costs more than the calls the
// lane is for); --max_concurrent_executions bounds how many run at once, as on gRPC.
#ifndef KILN_SERVER_LOCAL_LANE_H_
#define KILN_SERVER_LOCAL_LANE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kiln/v1/service.pb.h"
#include "proto/lane/ring.h"
#include "server/calls.h"

namespace kiln::server {

struct LaneOptions {
  std::string path;  // the socket's path
  int max_connections = 64;
  // A connection idle this long is closed, and so is one whose frame takes longer to arrive.
  absl::Duration timeout = absl::Minutes(5);
  int64_t max_frame_bytes = 64 << 20;
  // After answering, a connection's thread waits this long awake for the next call (skipped
  // for the next 1, 2, 4 ... 64 frames after a wait that missed or was preempted).
  absl::Duration spin = absl::ZeroDuration();
  // Each slot of a connection's shared-memory ring, when its client asks for one; 0: no rings.
  uint64_t ring_slot_bytes = 256 << 10;
};

// One connection's calls, without the socket: the hello, then Executes under the hello's token,
// authenticated again on each call (a token removed by a reload stops working at once).
class LaneCalls {
 public:
  // `peer_gone` is polled during an execution: true cancels it.
  LaneCalls(Calls& calls, std::function<bool()> peer_gone);
  // The answer to one frame's bytes, made on `arena` with the request's messages (an arena of
  // ArenaOptions: no allocation for a small call). Sets `close` when the connection must end
  // after it.
  v1::LaneResponse* Handle(absl::string_view frame, bool* close, google::protobuf::Arena& arena);
  // The options of each call's arena: its first block is this connection's, kept across calls.
  google::protobuf::ArenaOptions ArenaOptions() const;
  // Whether the hello just answered asked for the ring (true once).
  bool TakeRingRequest() { return std::exchange(ring_requested_, false); }

 private:
  absl::Status Call(const v1::LaneRequest& req, v1::LaneResponse* resp, bool* close);

  // The first block of each call's arena (its request's messages), kept across calls.
  static constexpr size_t kFirstBlockBytes = 16 << 10;
  Calls& calls_;
  std::function<bool()> peer_gone_;
  std::unique_ptr<char[]> first_block_;
  bool said_hello_ = false;
  bool ring_requested_ = false;
  std::string authorization_;
};

class LocalLane {
 public:
  // Listens on options.path: a stale socket there (no server answers it) is replaced; a live
  // one or any other file is an error.
  static absl::StatusOr<std::unique_ptr<LocalLane>> Start(const LaneOptions& options, Calls& calls);
  ~LocalLane();

  // Stops taking connections and closes the idle ones; calls running get `grace` to finish,
  // then are cancelled. Removes the socket. Safe to call twice.
  void Stop(absl::Duration grace = absl::Seconds(10));
  const std::string& path() const { return options_.path; }
  // Connections open now.
  int connections() const;

 private:
  LocalLane(const LaneOptions& options, Calls& calls, int listener);
  struct State;
  // Takes connections until Stop, each on a thread of its own.
  void AcceptLoop(State& state);
  // One connection's frames, until it ends.
  void Serve(int fd, State& state);

  // What the connections' threads share with Stop. They hold it too, so that it outlives the
  // lane until the last of them has let go of its mutex.
  struct State {
    absl::Mutex mutex;
    int open ABSL_GUARDED_BY(mutex) = 0;  // threads running: AcceptLoop's and connections'
    std::vector<int> fds ABSL_GUARDED_BY(mutex);  // the open connections' sockets
    std::vector<lane::Ring*> rings ABSL_GUARDED_BY(mutex);  // their rings, woken by Stop
    bool accepting ABSL_GUARDED_BY(mutex) = true;
    std::atomic<bool> stopping{false};
    std::atomic<bool> cancel{false};  // past Stop's grace: running calls end
  };

  const LaneOptions options_;
  Calls& calls_;
  const int listener_;
  int wake_[2] = {-1, -1};  // a pipe: a byte on it stops AcceptLoop
  const std::shared_ptr<State> state_ = std::make_shared<State>();
  bool stopped_ = false;
};

}  // namespace kiln::server

#endif  // KILN_SERVER_LOCAL_LANE_H_
