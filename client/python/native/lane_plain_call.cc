#include "client/python/native/lane_plain_call.h"

#include <pthread.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/io/coded_stream.h"
#include "client/python/native/lane_ring.h"
#include "client/python/native/numpy_dtypes.h"
#include "core/tensor/dtype.h"
#include "kiln/v1/types.pb.h"
#include "proto/convert/tensor_convert.h"

namespace kiln {
namespace {

namespace py = pybind11;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

// The wire's tags (field number << 3 | wire type) of the messages written and read here.
constexpr uint8_t kFunctionIdTag = 0x0A;  // ExecuteRequest.function_id
constexpr uint8_t kArgsTag = 0x1A;        // ExecuteRequest.args
constexpr uint8_t kExecuteTag = 0x12;     // LaneRequest.execute
constexpr uint8_t kTimeoutTag = 0x18;     // LaneRequest.timeout_ms
constexpr uint8_t kAnswerTag = 0x22;      // LaneResponse.execute
constexpr uint8_t kOutputsTag = 0x0A;     // ExecuteResponse.outputs
constexpr uint8_t kDTypeTag = 0x08;       // Tensor.dtype
constexpr uint8_t kShapeTag = 0x12;       // Tensor.shape (packed)
constexpr uint8_t kDataTag = 0x1A;        // Tensor.data
constexpr int kMostDims = 32;             // NumPy's (1.x) most dimensions of an array
constexpr int kNpyCContiguous = 0x0001;   // NumPy's NPY_ARRAY_C_CONTIGUOUS flag

// A varint's bytes, and it written at `out` (the end of what it wrote).
size_t VarintSize(uint64_t v) { return CodedOutputStream::VarintSize64(v); }
char* PutVarint(char* out, uint64_t v) {
  return reinterpret_cast<char*>(
      CodedOutputStream::WriteVarint64ToArray(v, reinterpret_cast<uint8_t*>(out)));
}

// One output read from an answer: its dtype, shape and bytes (in the slot).
struct Output {
  DType dtype;
  std::vector<py::ssize_t> shape;
  std::string_view data;
};

// The outputs of an answer `frame` (4-byte length, then a LaneResponse) that holds an
// ExecuteResponse of outputs alone, each Tensor's fields in protobuf's order, a known dtype and
// as many bytes as its shape needs; nullopt for any other answer.
std::optional<std::vector<Output>> ReadOutputs(std::string_view frame) {
  if (frame.size() < 5 || frame.size() > std::numeric_limits<int>::max()) return std::nullopt;
  const int size = static_cast<int>(frame.size()) - 4;
  CodedInputStream in(reinterpret_cast<const uint8_t*>(frame.data()) + 4, size);
  // A length read from the frame, if it fits in what is left of it.
  auto length = [&](uint32_t* n) {
    return in.ReadVarint32(n) && static_cast<int64_t>(*n) <= size - in.CurrentPosition();
  };
  uint32_t n = 0;
  if (!in.ExpectTag(kAnswerTag) || !length(&n) ||
      static_cast<int64_t>(n) != size - in.CurrentPosition()) {
    return std::nullopt;
  }
  std::vector<Output> outputs;
  while (!in.ExpectAtEnd()) {
    if (!in.ExpectTag(kOutputsTag) || !length(&n)) return std::nullopt;
    const CodedInputStream::Limit tensor = in.PushLimit(static_cast<int>(n));
    uint64_t proto_dtype = 0, elements = 1;
    if (in.ExpectTag(kDTypeTag) && !in.ReadVarint64(&proto_dtype)) return std::nullopt;
    Output out;
    if (in.ExpectTag(kShapeTag)) {
      if (!length(&n)) return std::nullopt;
      const CodedInputStream::Limit dims = in.PushLimit(static_cast<int>(n));
      while (in.BytesUntilLimit() > 0) {
        uint64_t d = 0;
        if (!in.ReadVarint64(&d) || d > frame.size() || out.shape.size() == kMostDims) {
          return std::nullopt;
        }
        out.shape.push_back(static_cast<py::ssize_t>(d));
        // (Saturated past the frame's size: too many for its bytes, unless a later dim is 0,
        // which the slow path reads.)
        elements = elements > frame.size() ? elements : elements * d;
      }
      in.PopLimit(dims);
    }
    uint32_t bytes = 0;
    if (in.ExpectTag(kDataTag) && !length(&bytes)) return std::nullopt;
    if (static_cast<int>(bytes) != in.BytesUntilLimit()) return std::nullopt;
    out.data = frame.substr(4 + in.CurrentPosition(), bytes);
    if (!in.Skip(static_cast<int>(bytes))) return std::nullopt;
    in.PopLimit(tensor);
    const absl::StatusOr<DType> dtype =
        proto_dtype == 0 || proto_dtype > 64 ? absl::StatusOr<DType>(absl::UnknownError(""))
                                             : FromProto(static_cast<v1::DType>(proto_dtype));
    if (!dtype.ok() || elements > frame.size() ||
        elements * static_cast<uint64_t>(DTypeSize(*dtype)) != bytes) {
      return std::nullopt;
    }
    out.dtype = *dtype;
    outputs.push_back(std::move(out));
  }
  return outputs;
}

// One function's calls of plain arrays over a ring: the ExecuteRequest written straight into
// the ring's request slot, and the outputs read from the answer's slot into new arrays.
class PlainLaneCall {
 public:
  // Per input, (NumPy type number, kiln.v1.DType, static dims with -1 where any size fits).
  using InputKind = std::tuple<int, int, std::vector<int64_t>>;

