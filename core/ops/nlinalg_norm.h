// aesara.tensor.nlinalg.norm for the C++ DSL, as a graph of reductions (and of SVD for the
// spectral and nuclear norms), with PyTensor's axis and keepdims.
#ifndef KILN_CORE_OPS_NLINALG_NORM_H_
#define KILN_CORE_OPS_NLINALG_NORM_H_

#include <string>
#include <variant>
#include <vector>

#include "core/graph/var.h"

namespace kiln {

// A norm's order: none (the 2-norm of a vector, Frobenius of a matrix), a number (p, or
// +-infinity) or a name: "fro", "f", "nuc", "inf", "-inf".
using NormOrd = std::variant<std::monostate, double, std::string>;

// numpy.linalg.norm(x, ord, axis, keepdims): a vector norm along one axis, a matrix norm over two
// (the whole vector or matrix, or the last two dims of a batch, when `axis` is empty); an order
// the rank does not have, a rank-0 x or more than two axes is INVALID_ARGUMENT naming norm. The
// orders 2, -2 and "nuc" take the SVD of one matrix (not of a batch).
Var norm(const Var& x, const NormOrd& ord = {}, std::vector<int> axis = {}, bool keepdims = false);

}  // namespace kiln

#endif  // KILN_CORE_OPS_NLINALG_NORM_H_
