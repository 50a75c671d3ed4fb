"""Writes aesara_pool.txt: values of Aesara 2.9.4's pooling ops (aesara.tensor.signal.pool), the
reference of core/ops/pool_test.cc and tests/python/test_pool.py.

Run it under the Aesara oracle (Aesara 2.9.4, which computes these ops with their Python
`perform` when no C compiler is configured):

    cd /tmp && . /tmp/aesara-oracle/env.sh && \
        /usr/bin/python3 /work/main/tests/golden/gen_pool_cases.py

Each line is one case, '|'-separated:
    op|ndim|ignore_border|mode|ws|stride|pad|dtype|x shape|x|a shape|a|out shape|out
op is Pool (out = Pool(x, ws, stride, pad)), MaxPoolGrad (a is gz; out = MaxPoolGrad(x,
Pool(x), gz, ...)), AveragePoolGrad (a is gz; out = AveragePoolGrad(x, gz, ...)),
DownsampleFactorMaxGradGrad (a is ggx; out = DFMGG(x, Pool(x), ggx, ...)) or GradOfGrad (no a;
out = grad(sum(grad(sum(Pool(x) ** 2), x) ** 2), x), through aesara.grad). Shapes are "2x3"
("-" for none), values comma-separated in C order (floats by repr, exact for float32 too).
The x of every case holds distinct values (max pooling is differentiable away from ties).
"""
import os
import warnings

import numpy as np

warnings.simplefilter("ignore")

import aesara  # noqa: E402
import aesara.tensor as at  # noqa: E402
from aesara.tensor.signal.pool import (  # noqa: E402
    AveragePoolGrad, DownsampleFactorMaxGradGrad, MaxPoolGrad, Pool)

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")


def shape_text(a):
    return "x".join(str(d) for d in a.shape) or "-"


def values_text(a):
    return ",".join(repr(v) for v in np.asarray(a).ravel().tolist())


def distinct(shape, dtype, seed):
    """Distinct values in a random order: 0.37 * a permutation of 0..n-1, centred."""
    n = int(np.prod(shape))
    perm = np.random.default_rng(seed).permutation(n)
    if np.dtype(dtype).kind == "i":
        return (perm - n // 2).reshape(shape).astype(dtype)
    return ((perm - n / 2) * 0.37).reshape(shape).astype(dtype)


def noise(shape, dtype, seed):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def symbolic(dtype, ndim):
    return at.tensor(dtype=dtype, shape=(None,) * ndim)


def line(op, nd, ib, mode, ws, st, pad, x, a, out):
    fields = [op, str(nd), str(int(ib)), mode, ",".join(map(str, ws)), ",".join(map(str, st)),
              ",".join(map(str, pad)), x.dtype.name, shape_text(x), values_text(x)]
    fields += ["-", ""] if a is None else [shape_text(a), values_text(a)]
    fields += [shape_text(out), values_text(out)]
    return "|".join(fields)


def cases():
    """(x shape, ndim, ignore_border, ws, stride, pad, modes, dtype)."""
    out = []
    for ib in (True, False):
        out.append(((2, 2, 5, 7), 2, ib, (2, 2), (2, 2), (0, 0), MODES, "float64"))
        out.append(((2, 2, 5, 7), 2, ib, (3, 2), (1, 2), (0, 0), MODES, "float64"))
        out.append(((1, 2, 6, 5), 2, ib, (2, 3), (3, 1), (0, 0), MODES, "float64"))
        out.append(((1, 1, 5, 7), 2, ib, (6, 8), (6, 8), (0, 0), MODES, "float64"))
        out.append(((2, 3, 4, 5), 2, ib, (2, 2), (2, 2), (0, 0), MODES, "float32"))
        out.append(((3, 5, 7), 2, ib, (3, 3), (2, 2), (0, 0), MODES, "float64"))
        out.append(((5, 7), 2, ib, (2, 4), (1, 3), (0, 0), MODES, "float64"))
        out.append(((2, 4, 5, 6), 3, ib, (2, 2, 2), (1, 2, 3), (0, 0, 0), MODES, "float64"))
        out.append(((3, 10), 1, ib, (3,), (2,), (0,), MODES, "float64"))
        out.append(((2, 2, 5, 6), 2, ib, (2, 2), (2, 2), (0, 0), ("max", "sum"), "int32"))
    out.append(((2, 2, 5, 7), 2, True, (3, 3), (2, 2), (1, 2), MODES, "float64"))
    out.append(((1, 2, 6, 5), 2, True, (3, 2), (1, 1), (2, 1), MODES, "float64"))
    out.append(((2, 3, 4, 5, 6), 3, True, (2, 3, 2), (2, 2, 1), (1, 1, 1), MODES, "float64"))
    out.append(((2, 3, 4, 5), 2, True, (3, 3), (2, 2), (1, 1), MODES, "float32"))
    return out


def main():
    lines = []
    for k, (shape, nd, ib, ws, st, pad, modes, dtype) in enumerate(cases()):
        x = distinct(shape, dtype, k)
        xs = symbolic(dtype, len(shape))
        padded = any(pad)
        for mode in modes:
            y = Pool(ignore_border=ib, mode=mode, ndim=nd)(xs, ws, st, pad)
            yv = aesara.function([xs], y)(x)
            lines.append(line("Pool", nd, ib, mode, ws, st, pad, x, None, yv))
            if dtype == "int32":
                continue
            gz = noise(yv.shape, dtype, 100 + k)
            gzs = symbolic(dtype, len(shape))
            if mode == "max":
                gx = MaxPoolGrad(ib, ndim=nd)(xs, y, gzs, ws, st, pad)
                lines.append(line("MaxPoolGrad", nd, ib, mode, ws, st, pad, x, gz,
                                  aesara.function([xs, gzs], gx)(x, gz)))
                ggx = noise(shape, dtype, 200 + k)
                ggxs = symbolic(dtype, len(shape))
                ggz = DownsampleFactorMaxGradGrad(ib, ndim=nd)(xs, y, ggxs, ws, st, pad)
                lines.append(line("DownsampleFactorMaxGradGrad", nd, ib, mode, ws, st, pad, x,
                                  ggx, aesara.function([xs, ggxs], ggz)(x, ggx)))
            elif not (mode == "average_exc_pad" and padded):  # Aesara refuses that gradient
                gx = AveragePoolGrad(ib, mode=mode, ndim=nd)(xs, gzs, ws, st, pad)
                lines.append(line("AveragePoolGrad", nd, ib, mode, ws, st, pad, x, gz,
                                  aesara.function([xs, gzs], gx)(x, gz)))
            if dtype == "float64" and len(shape) == 4 and not (mode == "average_exc_pad"
                                                                and padded):
                g = aesara.grad((y ** 2).sum(), xs)
                gg = aesara.grad((g ** 2).sum(), xs)
                lines.append(line("GradOfGrad", nd, ib, mode, ws, st, pad, x, None,
                                  aesara.function([xs], gg)(x)))
    write_cases("aesara_pool.txt", lines, "gen_pool_cases.py")


def write_cases(name, lines, script):
    """Writes the case lines to tests/golden/<name> under a header naming the versions, the
    fields and the generator script."""
    with open(os.path.join(HERE, name), "w") as f:
        f.write("# aesara %s, numpy %s: op|ndim|ignore_border|mode|ws|stride|pad|dtype|x shape|x|"
                "a shape|a|out shape|out (see %s)\n"
                % (aesara.__version__, np.__version__, script))
        f.write("\n".join(lines) + "\n")
    print("wrote %d cases" % len(lines))


if __name__ == "__main__":
    main()
