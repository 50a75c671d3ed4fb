// OpenBLAS's workers told to sleep soon after each call (blas_threads.cc).
#ifndef KILN_CORE_OPS_BLAS_THREADS_H_
#define KILN_CORE_OPS_BLAS_THREADS_H_

namespace kiln {

// True when Kiln shortened OpenBLAS's idle spin as it loaded, before main ran. The product
// kernels call it so that the linker keeps the file that does it.
bool BlasSpinShortened();

}  // namespace kiln

#endif  // KILN_CORE_OPS_BLAS_THREADS_H_
