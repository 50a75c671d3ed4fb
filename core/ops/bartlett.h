// Aesara's Bartlett (aesara.tensor.extra_ops): numpy.bartlett, the triangular window of M points.
#ifndef KILN_CORE_OPS_BARTLETT_H_
#define KILN_CORE_OPS_BARTLETT_H_

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// Bartlett(M): a float64 vector of max(M, 0) points rising linearly from 0 to 1 and back to 0
// (numpy.bartlett(M)), for an integer scalar M; [1.0] for M = 1.
class Bartlett final : public DeclaredOp<Bartlett, NoAttrs> {
 public:
  KILN_DECLARED_OP("Bartlett")
};

// aesara.tensor.extra_ops.bartlett(M).
Var bartlett(const Var& m);

}  // namespace kiln

#endif  // KILN_CORE_OPS_BARTLETT_H_
