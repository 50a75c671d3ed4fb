// kiln._core.PlainLaneCall: a function's calls of plain arrays over a lane connection's ring,
// framed and read in C++ rather than in Python (kiln.runners' lane path, what a sampler's loop
// of fn(*args) takes).
#ifndef KILN_CLIENT_PYTHON_NATIVE_LANE_PLAIN_CALL_H_
#define KILN_CLIENT_PYTHON_NATIVE_LANE_PLAIN_CALL_H_

#include <pybind11/pybind11.h>

namespace kiln {

// Adds PlainLaneCall to the module.
void DefinePlainLaneCall(pybind11::module_& m);

}  // namespace kiln

#endif  // KILN_CLIENT_PYTHON_NATIVE_LANE_PLAIN_CALL_H_
