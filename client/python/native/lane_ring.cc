#include "client/python/native/lane_ring.h"

#include <poll.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "absl/time/time.h"

namespace kiln {
namespace {

namespace py = pybind11;

// An OSError subclass raised from here: kiln.lane treats any OSError as a broken connection.
[[noreturn]] void Raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

}  // namespace

ClientRing::ClientRing(int fd, uint64_t slot_bytes, int sock) : sock_(sock) {
  absl::StatusOr<std::unique_ptr<lane::Ring>> ring = lane::Ring::Open(fd, slot_bytes);
  if (!ring.ok()) Raise(PyExc_ConnectionError, std::string(ring.status().message()));
  ring_ = std::move(*ring);
}

bool ClientRing::ServerLeft() const {
  pollfd p{sock_, POLLIN | POLLRDHUP, 0};
  return poll(&p, 1, 0) != 0;
}

bool ClientRing::MayHaveLeft() {
  const auto now = std::chrono::steady_clock::now();
  const bool lately = answered_ && now - last_post_ < kAnsweredLately;
  last_post_ = now;
  answered_ = false;
  return !lately && ServerLeft();
}

bool ClientRing::Post(const py::list& parts) {
  if (MayHaveLeft()) return false;
  char* slot = RequestSlot();
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
  PostRequest(size);
  return true;
}

bool ClientRing::PostOnSocket() {
  if (MayHaveLeft()) return false;
  ring_->Post(lane::Side::kClient, lane::kOnSocket);
  return true;
}

std::optional<std::string_view> ClientRing::AwaitAnswer(double spin,
                                                        std::optional<double> timeout) {
  absl::StatusOr<uint64_t> size;
  {
    py::gil_scoped_release release;
    const absl::Time deadline =
        timeout ? absl::Now() + absl::Seconds(*timeout) : absl::InfiniteFuture();
    size = ring_->Await(lane::Side::kClient, absl::Seconds(spin), policy_, deadline,
                        absl::Milliseconds(50), [this] {
                          return ServerLeft()
                                     ? absl::UnavailableError("the server closed the lane")
                                     : absl::OkStatus();
                        });
  }
  if (!size.ok()) {
    Raise(size.status().code() == absl::StatusCode::kDeadlineExceeded ? PyExc_TimeoutError
                                                                      : PyExc_ConnectionError,
          std::string(size.status().message()));
  }
  if (*size == lane::kOnSocket) return std::nullopt;
  if (*size < 4 || *size > ring_->slot_bytes()) {
    Raise(PyExc_ConnectionError, "the lane ring's answer has a size outside its slot");
  }
  answered_ = true;
  return std::string_view(ring_->InSlot(lane::Side::kClient), *size);
}

py::object ClientRing::Answer(double spin, std::optional<double> timeout) {
  const std::optional<std::string_view> frame = AwaitAnswer(spin, timeout);
  if (!frame) return py::none();
  return py::bytes(frame->data(), frame->size());
}

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
