// kiln._core.Executable: loads a kiln.v1.StoredFunction (what Compile returns with
// return_stored) and calls it on NumPy arrays. Arguments are read in place (Kiln never writes
// into a function's inputs) and results are handed over without a copy; the GIL is released
// while the function runs. Errors are kiln._core.CallError(code, message), code a gRPC status
// name as the server would answer.
#include "client/python/native/executable.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/python/native/numpy_dtypes.h"
#include "core/ops/print.h"
#include "proto/convert/function_convert.h"
#include "proto/version.h"

namespace py = pybind11;

namespace kiln {
namespace {

PyObject* call_error = nullptr;

[[noreturn]] void ThrowCallError(const absl::Status& status) {
  py::object args =
      py::make_tuple(absl::StatusCodeToString(status.code()), std::string(status.message()));
  PyErr_SetObject(call_error, args.ptr());
  throw py::error_already_set();
}

// A tensor reading the array's memory in place (a copy when its strides are not whole elements
// or its bytes are big-endian); the caller keeps the array alive while the tensor
// is used (a function's results never share its arguments' memory).
Tensor TensorOfArray(py::handle value, size_t index, std::vector<py::object>& keep) {
  py::array array = py::array::ensure(value);
  if (!array) {
    PyErr_Clear();
    ThrowCallError(absl::InvalidArgumentError(
        absl::StrCat("argument ", index, " is not convertible to an array")));
  }
  if (array.dtype().byteorder() == '>') {  // NumPy's big-endian: in this machine's order
    return TensorOfArray(array.attr("astype")(array.dtype().attr("newbyteorder")("=")), index,
                         keep);
  }
  std::optional<DType> dtype = DTypeOfNumpy(array.dtype());
  if (!dtype) {
    ThrowCallError(absl::InvalidArgumentError(absl::StrCat("argument ", index, ": dtype ",
                                                           std::string(py::str(array.dtype())),
                                                           " is not one of Kiln's")));
  }
  const py::ssize_t item = array.itemsize();
  Shape shape(array.shape(), array.shape() + array.ndim());
  // NumPy allows shapes such as (0, 2^62): Kiln takes at most kMaxTensorBytes, empty or not.
  if (absl::Status s = CheckShape(absl::StrCat("argument ", index), shape, *dtype); !s.ok()) {
    ThrowCallError(s);
  }
  std::vector<int64_t> strides(array.ndim());
  for (py::ssize_t d = 0; d < array.ndim(); ++d) {
    if (array.strides(d) % item != 0) {
      return TensorOfArray(py::module_::import("numpy").attr("ascontiguousarray")(array), index,
                           keep);
    }
    strides[d] = array.strides(d) / item;
  }
  void* data = const_cast<void*>(array.data());
  keep.push_back(std::move(array));
  return Tensor::Wrap(*dtype, std::move(shape), std::move(strides), data,
                      std::shared_ptr<void>(data, [](void*) {}));
}

// An array over the tensor's buffer, which it keeps alive.
py::array ArrayOfTensor(Tensor t) {
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides(t.ndim());
  for (int d = 0; d < t.ndim(); ++d) strides[d] = t.strides()[d] * DTypeSize(t.dtype());
  const DType dtype = t.dtype();
  auto* held = new Tensor(std::move(t));
  py::capsule owner(held, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(NumpyDType(dtype), std::move(shape), std::move(strides),
                   held->raw_data(), owner);
}

class Executable {
 public:
  explicit Executable(const py::bytes& stored) {
    absl::StatusOr<StoredFunction> loaded =
        LoadStoredFunction(std::string_view(stored), kStoredFunctionFormat);
    if (!loaded.ok()) ThrowCallError(loaded.status());
    id_ = loaded->stored.id();
    function_ = std::make_unique<Function>(std::move(loaded->function));
    for (Apply* node : function_->fgraph().Toposort()) {
      has_print_ = has_print_ || node->op().Is<Print>();
    }
  }

  const std::string& id() const { return id_; }
  size_t n_inputs() const { return function_->fgraph().inputs().size(); }
  size_t n_outputs() const { return function_->fgraph().outputs().size(); }

  // True when the graph holds Print ops: then calls also return what they showed.
  bool has_print() const { return has_print_; }

  // The outputs as arrays; with has_print, (outputs, printed), printed what the Print ops
  // showed as (message, attrs, array) triples.
  py::object Call(const py::list& args) const {
    if (args.size() != n_inputs()) {
      ThrowCallError(absl::InvalidArgumentError(
          absl::StrCat("the function takes ", n_inputs(), " arguments, got ", args.size())));
    }
    return Run(args);
  }

  // Sets the arguments CallPlain takes (per input, a NumPy type number and the static dims, -1
  // where any size fits) and whether it returns the one output itself rather than a list.
  void SetPlain(std::vector<std::pair<int, std::vector<int64_t>>> kinds, bool single) {
    plain_ = std::move(kinds);
    single_ = single;
  }

  // The outputs when every argument is an ndarray (not a subclass) of its input's type number,
  // rank and static dims, as SetPlain gave them, and the graph holds no Print; else
  // NotImplemented, and the caller takes its general path. Spares a small call's checks in
  // Python.
  py::object CallPlain(const py::tuple& args) const {
    if (has_print_ || args.size() != n_inputs() || args.size() != plain_.size()) {
      return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    }
    PyTypeObject* ndarray = py::detail::npy_api::get().PyArray_Type_;
    for (size_t i = 0; i < args.size(); ++i) {
      PyObject* arg = args[i].ptr();
      if (Py_TYPE(arg) != ndarray) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      const auto* array = py::detail::array_proxy(arg);
      const auto& [type_num, dims] = plain_[i];
      if (py::detail::array_descriptor_proxy(array->descr)->type_num != type_num ||
          array->nd != static_cast<int>(dims.size())) {
        return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      }
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] >= 0 && array->dimensions[d] != dims[d]) {
          return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        }
      }
    }
    py::object out = Run(args);
    return single_ ? py::object(py::reinterpret_borrow<py::list>(out)[0]) : out;
  }

