// Elemwise kernels: arithmetic, maximum/minimum and clip.
#include "core/ops/elemwise_kernels_impl.h"

namespace kiln {

KILN_INSTANTIATE_KERNEL_UNIT(arith)

}  // namespace kiln