  PlainLaneCall(const py::bytes& function_id, std::vector<InputKind> inputs, size_t n_outputs,
                bool single)
      : function_id_(function_id), inputs_(std::move(inputs)), n_outputs_(n_outputs),
        single_(single) {}

  // One call: its outputs (the array itself when `single`); bytes, the answer's frame, when it
  // holds anything else (an error, printed values: kiln.lane reads those); NotImplemented, with
  // nothing sent, when an argument is not an ndarray of its input's type number, native byte
  // order, rank and static dims, in C order, or when the call moves `region_bytes` or more
  // (the arguments, and the outputs as the last call gave them: the shared-memory region's
  // business) or more than the slot holds; False, with nothing sent, when the server has
  // closed the connection. Raises as LaneRing.answer once the call is sent.
  py::object Call(ClientRing& ring, const py::tuple& args, double spin,
                  std::optional<double> timeout, int64_t region_bytes) {
    const py::object not_implemented = py::reinterpret_borrow<py::object>(Py_NotImplemented);
    if (args.size() != inputs_.size()) return not_implemented;
    PyTypeObject* ndarray = py::detail::npy_api::get().PyArray_Type_;
    // Per argument: its array, its bytes and the size of its Tensor message.
    arrays_.clear();
    uint64_t request = 1 + VarintSize(function_id_.size()) + function_id_.size();
    uint64_t moved = output_bytes_;
    for (size_t i = 0; i < args.size(); ++i) {
      PyObject* arg = args[i].ptr();
      if (Py_TYPE(arg) != ndarray) return not_implemented;
      const auto* array = py::detail::array_proxy(arg);
      const auto* descr = py::detail::array_descriptor_proxy(array->descr);
      const auto& [type_num, proto_dtype, dims] = inputs_[i];
      if (descr->type_num != type_num || descr->byteorder == '>' ||
          array->nd != static_cast<int>(dims.size()) || !(array->flags & kNpyCContiguous)) {
        return not_implemented;
      }
      uint64_t elements = 1, dims_bytes = 0;
      for (size_t d = 0; d < dims.size(); ++d) {
        const auto n = static_cast<uint64_t>(array->dimensions[d]);
        if (dims[d] >= 0 && n != static_cast<uint64_t>(dims[d])) return not_implemented;
        elements *= n;
        dims_bytes += VarintSize(n);
      }
      const uint64_t nbytes = elements * static_cast<uint64_t>(descr->elsize);
      uint64_t tensor = 1 + VarintSize(proto_dtype);
      if (!dims.empty()) tensor += 1 + VarintSize(dims_bytes) + dims_bytes;
      if (nbytes) tensor += 1 + VarintSize(nbytes) + nbytes;
      request += 1 + VarintSize(tensor) + tensor;
      moved += nbytes;
      arrays_.push_back({array, nbytes, dims_bytes, tensor});
    }
    const uint64_t timeout_ms =
        timeout ? std::max<uint64_t>(1, static_cast<uint64_t>(*timeout * 1000)) : 0;
    const uint64_t message = 1 + VarintSize(request) + request +
                             (timeout ? 1 + VarintSize(timeout_ms) : 0);
    if (static_cast<int64_t>(moved) >= region_bytes || 4 + message > ring.slot_bytes()) {
      return not_implemented;
    }
    if (ring.MayHaveLeft()) return py::bool_(false);
    Frame(ring.RequestSlot(), message, request, timeout_ms);
    ring.PostRequest(4 + message);
    const std::optional<std::string_view> frame =
        ring.AwaitAnswer(spin, timeout ? std::optional<double>(*timeout + 5) : std::nullopt);
    if (!frame) return py::none();  // the answer comes over the socket
    return Outputs(*frame);
  }

