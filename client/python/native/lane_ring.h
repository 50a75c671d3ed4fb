// kiln._core.LaneRing: the Python client's end of a lane connection's shared-memory ring
// (proto/lane/ring.h), which kiln.lane uses once the server has granted it.
#ifndef KILN_CLIENT_PYTHON_NATIVE_LANE_RING_H_
#define KILN_CLIENT_PYTHON_NATIVE_LANE_RING_H_

#include <pybind11/pybind11.h>

namespace kiln {

// Adds LaneRing to the module.
void DefineLaneRing(pybind11::module_& m);

}  // namespace kiln

#endif  // KILN_CLIENT_PYTHON_NATIVE_LANE_RING_H_
