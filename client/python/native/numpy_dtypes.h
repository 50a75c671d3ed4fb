// Kiln's dtypes as NumPy's, for the native module's conversions of arrays.
#ifndef KILN_CLIENT_PYTHON_NATIVE_NUMPY_DTYPES_H_
#define KILN_CLIENT_PYTHON_NATIVE_NUMPY_DTYPES_H_

#include <pybind11/numpy.h>

#include <optional>

#include "core/tensor/dtype.h"

namespace kiln {

// NumPy's dtype of a Kiln DType (made once per dtype).
const pybind11::dtype& NumpyDType(DType dtype);

// The DType of a NumPy dtype (by its type number, as NumPy numbers them on LP64 machines), or
// nullopt for one Kiln has not.
std::optional<DType> DTypeOfNumpy(const pybind11::dtype& dtype);

}  // namespace kiln

#endif  // KILN_CLIENT_PYTHON_NATIVE_NUMPY_DTYPES_H_
