#include "core/ops/fft_kernels.h"

#include <bit>
#include <cmath>
#include <numbers>

#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"

namespace kiln::fft {
namespace {

// In-place iterative radix-2 DFT of a power-of-two length.
void Radix2(std::span<Complex> x, bool inverse) {
  const size_t n = x.size();
  for (size_t i = 1, j = 0; i < n; ++i) {  // bit-reversal permutation
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(x[i], x[j]);
  }
  const double sign = inverse ? 1.0 : -1.0;
  std::vector<Complex> twiddle(n / 2);
  for (size_t k = 0; k < n / 2; ++k) {
    const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(k) /
                         static_cast<double>(n);
    twiddle[k] = Complex(std::cos(angle), std::sin(angle));
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const size_t stride = n / len;
    for (size_t start = 0; start < n; start += len) {
      for (size_t k = 0; k < len / 2; ++k) {
        const Complex t = twiddle[k * stride] * x[start + k + len / 2];
        x[start + k + len / 2] = x[start + k] - t;
        x[start + k] += t;
      }
    }
  }
}

// Bluestein: the DFT of any length as a convolution with a chirp, through power-of-two DFTs.
void Bluestein(std::span<Complex> x, bool inverse) {
  const size_t n = x.size();
  const size_t m = std::bit_ceil(2 * n - 1);
  const double sign = inverse ? 1.0 : -1.0;
  std::vector<Complex> chirp(n);
  for (size_t k = 0; k < n; ++k) {
    // k^2 mod 2n keeps the angle small, so it stays exact for large k.
    const uint64_t k2 = (static_cast<uint64_t>(k) * k) % (2 * n);
    const double angle = sign * std::numbers::pi * static_cast<double>(k2) / static_cast<double>(n);
    chirp[k] = Complex(std::cos(angle), std::sin(angle));
  }
  std::vector<Complex> a(m), b(m);
  for (size_t k = 0; k < n; ++k) a[k] = x[k] * chirp[k];
  b[0] = std::conj(chirp[0]);
  for (size_t k = 1; k < n; ++k) b[k] = b[m - k] = std::conj(chirp[k]);
  Radix2(a, false);
  Radix2(b, false);
  for (size_t k = 0; k < m; ++k) a[k] *= b[k];
  Radix2(a, true);
  const double scale = 1.0 / static_cast<double>(m);
  for (size_t k = 0; k < n; ++k) x[k] = a[k] * scale * chirp[k];
}

// Applies `fn` to every line of `data` (C order, `shape`) along `axis`, polling the call's
// interrupt as the work (about n log n per line) goes.
template <typename Fn>
absl::Status ForEachLine(std::span<Complex> data, std::span<const int64_t> shape, size_t axis,
                         InterruptPoller& poller, Fn fn) {
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t len = shape[axis];
  const int64_t outer = len == 0 ? 0 : static_cast<int64_t>(data.size()) / (len * inner);
  std::vector<Complex> line(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      Complex* base = data.data() + o * len * inner + i;
      for (int64_t k = 0; k < len; ++k) line[k] = base[k * inner];
      fn(std::span<Complex>(line));
      for (int64_t k = 0; k < len; ++k) base[k * inner] = line[k];
      RETURN_IF_ERROR(poller.Tick(len * std::bit_width(static_cast<uint64_t>(len))));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void Transform(std::span<Complex> x, bool inverse) {
  if (x.size() <= 1) return;
  if (std::has_single_bit(x.size())) {
    Radix2(x, inverse);
  } else {
    Bluestein(x, inverse);
  }
}

absl::Status RealForward(std::span<Complex> work, std::span<const int64_t> shape) {
  InterruptPoller poller;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    RETURN_IF_ERROR(ForEachLine(work, shape, axis, poller,
                                [](std::span<Complex> line) { Transform(line, false); }));
  }
  return absl::OkStatus();
}

absl::Status RealInverse(std::span<Complex> half, std::span<const int64_t> shape,
                         std::span<double> out) {
  const size_t k = shape.size();
  const int64_t n = shape[k - 1], h = n / 2 + 1;
  std::vector<int64_t> half_shape(shape.begin(), shape.end());
  half_shape[k - 1] = h;
  InterruptPoller poller;
  for (size_t axis = 0; axis + 1 < k; ++axis) {
    RETURN_IF_ERROR(ForEachLine(half, half_shape, axis, poller,
                                [](std::span<Complex> line) { Transform(line, true); }));
  }
  // The last dim: the Hermitian spectrum of a real signal from its first half, inverted.
  const int64_t lines = static_cast<int64_t>(half.size()) / h;
  std::vector<Complex> line(static_cast<size_t>(n));
  for (int64_t l = 0; l < lines; ++l) {
    const Complex* from = half.data() + l * h;
    line[0] = from[0].real();
    for (int64_t j = 1; j < h; ++j) line[j] = from[j];
    if (n % 2 == 0) line[n / 2] = from[n / 2].real();
    for (int64_t j = 1; j < (n + 1) / 2; ++j) line[n - j] = std::conj(from[j]);
    Transform(line, true);
    for (int64_t j = 0; j < n; ++j) out[l * n + j] = line[j].real();
    RETURN_IF_ERROR(poller.Tick(n * std::bit_width(static_cast<uint64_t>(n))));
  }
  return absl::OkStatus();
}

}  // namespace kiln::fft
