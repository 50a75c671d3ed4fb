// The discrete Fourier transforms behind RFFTOp and IRFFTOp: unnormalized, of any length (radix-2
// for powers of two, Bluestein's chirp-z through a power of two otherwise), in double precision.
#ifndef KILN_CORE_OPS_FFT_KERNELS_H_
#define KILN_CORE_OPS_FFT_KERNELS_H_

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

namespace kiln::fft {

using Complex = std::complex<double>;

// x replaced by its DFT, sum_j x[j] exp(-+2 pi i jk / n) (the sign + when `inverse`), without
// the inverse's 1/n: O(n log n) for every n.
void Transform(std::span<Complex> x, bool inverse);

// numpy.fft.rfftn over the dims of `shape` of the real values `in` (C order), without
// normalization: the result has shape (shape[0], ..., shape[k-1] / 2 + 1).
std::vector<Complex> RealForward(std::span<const double> in, std::span<const int64_t> shape);

// numpy.fft.irfftn times the number of output values: `in` has shape (shape[0], ...,
// shape[k-1] / 2 + 1) and the real result `shape`. The imaginary parts of the entries a real
// signal's transform has real (the zero and, for an even length, the last frequency of the last
// dim) are ignored, as numpy does.
std::vector<double> RealInverse(std::span<const Complex> in, std::span<const int64_t> shape);

}  // namespace kiln::fft

#endif  // KILN_CORE_OPS_FFT_KERNELS_H_
