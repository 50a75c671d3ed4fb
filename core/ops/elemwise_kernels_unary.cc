// Elemwise kernels: sign, rounding, abs, neg and the complex parts.
#include "core/ops/elemwise_kernels_impl.h"

namespace kiln {

KILN_INSTANTIATE_KERNEL_UNIT(unary)

}  // namespace kiln
