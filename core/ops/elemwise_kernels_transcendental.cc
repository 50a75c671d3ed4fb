// Elemwise kernels: exponentials, logarithms, trigonometric and special functions.
#include "core/ops/elemwise_kernels_impl.h"

namespace kiln {

KILN_INSTANTIATE_KERNEL_UNIT(transcendental)

}  // namespace kiln
