#include "client/python/native/lane_ring.h"

#include <poll.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "proto/lane/ring.h"

namespace kiln {
namespace {

namespace py = pybind11;

// An OSError subclass raised from here: kiln.lane treats any OSError as a broken connection.
[[noreturn]] void Raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

// Whether the server has closed the lane's socket, or written to it (which, while a call waits
// in the ring, it does only before closing: an error frame).
bool ServerLeft(int sock) {
  pollfd p{sock, POLLIN | POLLRDHUP, 0};
  return poll(&p, 1, 0) != 0;
}

// The client's end of one lane connection's ring; `sock` is the connection's socket (not owned).
class ClientRing {
 public:
  ClientRing(int fd, uint64_t slot_bytes, int sock) : sock_(sock) {
    absl::StatusOr<std::unique_ptr<lane::Ring>> ring = lane::Ring::Open(fd, slot_bytes);
    if (!ring.ok()) Raise(PyExc_ConnectionError, std::string(ring.status().message()));
    ring_ = std::move(*ring);
  }

  uint64_t slot_bytes() const { return ring_->slot_bytes(); }

  // Writes the frame whose bytes are `parts` (buffers) into the request slot and posts it;
  // False, with nothing sent, when the server has closed the connection.
  bool Post(const py::list& parts) {
    if (ServerLeft(sock_)) return false;
    char* slot = ring_->OutSlot(lane::Side::kClient);
    uint64_t size = 0;
    for (const py::handle part : parts) {
      const py::buffer_info info = py::reinterpret_borrow<py::buffer>(part).request();
      const uint64_t n = static_cast<uint64_t>(info.size * info.itemsize);
      if (size + n > ring_->slot_bytes()) {
        Raise(PyExc_ValueError, "a lane frame larger than its ring's slot: send it on the socket");
      }
      std::memcpy(slot + size, info.ptr, n);
      size += n;
    }
    ring_->Post(lane::Side::kClient, size);
    return true;
  }

  // Says goodbye before the socket closes (see lane::kOnSocket). Only the process that made the
  // connection may: a forked child's copy is its parent's.
  void Close() { ring_->Post(lane::Side::kClient, lane::kOnSocket); }

  // Tells the server that the next frame comes over the socket; False as Post.
  bool PostOnSocket() {
    if (ServerLeft(sock_)) return false;
    ring_->Post(lane::Side::kClient, lane::kOnSocket);
    return true;
  }

  // The answer's frame (bytes), or None when it comes over the socket. Spins up to `spin`
  // seconds (backing off after spins that miss), then sleeps; TimeoutError after `timeout`
  // seconds (None: no limit), ConnectionError when the server leaves.
  py::object Answer(double spin, std::optional<double> timeout) {
    absl::StatusOr<uint64_t> size;
    {
      py::gil_scoped_release release;
      const absl::Time deadline =
          timeout ? absl::Now() + absl::Seconds(*timeout) : absl::InfiniteFuture();
      size = ring_->Await(lane::Side::kClient, absl::Seconds(spin), policy_, deadline,
                          absl::Milliseconds(50), [this] {
                            return ServerLeft(sock_)
                                       ? absl::UnavailableError("the server closed the lane")
                                       : absl::OkStatus();
                          });
    }
    if (!size.ok()) {
      Raise(size.status().code() == absl::StatusCode::kDeadlineExceeded ? PyExc_TimeoutError
                                                                        : PyExc_ConnectionError,
            std::string(size.status().message()));
    }
    if (*size == lane::kOnSocket) return py::none();
    if (*size < 4 || *size > ring_->slot_bytes()) {
      Raise(PyExc_ConnectionError, "the lane ring's answer has a size outside its slot");
    }
    return py::bytes(ring_->InSlot(lane::Side::kClient), *size);
  }

 private:
  std::unique_ptr<lane::Ring> ring_;
  lane::SpinPolicy policy_;
  const int sock_;
};

}  // namespace

void DefineLaneRing(py::module_& m) {
  py::class_<ClientRing>(m, "LaneRing",
                         "The client's end of a lane connection's shared-memory ring "
                         "(proto/lane/ring.h): LaneRing(memfd, slot_bytes, socket_fd) takes the "
                         "memfd; the socket stays the caller's.")
      .def(py::init<int, uint64_t, int>(), py::arg("fd"), py::arg("slot_bytes"), py::arg("sock"))
      .def_property_readonly("slot_bytes", &ClientRing::slot_bytes)
      .def("post", &ClientRing::Post, py::arg("parts"),
           "Writes the frame made of `parts` into the request slot and posts it; False (nothing "
           "sent) when the server has closed the connection.")
      .def("close", &ClientRing::Close,
           "Says goodbye to the server before the socket closes (the connection's own process "
           "only).")
      .def("post_on_socket", &ClientRing::PostOnSocket,
           "Announces a frame sent over the socket (one larger than the slot).")
      .def("answer", &ClientRing::Answer, py::arg("spin"), py::arg("timeout"),
           "The answer's frame, or None when it comes over the socket.");
}

}  // namespace kiln
