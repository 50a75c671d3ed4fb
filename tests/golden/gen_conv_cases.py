"""Writes tests/golden/aesara_conv.txt: convolutions computed by Aesara 2.9.4 (the oracle), for
core/ops/conv_test.cc and tests/python/test_conv.py.

Run under the oracle (it needs aesara, which the tests do not):
    cd /tmp && . /tmp/aesara-oracle/env.sh && /usr/bin/python3 <repo>/tests/golden/gen_conv_cases.py

Each case convolves a random image x by random filters w with Aesara's conv2d / conv3d and, with a
random G of the output's shape, takes aesara.grad(sum(y * G), [x, w]): Aesara's
AbstractConv*_gradInputs(w, G, x.shape[-d:]) and AbstractConv*_gradWeights(x, G, w.shape[-d:]),
evaluated by the ops' perform methods (Mode(linker="py", optimizer=None)).
It also writes tests/golden/aesara_conv_extra.txt: the functions built on the ops
(bilinear_upsampling, causal_conv1d, conv2d_transpose, the grad_wrt functions, separable_conv2d,
the legacy nnet.conv.conv2d, nnet.conv3d2d.conv3d and its gradients, and signal.conv.conv2d), for
tests/python/test_conv.py.
Line format of aesara_conv.txt (values comma-separated, shapes 2x3x5x5):
    name|dim|border|subsample|filter_flip|dilation|groups|dtype|x shape|x|w shape|w|y shape|y|
    G|dx|dw (one line)
border is valid, full, half, or low:high per spatial axis (1:1,0:2).
"""
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import aesara  # noqa: E402
import aesara.tensor as at  # noqa: E402
from aesara.compile.mode import Mode  # noqa: E402
from aesara.tensor.nnet.abstract_conv import conv2d, conv3d  # noqa: E402

# The ops' own perform methods (Aesara's reference implementation): the oracle has no BLAS
# for the compiled CorrMM rewrites.
PERFORM = Mode(linker="py", optimizer=None)

# name, dim, border_mode (Aesara's form), subsample, filter_flip, dilation, groups, dtype,
# x shape, w shape
CASES = [
    ("valid", 2, "valid", (1, 1), True, (1, 1), 1, "float64", (2, 3, 6, 5), (4, 3, 3, 2)),
    ("full", 2, "full", (1, 1), True, (1, 1), 1, "float64", (2, 2, 4, 5), (3, 2, 3, 3)),
    ("half_even_kernel", 2, "half", (1, 1), True, (1, 1), 1, "float64", (1, 2, 5, 6),
     (2, 2, 4, 3)),
    ("int_pad_stride2", 2, 1, (2, 2), True, (1, 1), 1, "float64", (2, 2, 7, 6), (3, 2, 3, 3)),
    ("tuple_pad_stride_dilation", 2, (1, 2), (2, 1), True, (1, 2), 1, "float64", (2, 2, 6, 7),
     (2, 2, 2, 3)),
    ("asymmetric_pad", 2, ((1, 2), 0), (1, 1), True, (1, 1), 1, "float64", (1, 2, 5, 5),
     (2, 2, 3, 2)),
    ("dilation", 2, "valid", (1, 1), True, (2, 2), 1, "float64", (2, 1, 8, 7), (2, 1, 3, 2)),
    ("groups", 2, "half", (1, 1), True, (1, 1), 2, "float64", (2, 4, 5, 5), (6, 2, 3, 3)),
    ("no_flip", 2, "half", (1, 2), False, (1, 1), 1, "float64", (2, 3, 5, 6), (2, 3, 3, 3)),
    ("float32", 2, "valid", (1, 2), True, (1, 1), 1, "float32", (3, 2, 6, 6), (4, 2, 3, 3)),
    ("full_stride_groups_dilation", 2, "full", (2, 3), True, (2, 1), 3, "float64", (1, 3, 6, 7),
     (3, 1, 2, 3)),
    ("conv3d_valid", 3, "valid", (1, 1, 1), True, (1, 1, 1), 1, "float64", (2, 2, 4, 5, 4),
     (3, 2, 2, 3, 2)),
    ("conv3d_half_stride_dilation_noflip", 3, "half", (2, 1, 2), False, (1, 2, 1), 1, "float64",
     (1, 2, 5, 6, 5), (2, 2, 3, 2, 3)),
    ("conv3d_pad_groups", 3, (1, 0, 1), (1, 1, 1), True, (1, 1, 1), 2, "float64", (2, 4, 3, 4, 3),
     (4, 2, 2, 2, 2)),
]


