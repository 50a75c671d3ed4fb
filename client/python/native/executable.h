// kiln._core.Executable: a function the server compiled, loaded from its stored form and run in
// this process (kiln.config.execute = "local").
#ifndef KILN_CLIENT_PYTHON_NATIVE_EXECUTABLE_H_
#define KILN_CLIENT_PYTHON_NATIVE_EXECUTABLE_H_

#include <pybind11/pybind11.h>
#include "client/python/native/shape_caster.h"

namespace kiln {

// Adds Executable and CallError to the module.
void DefineExecutable(pybind11::module_& m);

}  // namespace kiln

#endif  // KILN_CLIENT_PYTHON_NATIVE_EXECUTABLE_H_
