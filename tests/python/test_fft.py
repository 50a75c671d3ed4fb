"""kiln.tensor.fft against numpy.fft: values for even and odd lengths, every norm, batches of
2-d signals and float32, and gradients by finite differences (Aesara's verify_grad)."""
import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.tensor import fft


def _pairs(spectrum):
    return np.stack([spectrum.real, spectrum.imag], axis=-1)


@pytest.mark.parametrize("shape", [(3, 8), (2, 7), (2, 3, 5), (1, 4, 6)])
@pytest.mark.parametrize("norm", [None, "ortho", "no_norm"])
def test_rfft_and_irfft_match_numpy(server, shape, norm):
    x = np.random.default_rng(len(shape) * 10 + shape[-1]).standard_normal(shape)
    inp = kt.tensor("float64", (None,) * len(shape), name="x")
    spectrum = fft.rfft(inp, norm=norm)
    back = fft.irfft(spectrum, norm=norm, is_odd=shape[-1] % 2 == 1)
    f = kiln.function([inp], [spectrum, back])
    got, again = f(x)
    axes = tuple(range(1, len(shape)))
    want = np.fft.rfftn(x, axes=axes, norm="ortho" if norm == "ortho" else "backward")
    np.testing.assert_allclose(got, _pairs(want), rtol=1e-10, atol=1e-12)
    scale = np.prod(shape[1:]) if norm == "no_norm" else 1.0
    np.testing.assert_allclose(again, x * scale, rtol=1e-10, atol=1e-10)


def test_float32_stays_float32(server):
    x = np.random.default_rng(1).standard_normal((2, 6)).astype("float32")
    inp = kt.fmatrix("x")
    out = kiln.function([inp], fft.rfft(inp))(x)
    assert out.dtype == np.float32 and out.shape == (2, 4, 2)
    np.testing.assert_allclose(out, _pairs(np.fft.rfft(x.astype("float64"))), rtol=1e-5,
                               atol=1e-5)


def test_errors_are_aesaras():
    with pytest.raises(ValueError, match="Invalid value unitary for norm"):
        fft.rfft(kt.dmatrix(), norm="unitary")
    with pytest.raises(ValueError, match="Invalid value yes for id_odd"):
        fft.irfft(kt.dtensor3(), is_odd="yes")
    with pytest.raises(TypeError, match="input must have dimension > 2"):
        fft.rfft(kt.dvector())
    assert str(fft.rfft_op) == "RFFTOp" and fft.irfft_op == kiln.ops.IRFFTOp()


@pytest.mark.parametrize("n", [4, 5])
def test_gradients_match_finite_differences(server, n):
    rng = np.random.default_rng(n)
    kiln.gradient.verify_grad(lambda a: fft.rfft(a), [rng.standard_normal((2, n))], rng=rng)
    kiln.gradient.verify_grad(lambda a: fft.rfft(a, norm="ortho"), [rng.standard_normal((1, 3, n))],
                              rng=rng)
    spectrum = rng.standard_normal((2, n // 2 + 1, 2))
    kiln.gradient.verify_grad(lambda a: fft.irfft(a, is_odd=n % 2 == 1), [spectrum], rng=rng)