 private:
  // The outputs of a call on the arguments (any sequence of array-likes of the inputs' number).
  template <typename Args>
  py::object Run(const Args& args) const {
    std::vector<Tensor> values;
    std::vector<py::object> keep;  // the arrays `values` read
    values.reserve(args.size());
    keep.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) values.push_back(TensorOfArray(args[i], i, keep));
    absl::StatusOr<std::vector<Tensor>> out;
    std::optional<PrintCapture> printed;
    if (has_print_) printed.emplace();
    {
      py::gil_scoped_release unlocked;
      out = (*function_)(std::move(values));
    }
    if (!out.ok()) ThrowCallError(out.status());
    py::list results(out->size());
    for (size_t o = 0; o < out->size(); ++o) results[o] = ArrayOfTensor(std::move((*out)[o]));
    if (!has_print_) return results;
    py::list shown;
    for (const PrintedValue& p : printed->values()) {
      shown.append(py::make_tuple(p.message, p.attrs, ArrayOfTensor(p.value)));
    }
    return py::make_tuple(std::move(results), std::move(shown));
  }

  std::string id_;
  std::unique_ptr<Function> function_;
  bool has_print_ = false;
  std::vector<std::pair<int, std::vector<int64_t>>> plain_;
  bool single_ = false;
};

}  // namespace

void DefineExecutable(py::module_& m) {
  call_error = PyErr_NewException("kiln._core.CallError", nullptr, nullptr);
  m.attr("CallError") = py::handle(call_error);
  py::class_<Executable>(m, "Executable")
      .def(py::init<const py::bytes&>(), py::arg("stored"))
      .def_property_readonly("id", &Executable::id)
      .def_property_readonly("n_inputs", &Executable::n_inputs)
      .def_property_readonly("n_outputs", &Executable::n_outputs)
      .def_property_readonly("has_print", &Executable::has_print)
      .def("__call__", &Executable::Call, py::arg("args"))
      .def("set_plain", &Executable::SetPlain, py::arg("kinds"), py::arg("single"))
      .def("call_plain", &Executable::CallPlain, py::arg("args"));
}

}  // namespace kiln