  // The last call's outputs' bytes, 64 more per output (the room a region would keep).
  int64_t output_bytes() const { return static_cast<int64_t>(output_bytes_); }

 private:
  struct Argument {
    const py::detail::PyArray_Proxy* array;  // (borrowed from the call's args)
    uint64_t nbytes, dims_bytes, tensor;
  };

  // Writes the frame (its length, then a LaneRequest of `message` bytes whose ExecuteRequest
  // has `request` bytes) at `out`.
  void Frame(char* out, uint64_t message, uint64_t request, uint64_t timeout_ms) const {
    const auto length = static_cast<uint32_t>(message);
    std::memcpy(out, &length, 4);  // little-endian (the lane's order; checked by the caller)
    out += 4;
    *out++ = static_cast<char>(kExecuteTag);
    out = PutVarint(out, request);
    *out++ = static_cast<char>(kFunctionIdTag);
    out = PutVarint(out, function_id_.size());
    out = std::copy(function_id_.begin(), function_id_.end(), out);
    for (size_t i = 0; i < arrays_.size(); ++i) {
      const Argument& a = arrays_[i];
      *out++ = static_cast<char>(kArgsTag);
      out = PutVarint(out, a.tensor);
      *out++ = static_cast<char>(kDTypeTag);
      out = PutVarint(out, static_cast<uint64_t>(std::get<1>(inputs_[i])));
      if (a.array->nd > 0) {
        *out++ = static_cast<char>(kShapeTag);
        out = PutVarint(out, a.dims_bytes);
        for (int d = 0; d < a.array->nd; ++d) {
          out = PutVarint(out, static_cast<uint64_t>(a.array->dimensions[d]));
        }
      }
      if (a.nbytes) {
        *out++ = static_cast<char>(kDataTag);
        out = PutVarint(out, a.nbytes);
        std::memcpy(out, a.array->data, a.nbytes);
        out += a.nbytes;
      }
    }
    if (timeout_ms) {
      *out++ = static_cast<char>(kTimeoutTag);
      PutVarint(out, timeout_ms);
    }
  }

  // The outputs of an answer as new arrays, or its bytes when it holds more than outputs.
  py::object Outputs(std::string_view frame) {
    const std::optional<std::vector<Output>> outputs = ReadOutputs(frame);
    if (!outputs || outputs->size() != n_outputs_) return py::bytes(frame.data(), frame.size());
    py::list results(outputs->size());
    uint64_t bytes = 0;
    for (size_t o = 0; o < outputs->size(); ++o) {
      const Output& out = (*outputs)[o];
      py::array array(NumpyDType(out.dtype), out.shape);
      std::memcpy(array.mutable_data(), out.data.data(), out.data.size());
      bytes += out.data.size() + 64;
      results[o] = std::move(array);
    }
    output_bytes_ = bytes;
    return single_ ? py::object(results[0]) : py::object(std::move(results));
  }

  const std::string function_id_;
  const std::vector<InputKind> inputs_;
  const size_t n_outputs_;
  const bool single_;
  uint64_t output_bytes_ = 0;
  std::vector<Argument> arrays_;  // the call's arguments (kept to spare an allocation a call)
};

// Bumped in a forked child (pthread_atfork): a ring armed before the fork is its parent's.
std::atomic<uint64_t> forks{0};

// The whole of a function's plain lane calls in C++ once a call through this thread's ring has
// worked (kiln.runners arms it then): each call checks what kiln.runners' Python path would (the
// armed ring this thread's and process's, open and used within the idle look, the
// function's id unchanged, the runner's client's lane the armed one and usable, kiln.config read
// afresh) and sends; a call that fails a check goes to `fallback` (that Python path), an answer
// that is not plain outputs to `finish`, a broken connection to `broken` (both Python). It holds
// its function and runner, which hold it: the type takes part in Python's garbage collection.
class LaneFastCall {
 public:
  LaneFastCall(py::object fallback, py::object finish, py::object broken, py::object fn,
               py::object runner, py::object config, double idle_look, double auto_spin)
      : fallback_(std::move(fallback)), finish_(std::move(finish)), broken_(std::move(broken)),
        fn_(std::move(fn)), runner_(std::move(runner)), config_(std::move(config)),
        idle_look_(std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(idle_look))),
        auto_spin_(auto_spin) {}