def border_text(mode, dim):
    if isinstance(mode, str):
        return mode
    if isinstance(mode, int):
        mode = (mode,) * dim
    return ",".join("%d:%d" % ((m, m) if isinstance(m, int) else m) for m in mode)


def values(a):
    return ",".join(repr(float(v)) for v in np.asarray(a).ravel())


def shape_text(a):
    return "x".join(str(d) for d in a)


def main():
    rng = np.random.default_rng(20261127)
    lines = ["# Aesara %s (aesara.tensor.nnet.abstract_conv): written by gen_conv_cases.py" %
             aesara.__version__,
             "# name|dim|border|subsample|filter_flip|dilation|groups|dtype|x shape|x|w shape|w|"
             "y shape|y|G|dx|dw"]
    for (name, dim, mode, sub, flip, dil, groups, dtype, xs, ws) in CASES:
        x = at.tensor(dtype=dtype, shape=(None,) * (dim + 2), name="x")
        w = at.tensor(dtype=dtype, shape=(None,) * (dim + 2), name="w")
        conv = conv2d if dim == 2 else conv3d
        y = conv(x, w, border_mode=mode, subsample=sub, filter_flip=flip, filter_dilation=dil,
                 num_groups=groups)
        g = at.tensor(dtype=dtype, shape=(None,) * (dim + 2), name="g")
        dx, dw = aesara.grad((y * g).sum(), [x, w])
        f = aesara.function([x, w, g], [y, dx, dw], mode=PERFORM)
        xv = rng.uniform(-1, 1, xs).astype(dtype)
        wv = rng.uniform(-1, 1, ws).astype(dtype)
        yv = aesara.function([x, w], y, mode=PERFORM)(xv, wv)
        gv = rng.uniform(-1, 1, yv.shape).astype(dtype)
        yv, dxv, dwv = f(xv, wv, gv)
        assert dxv.shape == xv.shape and dwv.shape == wv.shape
        lines.append("|".join([
            name, str(dim), border_text(mode, dim), ",".join(map(str, sub)), str(flip),
            ",".join(map(str, dil)), str(groups), dtype, shape_text(xs), values(xv),
            shape_text(ws), values(wv), shape_text(yv.shape), values(yv), values(gv),
            values(dxv), values(dwv)]))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "aesara_conv.txt")
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("wrote %d cases to %s" % (len(lines) - 2, out), file=sys.stderr)
    extra_cases(rng)


def _ttype(dtype, ndim, name):
    return at.tensor(dtype=dtype, shape=(None,) * ndim, name=name)


# The functions built on the ops: name -> (input shapes, the function of the inputs). The same
# recipes are in tests/python/test_conv.py.
def _extras():
    from aesara.tensor.nnet import abstract_conv as ac
    from aesara.tensor.nnet import conv as legacy
    from aesara.tensor.signal import conv as signal_conv
    return {
        "bilinear_upsampling_1d_kernel": ([(2, 3, 4, 5)],
                                          lambda x: ac.bilinear_upsampling(x, ratio=2)),
        "bilinear_upsampling_2d_kernel": ([(1, 2, 3, 4)], lambda x: ac.bilinear_upsampling(
            x, ratio=3, batch_size=1, num_input_channels=2, use_1D_kernel=False)),
        "frac_bilinear_upsampling": ([(1, 2, 3, 4)], lambda x: ac.bilinear_upsampling(
            x, frac_ratio=((3, 2), (5, 3)), use_1D_kernel=False)),
        "causal_conv1d": ([(2, 3, 7), (4, 3, 3)], lambda x, w: ac.causal_conv1d(
            x, w, filter_shape=(4, 3, 3), filter_dilation=2)),
        "conv2d_transpose": ([(2, 3, 4, 4), (3, 2, 3, 3)], lambda x, w: ac.conv2d_transpose(
            x, w, output_shape=(2, 2, 9, 9), input_dilation=(2, 2))),
        "conv2d_grad_wrt_weights": ([(2, 2, 6, 5), (2, 3, 4, 3)], lambda x, g:
                                    ac.conv2d_grad_wrt_weights(x, g, filter_shape=(3, 2, 3, 3))),
        "conv3d_grad_wrt_inputs": ([(2, 3, 5, 6, 5), (3, 2, 2, 2, 2)], lambda g, w:
                                   ac.conv3d_grad_wrt_inputs(g, w, input_shape=(2, 2, 4, 5, 4),
                                                             border_mode=1)),
        "separable_conv2d": ([(1, 2, 6, 6), (4, 1, 3, 3), (3, 4, 1, 1)], lambda x, d, p:
                             ac.separable_conv2d(x, d, p, num_channels=2, border_mode="half")),
        "legacy_conv2d": ([(2, 3, 5, 6), (2, 3, 2, 3)], lambda x, w: legacy.conv2d(
            x, w, border_mode="full", subsample=(2, 1))),
        "signal_conv2d_3d_3d": ([(2, 5, 6), (3, 2, 3)], lambda x, w: signal_conv.conv2d(
            x, w, border_mode="full")),
        "signal_conv2d_2d_2d": ([(5, 6), (2, 3)], lambda x, w: signal_conv.conv2d(x, w)),
        "signal_conv2d_2d_3d": ([(5, 6), (3, 2, 3)], lambda x, w: signal_conv.conv2d(x, w)),
        **_legacy_extras(),
    }


