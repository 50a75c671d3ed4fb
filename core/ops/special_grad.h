// The gradients of the special-function scalar ops (Aesara's and PyTensor's grad methods).
#ifndef KILN_CORE_OPS_SPECIAL_GRAD_H_
#define KILN_CORE_OPS_SPECIAL_GRAD_H_

#include <string>
#include <vector>

#include "core/graph/var.h"
#include "core/ops/scalar_op.h"

namespace kiln {

class Apply;

// The gradient wrt each input of special function `kind` at node (inputs `in`, output gradient
// gz), as graphs; grad_not_implemented / grad_undefined where Aesara and PyTensor define none.
std::vector<Var> SpecialScalarGrad(ScalarOpKind kind, const std::string& op_name, const Apply& node,
                                   const std::vector<Var>& in, const Var& gz);

}  // namespace kiln

#endif  // KILN_CORE_OPS_SPECIAL_GRAD_H_
