// The discrete Fourier transforms behind RFFTOp and IRFFTOp: unnormalized, of any length (radix-2
// for powers of two, Bluestein's chirp-z through a power of two otherwise), in double precision.
#ifndef KILN_CORE_OPS_FFT_KERNELS_H_
#define KILN_CORE_OPS_FFT_KERNELS_H_

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"

namespace kiln::fft {

using Complex = std::complex<double>;

// x replaced by its DFT, sum_j x[j] exp(-+2 pi i jk / n) (the sign + when `inverse`), without
// the inverse's 1/n: O(n log n) for every n.
void Transform(std::span<Complex> x, bool inverse);

// numpy.fft.rfftn over the dims of `shape` of the signal in `work` (C order, real parts set,
// every entry of `shape`), without normalization: the transform is left in `work`, whose last
// dim's first shape[k-1] / 2 + 1 entries are the result (the rest are their conjugates). The
// caller owns `work` (a tensor of the call's budget); the interrupt is polled between lines.
absl::Status RealForward(std::span<Complex> work, std::span<const int64_t> shape);

// numpy.fft.irfftn times the number of output values: `half` (shape (shape[0], ...,
// shape[k-1] / 2 + 1)) is transformed in place, then its last dim is inverted into `out` (the
// real result, `shape`). The imaginary parts of the entries a real signal's transform has real
// (the zero and, for an even length, the last frequency of the last dim) are ignored, as numpy
// does.
absl::Status RealInverse(std::span<Complex> half, std::span<const int64_t> shape,
                         std::span<double> out);

}  // namespace kiln::fft

#endif  // KILN_CORE_OPS_FFT_KERNELS_H_
