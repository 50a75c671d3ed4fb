"""kiln.tensor.fft (Aesara's aesara.tensor.fft): real FFTs over every dim but the first (a batch),
real and imaginary parts in a trailing dim of 2. The ops are core's RFFTOp and IRFFTOp
(kiln.ops); the graphs are Aesara's, normalization included."""
from kiln.ops import IRFFTOp, RFFTOp
from kiln.tensor.basic import as_tensor_variable, cast
from kiln.tensor.indexing import set_subtensor
from kiln.tensor.math import sqrt
from kiln.tensor.reduce import prod

__all__ = ["rfft", "irfft", "RFFTOp", "IRFFTOp", "rfft_op", "irfft_op"]

rfft_op = RFFTOp()
irfft_op = IRFFTOp()


def _unitary(norm):
    if norm not in (None, "ortho", "no_norm"):
        raise ValueError("Invalid value %s for norm, must be None, 'ortho' or 'no norm'" % norm)
    return norm


def rfft(inp, norm=None):
    """The FFT of a real input (m, ..., n): (m, ..., n // 2 + 1, 2), real and imaginary parts.
    norm: None (numpy's: the inverse is normalized), "ortho" (1 / sqrt(n) both ways) or
    "no_norm"."""
    inp = as_tensor_variable(inp)
    s = inp.shape[1:]
    scaling = 1
    if _unitary(norm) == "ortho":
        scaling = sqrt(cast(prod(s), inp.dtype))
    return rfft_op(inp, s) / scaling


def irfft(inp, norm=None, is_odd=False):
    """The inverse of rfft: (m, ..., n // 2 + 1, 2) -> (m, ..., n), n even, or odd with
    is_odd."""
    if is_odd not in (True, False):
        raise ValueError("Invalid value %s for id_odd, must be True or False" % is_odd)
    inp = as_tensor_variable(inp)
    s = inp.shape[1:-1]
    if is_odd:
        s = set_subtensor(s[-1], (s[-1] - 1) * 2 + 1)
    else:
        s = set_subtensor(s[-1], (s[-1] - 1) * 2)
    scaling = 1
    norm = _unitary(norm)
    if norm is None:
        scaling = cast(prod(s), inp.dtype)
    elif norm == "ortho":
        scaling = sqrt(cast(prod(s), inp.dtype))
    return irfft_op(inp, s) / scaling
