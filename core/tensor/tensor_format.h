// NumPy-style text for tensor values, as Python's str(ndarray) prints them.
#ifndef KILN_CORE_TENSOR_TENSOR_FORMAT_H_
#define KILN_CORE_TENSOR_TENSOR_FORMAT_H_

#include <string>

namespace kiln {

class Tensor;

// str(numpy.asarray(t)): "2.0" and "10" for 0-d tensors, "[0 1 2]", "[0.5 1.  2. ]",
// "[[1 2]\n [3 4]]" for arrays (no line wrapping).
std::string FormatTensor(const Tensor& t);

// Python's repr of a float (shortest round trip): "2.0", "0.1", "1e+100", "1.5e-05", "nan", "inf".
std::string FormatPythonFloat(double value);

}  // namespace kiln

#endif  // KILN_CORE_TENSOR_TENSOR_FORMAT_H_