  // Takes the next calls from this thread through `ring` (of the kiln.lane.Lane `lane`) with
  // `plain`, while `function_id` (a str, compared by identity) is the function's and `lane`
  // its runner's client's, usable.
  void Arm(py::object plain, py::object ring, py::object function_id, py::object lane) {
    local_ = lane.attr("_local");
    lane_ = std::move(lane);
    call_ = &plain.cast<PlainLaneCall&>();
    ring_ptr_ = &ring.cast<ClientRing&>();
    plain_ = std::move(plain);
    ring_ = std::move(ring);
    function_id_ = std::move(function_id);
    forks_ = forks.load(std::memory_order_relaxed);
    used_ = Clock::now();
  }

  py::object Call(const py::tuple& args) {
    if (!fallback_) throw py::type_error("LaneFastCall: called after the collector cleared it");
    const Clock::time_point now = Clock::now();
    if (!plain_ || forks_ != forks.load(std::memory_order_relaxed) || now - used_ > idle_look_ ||
        fn_.attr(names_.function_id).ptr() != function_id_.ptr() || !IsThisThreadsRing()) {
      return fallback_(args);
    }
    const py::object lane = runner_.attr(names_.client).attr(names_.lane);
    if (lane.ptr() != lane_.ptr() || PyObject_IsTrue(lane.attr(names_.usable).ptr()) != 1) {
      return fallback_(args);
    }
    // (Held here: another thread may arm this object again while this call waits.)
    const py::object plain = plain_, ring_object = ring_;
    ClientRing& ring = *ring_ptr_;
    PlainLaneCall& call = *call_;
    const py::object spin = config_.attr(names_.lane_spin), timeout = config_.attr(names_.timeout);
    py::object out;
    try {
      out = call.Call(ring, args, spin.is_none() ? auto_spin_ : spin.cast<double>(),
                      timeout.is_none() ? std::nullopt : std::optional(timeout.cast<double>()),
                      config_.attr(names_.shm_min_bytes).cast<int64_t>());
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_OSError) && !e.matches(PyExc_EOFError)) throw;
      plain_ = py::object();
      return broken_(e.value());
    }
    if (out.ptr() == Py_NotImplemented) return fallback_(args);
    if (out.is_none() || out.ptr() == Py_False || PyBytes_Check(out.ptr())) {
      plain_ = py::object();
      return finish_(out);
    }
    used_ = now;
    if (call.output_bytes() != output_bytes_) {
      output_bytes_ = call.output_bytes();
      runner_.attr(names_.output_bytes) = output_bytes_;
    }
    return out;
  }

  // Whether the armed ring is this thread's (kiln.lane keeps one per thread in Lane._local; a
  // thread's ident may be a finished one's) and still open (Lane._drop forgets a closed one).
  bool IsThisThreadsRing() const {
    PyObject* ring = PyObject_GetAttr(local_.ptr(), names_.ring.ptr());
    if (ring == nullptr) {
      PyErr_Clear();  // (a thread that has not connected yet)
      return false;
    }
    Py_DECREF(ring);  // (only compared)
    return ring == ring_.ptr();
  }

  // Python's garbage collection: the objects held, visited and let go.
  int Traverse(visitproc visit, void* arg) const {
    for (const py::object* o : {&fallback_, &finish_, &broken_, &fn_, &runner_, &config_,
                                &plain_, &ring_, &function_id_, &lane_, &local_}) {
      Py_VISIT(o->ptr());
    }
    return 0;
  }
  void Clear() {
    for (py::object* o : {&fallback_, &finish_, &broken_, &fn_, &runner_, &config_, &plain_,
                          &ring_, &function_id_, &lane_, &local_}) {
      *o = py::object();
    }
  }

 private:
  using Clock = std::chrono::steady_clock;

  py::object fallback_, finish_, broken_, fn_, runner_, config_;
  const Clock::duration idle_look_;  // kiln.lane's: past it, the Python path looks at the socket
  const double auto_spin_;            // the spin when kiln.config.lane_spin is None
  // The attributes read on each call, by names made once.
  struct Names {
    py::str function_id{"function_id"}, lane_spin{"lane_spin"}, timeout{"timeout"},
        shm_min_bytes{"shm_min_bytes"}, output_bytes{"output_bytes"}, client{"client"},
        lane{"_lane"}, usable{"usable"}, ring{"ring"};
  } names_;
  py::object plain_, ring_, function_id_, lane_;  // what Arm gave (plain_ empty: not armed)
  py::object local_;                              // lane_'s per-thread state
  PlainLaneCall* call_ = nullptr;          // plain_'s and ring_'s C++ objects
  ClientRing* ring_ptr_ = nullptr;
  uint64_t forks_ = 0;
  Clock::time_point used_;
  int64_t output_bytes_ = -1;
};

}  // namespace

