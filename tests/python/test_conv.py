"""kiln.tensor.nnet's convolutions against Aesara 2.9.4 (tests/golden/aesara_conv*.txt, written by
tests/golden/gen_conv_cases.py): conv2d / conv3d and both gradients, the functions built on them
(grad_wrt_*, conv2d_transpose, separable and causal convolutions, bilinear upsampling, the legacy
nnet.conv.conv2d, nnet.conv3d2d.conv3d and signal.conv.conv2d), printed names, props, shape
helpers, finite-difference gradients and errors."""
import os
import pickle

import numpy as np
import pytest

import kiln
import kiln.tensor as kt
from kiln.tensor import nnet
from kiln.tensor.nnet import abstract_conv as ac
from kiln.tensor.nnet import conv as legacy
from kiln.tensor.nnet import conv3d2d
from kiln.tensor.signal import conv as signal_conv

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden")

DEFAULT_2D = ("AbstractConv2d{convdim=2, border_mode='valid', subsample=(1, 1), filter_flip=True, "
              "imshp=(None, None, None, None), kshp=(None, None, None, None), "
              "filter_dilation=(1, 1), num_groups=1, unshared=False}")


def _read(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return [line.rstrip("\n").split("|") for line in f if line.strip() and line[0] != "#"]


def _array(shape, values, dtype="float64"):
    return np.array([float(v) for v in values.split(",")], dtype=dtype).reshape(
        [int(d) for d in shape.split("x")])


def _border(text, dim):
    if text in ("valid", "full", "half"):
        return text
    axes = []
    for axis in text.split(","):
        lo, hi = (int(v) for v in axis.split(":"))
        axes.append(lo if lo == hi else (lo, hi))
    return tuple(axes)


CASES = _read("aesara_conv.txt")


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_conv_and_gradients_match_aesara(server, case):
    (name, dim, border, sub, flip, dil, groups, dtype, xs, xv, ws, wv, ys, yv, gv, dxv,
     dwv) = case
    dim = int(dim)
    x = kt.tensor(dtype, (None,) * (dim + 2), name="x")
    w = kt.tensor(dtype, (None,) * (dim + 2), name="w")
    g = kt.tensor(dtype, (None,) * (dim + 2), name="g")
    conv = nnet.conv2d if dim == 2 else nnet.conv3d
    y = conv(x, w, border_mode=_border(border, dim), subsample=tuple(map(int, sub.split(","))),
             filter_flip=flip == "True", filter_dilation=tuple(map(int, dil.split(","))),
             num_groups=int(groups))
    dx, dw = kiln.grad((y * g).sum(), [x, w])
    f = kiln.function([x, w, g], [y, dx, dw])
    got = f(_array(xs, xv, dtype), _array(ws, wv, dtype), _array(ys, gv, dtype))
    tol = 2e-6 if dtype == "float32" else 1e-12
    for out, want, shape in zip(got, (yv, dxv, dwv), (ys, xs, ws)):
        assert out.dtype == dtype
        np.testing.assert_allclose(out, _array(shape, want), rtol=tol, atol=tol)


def _extras():
    """The recipes of gen_conv_cases.py's _extras."""
    return {
        "bilinear_upsampling_1d_kernel": lambda x: ac.bilinear_upsampling(x, ratio=2),
        "bilinear_upsampling_2d_kernel": lambda x: ac.bilinear_upsampling(
            x, ratio=3, batch_size=1, num_input_channels=2, use_1D_kernel=False),
        "frac_bilinear_upsampling": lambda x: ac.bilinear_upsampling(
            x, frac_ratio=((3, 2), (5, 3)), use_1D_kernel=False),
        "causal_conv1d": lambda x, w: ac.causal_conv1d(x, w, filter_shape=(4, 3, 3),
                                                       filter_dilation=2),
        "conv2d_transpose": lambda x, w: nnet.conv2d_transpose(
            x, w, output_shape=(2, 2, 9, 9), input_dilation=(2, 2)),
        "conv2d_grad_wrt_weights": lambda x, g: ac.conv2d_grad_wrt_weights(
            x, g, filter_shape=(3, 2, 3, 3)),
        "conv3d_grad_wrt_inputs": lambda g, w: ac.conv3d_grad_wrt_inputs(
            g, w, input_shape=(2, 2, 4, 5, 4), border_mode=1),
        "separable_conv2d": lambda x, d, p: nnet.separable_conv2d(x, d, p, num_channels=2,
                                                                  border_mode="half"),
        "legacy_conv2d": lambda x, w: legacy.conv2d(x, w, border_mode="full", subsample=(2, 1)),
        "signal_conv2d_3d_3d": lambda x, w: signal_conv.conv2d(x, w, border_mode="full"),
        "signal_conv2d_2d_2d": lambda x, w: signal_conv.conv2d(x, w),
        "signal_conv2d_2d_3d": lambda x, w: signal_conv.conv2d(x, w),
        **_legacy_extras(),
    }


def _legacy_extras():
    """The recipes of gen_conv_cases.py's _legacy_extras."""
    movie, kern = (2, 5, 3, 6, 5), (4, 3, 3, 2, 3)
    cases = {
        "legacy_conv2d_valid": lambda x, w: legacy.conv2d(x, w),
        "legacy_conv2d_hints_subsample": lambda x, w: legacy.conv2d(
            x, w, image_shape=(3, 2, 7, 6), filter_shape=(4, 2, 3, 2), subsample=(2, 3)),
        "conv3d2d_hints": lambda s, f: conv3d2d.conv3d(
            s, f, signals_shape=movie, filters_shape=kern, border_mode="full"),
        "conv3d2d_one_frame_filters": lambda s, f: conv3d2d.conv3d(
            s, f, border_mode=("full", "half", "half")),
        "conv3d2d_even_taps_half": lambda s, f: conv3d2d.conv3d(s, f, border_mode="half"),
    }
    modes = {"valid": "valid", "full": "full", "half": "half",
             "full_valid": ("full", "valid", "valid"), "valid_half": ("valid", "half", "half"),
             "half_full": ("half", "full", "full"), "valid_full": ("valid", "full", "full")}
    for name, mode in modes.items():
        cases["conv3d2d_" + name] = lambda s, f, mode=mode: conv3d2d.conv3d(s, f,
                                                                            border_mode=mode)
    for name, mode in [("half_full", ("half", "full", "full")),
                       ("full_valid", ("full", "valid", "valid"))]:
        for wrt in (0, 1):
            cases["conv3d2d_%s_grad%d" % (name, wrt)] = (
                lambda s, f, g, mode=mode, wrt=wrt: kiln.grad(
                    (conv3d2d.conv3d(s, f, border_mode=mode) * g).sum(), [s, f][wrt]))
    return cases


EXTRAS = _read("aesara_conv_extra.txt")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("case", EXTRAS, ids=[c[0] for c in EXTRAS])
def test_functions_built_on_the_ops_match_aesara(server, case):
    n = int(case[1])
    shapes, vals = case[2:2 + 2 * n:2], case[3:3 + 2 * n:2]
    xs = [kt.tensor("float64", (None,) * len(s.split("x")), name="x%d" % i)
          for i, s in enumerate(shapes)]
    out = kiln.function(xs, _extras()[case[0]](*xs))(
        *[_array(s, v) for s, v in zip(shapes, vals)])
    np.testing.assert_allclose(out, _array(case[-2], case[-1]), rtol=1e-12, atol=1e-12)


def test_names_props_and_pickling():
    x, w = kt.dtensor4("x"), kt.dtensor4("w")
    y = nnet.conv2d(x, w)
    assert str(y.owner.op) == DEFAULT_2D
    assert str(y.type) == "TensorType(float64, (?, ?, ?, ?))"
    op = nnet.conv2d(x, w, input_shape=(2, 3, 5, 5), filter_shape=(4, 3, 3, 3),
                     border_mode=((1, 2), 3), subsample=(2, 1)).owner.op
    assert str(op) == ("AbstractConv2d{convdim=2, border_mode=((1, 2), 3), subsample=(2, 1), "
                       "filter_flip=True, imshp=(2, 3, 5, 5), kshp=(4, 3, 3, 3), "
                       "filter_dilation=(1, 1), num_groups=1, unshared=False}")
    assert op.border_mode == ((1, 2), 3) and op.imshp == (2, 3, 5, 5)
    assert op.__props__ == ("convdim", "border_mode", "subsample", "filter_flip", "imshp",
                            "kshp", "filter_dilation", "num_groups", "unshared")
    assert type(op) is ac.AbstractConv2d and isinstance(op, ac.AbstractConv)
    # Aesara's normalization: an int pads every axis, equal pairs are ints, zero is 'valid'.
    assert ac.AbstractConv2d(border_mode=1).border_mode == (1, 1)
    assert ac.AbstractConv2d(border_mode=((2, 2), 0)).border_mode == (2, 0)
    assert ac.AbstractConv2d(border_mode=(0, (0, 0))).border_mode == "valid"
    assert ac.AbstractConv2d(border_mode=(1, 1)) == ac.AbstractConv2d(border_mode=1)
    assert str(ac.AbstractConv3d(border_mode="half")).startswith(
        "AbstractConv3d{convdim=3, border_mode='half', subsample=(1, 1, 1)")
    again = pickle.loads(pickle.dumps(op))
    assert type(again) is ac.AbstractConv2d and again == op
    # The gradients, as Aesara builds them.
    dx, dw = kiln.grad(y.sum(), [x, w])
    assert type(dx.owner.op) is ac.AbstractConv2d_gradInputs
    assert str(dx.owner.op) == DEFAULT_2D.replace("AbstractConv2d", "AbstractConv2d_gradInputs")
    assert dx.owner.inputs[0] is w
    assert type(dw.owner.op) is ac.AbstractConv2d_gradWeights
    xb = kt.tensor("float32", (1, None, None, None), name="xb")
    wb = kt.tensor("float32", (1, 1, None, None), name="wb")
    yb = nnet.conv2d(xb, wb)
    assert str(yb.type) == "TensorType(float32, (1, 1, ?, ?))"
    gx, gw = kiln.grad(yb.sum(), [xb, wb])
    assert str(gx.type) == str(gw.type) == "TensorType(float32, (1, 1, ?, ?))"


def test_shape_helpers():
    assert ac.get_conv_output_shape((2, 3, 5, 5), (4, 3, 3, 3), "half", (1, 1)) == (2, 4, 5, 5)
    assert ac.get_conv_output_shape((2, 3, 7, None), (4, 3, 3, 3), (1, (0, 2)), (2, 1),
                                    (1, 2)) == (2, 4, 4, None)
    assert ac.get_conv_shape_1axis(10, 3, "full", 3, 2) == 5
    assert ac.get_conv_shape_1axis(None, 3, "valid", 1) is None
    assert ac.get_conv_gradinputs_shape((4, 3, 3, 3), (2, 4, 5, 5), "half", (1, 1)) == \
        (2, 3, 5, 5)
    assert ac.get_conv_gradweights_shape((2, 3, 7, 7), (2, 4, 5, 5), "valid", (1, 1)) == \
        (4, 3, 3, 3)
    assert ac.border_mode_to_pad("half", 2, (3, 5)) == ((1, 1), (2, 2))
    with pytest.raises(ValueError, match="border_mode must be >= 0"):
        ac.get_conv_shape_1axis(5, 3, -1, 1)
    # Symbolic sizes give the size as a graph.
    n = kt.lscalar("n")
    assert kiln.function([n], ac.get_conv_shape_1axis(n, 3, "half", 2))(9) == 5


def test_inferred_shape_and_hints(server):
    x, w = kt.dtensor4("x"), kt.dtensor4("w")
    y = nnet.conv2d(x, w, border_mode=(2, 1), subsample=(2, 3), filter_dilation=(2, 1))
    f = kiln.function([x, w], y.shape)
    xv, wv = np.zeros((2, 3, 9, 10)), np.zeros((4, 3, 3, 2))
    assert tuple(f(xv, wv)) == kiln.function([x, w], y)(xv, wv).shape == (2, 4, 5, 4)
    hinted = nnet.conv2d(x, w, input_shape=(None, 2, None, None))
    with pytest.raises(Exception, match=r"shape of image \(2, 3, 9, 10\) does not match given "
                                        r"imshp \(None, 2, None, None\)"):
        kiln.function([x, w], hinted)(xv, wv)


def test_gradients_match_finite_differences(server):
    rng = np.random.default_rng(3)
    xv, wv = rng.uniform(-1, 1, (2, 4, 5, 6)), rng.uniform(-1, 1, (4, 2, 3, 2))
    kw = dict(border_mode=((1, 0), 2), subsample=(2, 1), filter_dilation=(1, 2), num_groups=2)
    kiln.gradient.verify_grad(lambda x, w: nnet.conv2d(x, w, **kw), [xv, wv], rng=rng)
    top = kiln.function([], nnet.conv2d(kt.constant(xv), kt.constant(wv), **kw))()
    gv = rng.uniform(-1, 1, top.shape)
    # Each gradient op's own gradient (double backward).
    kiln.gradient.verify_grad(
        lambda w, g: ac.conv2d_grad_wrt_inputs(g, w, input_shape=xv.shape, **kw), [wv, gv],
        rng=rng)
    kiln.gradient.verify_grad(
        lambda x, g: ac.conv2d_grad_wrt_weights(x, g, filter_shape=wv.shape, **kw), [xv, gv],
        rng=rng)
    v, k = rng.uniform(-1, 1, (1, 2, 4, 3, 4)), rng.uniform(-1, 1, (2, 2, 2, 2, 2))
    kiln.gradient.verify_grad(lambda v, k: nnet.conv3d(v, k, border_mode="half",
                                                       filter_flip=False), [v, k], rng=rng)


def test_errors(server):
    x, w = kt.dtensor4("x"), kt.dtensor4("w")
    with pytest.raises(TypeError, match="use AbstractConv2d or AbstractConv3d"):
        ac.AbstractConv(2)
    with pytest.raises(NotImplementedError, match="unshared"):
        nnet.conv2d(x, w, unshared=True)
    with pytest.raises(ValueError, match="invalid border_mode same"):
        nnet.conv2d(x, w, border_mode="same")
    with pytest.raises(ValueError, match="must be a non-negative integer"):
        nnet.conv2d(x, w, border_mode=-1)
    with pytest.raises(NotImplementedError, match="Asymmetric padding not implemented for 3D"):
        ac.AbstractConv3d(border_mode=((1, 2), 0, 0))
    with pytest.raises(ValueError, match="subsample must have 2 elements"):
        nnet.conv2d(x, w, subsample=(1, 1, 1))
    with pytest.raises(Exception, match=r"subsample must hold integers in \[1, 1073741824\], "
                                        r"got \(0, 1\)"):
        nnet.conv2d(x, w, subsample=(0, 1))
    with pytest.raises(Exception, match=r"input 0 \(img\) has type TensorType\(float64, \(\?, "
                                        r"\?, \?\)\) but a float32 or float64 4D tensor is needed"):
        nnet.conv2d(kt.dtensor3(), w)
    with pytest.warns(UserWarning, match="image_shape"), \
            pytest.raises(ValueError, match="input_shape and image_shape"):
        nnet.conv2d(x, w, input_shape=(1, 1, 1, 1), image_shape=(1, 1, 1, 1))
    f = kiln.function([x, w], nnet.conv2d(x, w, num_groups=2))
    with pytest.raises(Exception, match="number of filters must be divisible by num_groups"):
        f(np.zeros((1, 4, 5, 5)), np.zeros((3, 2, 3, 3)))
    g = kiln.function([x, w], nnet.conv2d(x, w))
    with pytest.raises(Exception, match=r"the kernel of shape \(1, 1, 6, 1\) dilated by 1 spans "
                                        r"6 on spatial axis 0, more than the image"):
        g(np.zeros((1, 1, 5, 5)), np.zeros((1, 1, 6, 1)))
    # An output of about 10^12 elements is refused before anything is allocated.
    huge = kiln.function([x, w], nnet.conv2d(x, w, border_mode=2 ** 19))
    with pytest.raises(Exception, match="im2col buffer"):
        huge(np.zeros((4, 1, 1, 1)), np.zeros((1, 1, 1, 1)))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_legacy_conv2d_and_conv3d2d(server):
    """The legacy ConvOp interface and conv3d2d build the abstract convolutions (their values
    are checked against Aesara's above): the op each builds, its hints, gradients by finite
    differences, and Aesara's errors."""
    x, w = kt.dtensor4("x"), kt.dtensor4("w")
    with pytest.warns(DeprecationWarning, match="nnet.conv.conv2d is deprecated"):
        y = legacy.conv2d(x, w, image_shape=(2, 3, 7, 6), filter_shape=(4, 3, 3, 2),
                          border_mode="full", subsample=(2, 1))
    assert str(y.owner.op) == (
        "AbstractConv2d{convdim=2, border_mode='full', subsample=(2, 1), filter_flip=True, "
        "imshp=(2, 3, 7, 6), kshp=(4, 3, 3, 2), filter_dilation=(1, 1), num_groups=1, "
        "unshared=False}")
    assert str(y.type) == "TensorType(float64, (?, ?, ?, ?))"
    with pytest.raises(Exception, match=r"shape of image \(1, 3, 7, 6\) does not match given "
                                        r"imshp \(2, 3, 7, 6\)"):
        kiln.function([x, w], y)(np.zeros((1, 3, 7, 6)), np.zeros((4, 3, 3, 2)))
    with pytest.raises(TypeError, match=r'ConvOp \(make_node\) requires input be a 4D tensor; '
                                        r'received "<TensorType\(float64, \(\?, \?\)\)>" '
                                        r'\(2 dims\)'):
        legacy.conv2d(kt.dmatrix(), w)
    with pytest.raises(TypeError, match="make_node requires 4D tensor of kernels"):
        legacy.conv2d(x, kt.dtensor3())
    with pytest.raises(NotImplementedError, match=r"The image and the kernel must have the same "
                                                  r"type.inputs\(float32\), kerns\(float64\)"):
        legacy.conv2d(kt.ftensor4(), w)
    with pytest.raises(ValueError, match="Mode half not implemented"):
        legacy.conv2d(x, w, border_mode="half")
    with pytest.raises(ValueError, match="disagree on the channels"):
        legacy.conv2d(x, w, image_shape=(2, 3, 7, 6), filter_shape=(4, 2, 3, 2))
    rng = np.random.default_rng(5)
    kiln.gradient.verify_grad(lambda a, b: legacy.conv2d(a, b, subsample=(2, 1)),
                              [rng.uniform(-1, 1, (2, 2, 5, 4)), rng.uniform(-1, 1, (3, 2, 2, 2))],
                              rng=rng)

    s, f = kt.tensor("float64", (None,) * 5, name="s"), kt.tensor("float64", (None,) * 5, name="f")
    out = conv3d2d.conv3d(s, f, border_mode=("full", "valid", "valid"))
    assert str(out.owner.op) == "InplaceDimShuffle{0,2,1,3,4}"
    assert str(out.owner.inputs[0].owner.op).startswith(
        "AbstractConv3d{convdim=3, border_mode='valid', subsample=(1, 1, 1), filter_flip=True")
    sv, fv = rng.uniform(-1, 1, (1, 4, 2, 4, 3)), rng.uniform(-1, 1, (2, 2, 2, 2, 2))
    assert kiln.function([s, f], out)(sv, fv).shape == (1, 5, 2, 3, 2)
    for mode in ["half", ("full", "valid", "valid"), ("valid", "full", "full"),
                 ("half", "full", "full")]:
        kiln.gradient.verify_grad(lambda a, b, mode=mode: conv3d2d.conv3d(a, b, border_mode=mode),
                                  [sv, fv], rng=rng)
    static = kt.tensor("float64", (1, 4, 2, 4, 3), name="t")
    kern = kt.tensor("float64", (2, 3, 2, 2, 2), name="k")
    assert kiln.function([static, kern], conv3d2d.conv3d(static, kern, border_mode=(
        "half", "valid", "valid")))(sv, rng.uniform(-1, 1, (2, 3, 2, 2, 2))).shape == (1, 4, 2, 3,
                                                                                       2)
    with pytest.raises(NotImplementedError, match="height and width bordermodes must match"):
        conv3d2d.conv3d(s, f, border_mode=("valid", "full", "half"))
    with pytest.raises(ValueError, match="invalid border mode"):
        conv3d2d.conv3d(s, f, border_mode="wide")
    with pytest.raises(NotImplementedError):
        conv3d2d.conv3d(s, f, border_mode="same")
    with pytest.raises(ValueError, match="signals must be a 5D tensor"):
        conv3d2d.conv3d(x, f)
    with pytest.raises(ValueError, match="filters_shape must have 5 elements"):
        conv3d2d.conv3d(s, f, filters_shape=(1, 2, 3))
    with pytest.raises(Exception, match="channel"):  # C of the movie and of the filters differ
        kiln.function([s, f], conv3d2d.conv3d(s, f))(sv, rng.uniform(-1, 1, (2, 2, 3, 2, 2)))