def _legacy_extras():
    """The legacy nnet.conv.conv2d with its shape hints, and nnet.conv3d2d.conv3d in each border
    mode (time, rows/columns), with the gradients of sum(conv3d * G)."""
    from aesara.tensor.nnet import conv as legacy
    from aesara.tensor.nnet.conv3d2d import conv3d as conv3d2d
    movie, kern = (2, 5, 3, 6, 5), (4, 3, 3, 2, 3)
    cases = {
        "legacy_conv2d_valid": ([(2, 1, 5, 5), (3, 1, 2, 2)], lambda x, w: legacy.conv2d(x, w)),
        "legacy_conv2d_hints_subsample": ([(3, 2, 7, 6), (4, 2, 3, 2)], lambda x, w:
                                          legacy.conv2d(x, w, image_shape=(3, 2, 7, 6),
                                                        filter_shape=(4, 2, 3, 2),
                                                        subsample=(2, 3))),
        "conv3d2d_hints": ([movie, kern], lambda s, f: conv3d2d(
            s, f, signals_shape=movie, filters_shape=kern, border_mode="full")),
        "conv3d2d_one_frame_filters": ([movie, (2, 1, 3, 3, 2)], lambda s, f: conv3d2d(
            s, f, border_mode=("full", "half", "half"))),
        "conv3d2d_even_taps_half": ([movie, (2, 2, 3, 2, 2)], lambda s, f: conv3d2d(
            s, f, border_mode="half")),
    }
    modes = {"valid": "valid", "full": "full", "half": "half",
             "full_valid": ("full", "valid", "valid"), "valid_half": ("valid", "half", "half"),
             "half_full": ("half", "full", "full"), "valid_full": ("valid", "full", "full")}
    for name, mode in modes.items():
        cases["conv3d2d_" + name] = ([movie, kern], lambda s, f, mode=mode: conv3d2d(
            s, f, border_mode=mode))
    for name, mode, out in [("half_full", ("half", "full", "full"), (2, 5, 4, 7, 7)),
                            ("full_valid", ("full", "valid", "valid"), (2, 7, 4, 5, 3))]:
        for wrt in (0, 1):
            cases["conv3d2d_%s_grad%d" % (name, wrt)] = (
                [movie, kern, out], lambda s, f, g, mode=mode, wrt=wrt: aesara.grad(
                    (conv3d2d(s, f, border_mode=mode) * g).sum(), [s, f][wrt]))
    return cases


def extra_cases(rng):
    """tests/golden/aesara_conv_extra.txt: name|n inputs|(shape|values) per input|out shape|out
    values, float64."""
    lines = ["# Aesara %s: functions built on the convolution ops, by gen_conv_cases.py "
             "(recipes in _extras)" % aesara.__version__]
    for name, (shapes, fn) in _extras().items():
        xs = [_ttype("float64", len(s), "x%d" % i) for i, s in enumerate(shapes)]
        vals = [rng.uniform(-1, 1, s) for s in shapes]
        try:
            out = aesara.function(xs, fn(*xs), mode=PERFORM)(*vals)
        except Exception as e:  # the legacy ConvOp's perform may need what the oracle lacks
            print("skipped %s: %s" % (name, str(e).splitlines()[0]), file=sys.stderr)
            continue
        fields = [name, str(len(shapes))]
        for s, v in zip(shapes, vals):
            fields += [shape_text(s), values(v)]
        fields += [shape_text(out.shape), values(out)]
        lines.append("|".join(fields))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "aesara_conv_extra.txt")
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("wrote %d cases to %s" % (len(lines) - 1, out), file=sys.stderr)


if __name__ == "__main__":
    main()