void DefinePlainLaneCall(py::module_& m) {
  py::class_<PlainLaneCall>(m, "PlainLaneCall",
                            "A function's calls of plain arrays over a lane ring, framed and "
                            "read in C++: PlainLaneCall(function_id, inputs, n_outputs, single), "
                            "inputs a list of (NumPy type number, kiln.v1.DType, static dims "
                            "with -1 where any size fits).")
      .def(py::init<const py::bytes&, std::vector<PlainLaneCall::InputKind>, size_t, bool>(),
           py::arg("function_id"), py::arg("inputs"), py::arg("n_outputs"), py::arg("single"))
      .def_property_readonly("output_bytes", &PlainLaneCall::output_bytes,
                             "The last call's outputs' bytes, 64 more per output.")
      .def("call", &PlainLaneCall::Call, py::arg("ring"), py::arg("args"), py::arg("spin"),
           py::arg("timeout"), py::arg("region_bytes"),
           "One call: its outputs; the answer's bytes when it holds more than outputs; "
           "NotImplemented (nothing sent) for arguments it does not take; False (nothing "
           "sent) when the server has closed the connection.");
  static const int registered =
      pthread_atfork(nullptr, nullptr, [] { forks.fetch_add(1, std::memory_order_relaxed); });
  (void)registered;
  // (The collector may look at an instance before its __init__ has made the C++ object.)
  static constexpr auto made = [](PyObject* self) -> LaneFastCall* {
    const py::detail::value_and_holder held =
        reinterpret_cast<py::detail::instance*>(self)->get_value_and_holder();
    return held.holder_constructed() ? held.value_ptr<LaneFastCall>() : nullptr;
  };
  auto collected = [](PyHeapTypeObject* heap_type) {
    PyTypeObject* type = &heap_type->ht_type;
    type->tp_flags |= Py_TPFLAGS_HAVE_GC;
    type->tp_traverse = [](PyObject* self, visitproc visit, void* arg) {
      Py_VISIT(Py_TYPE(self));  // (a heap type's instances visit it)
      const LaneFastCall* call = made(self);
      return call == nullptr ? 0 : call->Traverse(visit, arg);
    };
    type->tp_clear = [](PyObject* self) {
      if (LaneFastCall* call = made(self)) call->Clear();
      return 0;
    };
  };
  py::class_<LaneFastCall>(m, "LaneFastCall",
                           py::custom_type_setup(collected),
                           "A function's plain lane calls taken whole in C++ once armed: "
                           "LaneFastCall(fallback, finish, broken, fn, runner, config, "
                           "idle_look, auto_spin); see kiln.runners.")
      .def(py::init<py::object, py::object, py::object, py::object, py::object, py::object,
                    double, double>(),
           py::arg("fallback"), py::arg("finish"), py::arg("broken"), py::arg("fn"),
           py::arg("runner"), py::arg("config"), py::arg("idle_look"), py::arg("auto_spin"))
      .def("arm", &LaneFastCall::Arm, py::arg("plain"), py::arg("ring"), py::arg("function_id"),
           py::arg("lane"),
           "Takes this thread's next calls through `ring` (a LaneRing of the kiln.lane.Lane "
           "`lane`) with `plain` (a PlainLaneCall) while the function's id is `function_id` and "
           "`lane` its runner's client's, usable.")
      .def("__call__", &LaneFastCall::Call, py::arg("args"),
           "One call of the tuple `args`: its outputs, or what fallback or finish gave.");
}

}  // namespace kiln
