// kiln._core.LaneRing: the Python client's end of a lane connection's shared-memory ring
// (proto/lane/ring.h), which kiln.lane uses once the server has granted it.
#ifndef KILN_CLIENT_PYTHON_NATIVE_LANE_RING_H_
#define KILN_CLIENT_PYTHON_NATIVE_LANE_RING_H_

#include <pybind11/pybind11.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "proto/lane/ring.h"

namespace kiln {

// The client's end of one lane connection's ring; `sock` is the connection's socket (not owned).
// Errors are Python exceptions (OSError subclasses: kiln.lane treats any as a broken
// connection).
class ClientRing {
 public:
  ClientRing(int fd, uint64_t slot_bytes, int sock);

  uint64_t slot_bytes() const { return ring_->slot_bytes(); }

  // Writes the frame whose bytes are `parts` (buffers) into the request slot and posts it;
  // False, with nothing sent, when the server has closed the connection.
  bool Post(const pybind11::list& parts);
  // Says goodbye before the socket closes (see lane::kOnSocket). Only the process that made the
  // connection may: a forked child's copy is its parent's.
  void Close() { ring_->Post(lane::Side::kClient, lane::kOnSocket); }
  // Tells the server that the next frame comes over the socket; False as Post.
  bool PostOnSocket();
  // The answer's frame (bytes), or None when it comes over the socket. Spins up to `spin`
  // seconds (backing off after spins that miss), then sleeps; TimeoutError after `timeout`
  // seconds (None: no limit), ConnectionError when the server leaves.
  pybind11::object Answer(double spin, std::optional<double> timeout);

  // The pieces of those calls, for a caller that writes its frame in place (PlainLaneCall):
  // whether the server has closed the connection (or written to it: an error before closing),
  // a look at the socket (a system call);
  bool ServerLeft() const;
  // whether it may have left since its last answer: false when the call before this one was
  // posted less than kAnsweredLately ago and answered (a server gone in that moment fails this
  // call as one gone under it would), else ServerLeft (call it just before posting);
  bool MayHaveLeft();
  static constexpr std::chrono::milliseconds kAnsweredLately{1};
  // the slot a request is written into, then posted with its size;
  char* RequestSlot() { return ring_->OutSlot(lane::Side::kClient); }
  void PostRequest(uint64_t size) { ring_->Post(lane::Side::kClient, size); }
  // and the answer's frame in its slot (valid until the next request), nullopt when it comes
  // over the socket; raises as Answer does. Call with the GIL held: it releases it to wait.
  std::optional<std::string_view> AwaitAnswer(double spin, std::optional<double> timeout);

 private:
  std::unique_ptr<lane::Ring> ring_;
  lane::SpinPolicy policy_;
  const int sock_;
  std::chrono::steady_clock::time_point last_post_;  // when MayHaveLeft last ran
  bool answered_ = false;                              // whether that call was answered
};

// Adds LaneRing to the module.
void DefineLaneRing(pybind11::module_& m);

}  // namespace kiln

#endif  // KILN_CLIENT_PYTHON_NATIVE_LANE_RING_H_
