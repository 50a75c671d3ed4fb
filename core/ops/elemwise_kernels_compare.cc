// Elemwise kernels: comparisons, bitwise ops, isnan and isinf.
#include "core/ops/elemwise_kernels_impl.h"

namespace kiln {

KILN_INSTANTIATE_KERNEL_UNIT(compare)

}  // namespace kiln
