// Aesara's CpuContiguous (aesara.tensor.extra_ops): its input, copied to C order when it is not.
#ifndef KILN_CORE_OPS_CPU_CONTIGUOUS_H_
#define KILN_CORE_OPS_CPU_CONTIGUOUS_H_

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// CpuContiguous(x): x itself (a view) when C-contiguous, else a C-contiguous copy; x's type.
class CpuContiguous final : public DeclaredOp<CpuContiguous, NoAttrs> {
 public:
  KILN_DECLARED_OP("CpuContiguous")
  std::vector<std::pair<int, int>> view_map() const override { return {{0, 0}}; }
};

// aesara.tensor.extra_ops.cpu_contiguous(x).
Var cpu_contiguous(const Var& x);

}  // namespace kiln

#endif  // KILN_CORE_OPS_CPU_CONTIGUOUS_H_
