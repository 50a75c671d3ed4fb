// Aesara's aesara.tensor.fft: RFFTOp and IRFFTOp, N-dimensional real FFTs over every dim but the
// first (a batch), with real and imaginary parts in a trailing dim of 2, as numpy.fft.rfftn and
// an unnormalized numpy.fft.irfftn compute them.
#ifndef KILN_CORE_OPS_FFT_H_
#define KILN_CORE_OPS_FFT_H_

#include <string>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// RFFTOp(a, s): a float tensor (m, d1, ..., dk), s an integer vector of k lengths (a is cut or
// zero-padded to them) -> (m, s1, ..., s(k-1), sk // 2 + 1, 2), in a's dtype.
class RFFTOp final : public DeclaredOp<RFFTOp, NoAttrs> {
 public:
  KILN_DECLARED_OP("RFFTOp")
  // s only shapes the output: no gradient flows to it.
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true}, {false}};
  }
};

// IRFFTOp(a, s): the inverse of RFFTOp without numpy's 1/n: a (m, ..., n, 2), s the k lengths
// of the real output (m, s1, ..., sk); a's last transformed dim is read as sk // 2 + 1 entries.
class IRFFTOp final : public DeclaredOp<IRFFTOp, NoAttrs> {
 public:
  KILN_DECLARED_OP("IRFFTOp")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true}, {false}};
  }
};

// aesara.tensor.fft.rfft(inp, norm): RFFTOp over inp.shape[1:], divided by sqrt(prod(s)) for
// norm "ortho"; norm is "", "ortho" or "no_norm" (INVALID_ARGUMENT otherwise).
Var rfft(const Var& inp, const std::string& norm = "");
// aesara.tensor.fft.irfft(inp, norm, is_odd): IRFFTOp to a last length of 2 (n - 1), or
// 2 (n - 1) + 1 when is_odd, divided by prod(s) (norm "") or sqrt(prod(s)) ("ortho").
Var irfft(const Var& inp, const std::string& norm = "", bool is_odd = false);

}  // namespace kiln

#endif  // KILN_CORE_OPS_FFT_H_
