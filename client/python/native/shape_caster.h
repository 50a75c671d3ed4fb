// pybind11's conversion of kiln::Shape (a tensor's dims or strides) from and to a Python list or
// tuple of ints, as std::vector<int64_t> converts.
#ifndef KILN_CLIENT_PYTHON_NATIVE_SHAPE_CASTER_H_
#define KILN_CLIENT_PYTHON_NATIVE_SHAPE_CASTER_H_

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>

#include "core/tensor/tensor.h"

namespace pybind11::detail {

template <>
struct type_caster<kiln::Shape> : list_caster<kiln::Shape, int64_t> {};

}  // namespace pybind11::detail

#endif  // KILN_CLIENT_PYTHON_NATIVE_SHAPE_CASTER_H_
