"""Writes aesara_max_pool_rop.txt: values of Aesara 2.9.4's MaxPoolRop (aesara.tensor.signal.pool),
the R-operator of max pooling, the reference of core/ops/max_pool_rop_test.cc and
tests/python/test_pool.py's MaxPoolRop tests.

Run it under the Aesara oracle with a C compiler: MaxPoolRop's Python `perform` fails under
NumPy 1.24 (it indexes with a list of slices), so its C implementation computes these:

    cd /tmp && . /tmp/aesara-oracle/env.sh && \\
        AESARA_FLAGS=cxx=/usr/bin/g++,compiledir=/tmp/aesara-c \\
        /usr/bin/python3 /work/main/tests/golden/gen_max_pool_rop_cases.py

Each line is one case, '|'-separated, in gen_pool_cases.py's format:
    op|ndim|ignore_border|mode|ws|stride|pad|dtype|x shape|x|a shape|a|out shape|out
with op MaxPoolRop, a the eval point (noise in x's dtype: Aesara's C code reads the eval point
as x's dtype, and gives garbage for another) and out = MaxPoolRop(x, a, ws, stride, pad); the last line of each geometry is aesara.Rop(pool(x), x, a) instead (op RopOfPool), which
Aesara computes with MaxPoolRop. Half of the x's hold ties (values rounded to a few levels), so
that the first maximum of a window (NumPy's argmax, C order) is what is picked.
"""
import warnings

import numpy as np

warnings.simplefilter("ignore")

import aesara  # noqa: E402
import aesara.tensor as at  # noqa: E402
from aesara.tensor.signal.pool import MaxPoolRop, Pool  # noqa: E402

from gen_pool_cases import line, write_cases  # noqa: E402


def cases():
    """(x shape, ndim, ignore_border, ws, stride, pad, dtype, ties)."""
    out = []
    for ties in (False, True):
        for ib in (True, False):
            out.append(((2, 2, 5, 7), 2, ib, (2, 2), (2, 2), (0, 0), "float64", ties))
            out.append(((1, 2, 6, 5), 2, ib, (3, 2), (1, 2), (0, 0), "float64", ties))
            out.append(((3, 5, 7), 2, ib, (3, 3), (2, 2), (0, 0), "float32", ties))
            out.append(((2, 3, 4, 5), 3, ib, (2, 2, 3), (1, 2, 2), (0, 0, 0), "float64", ties))
            out.append(((3, 10), 1, ib, (3,), (2,), (0,), "int64", ties))
        out.append(((2, 2, 5, 7), 2, True, (3, 3), (2, 2), (1, 2), "float64", ties))
        out.append(((1, 2, 6, 5), 2, True, (3, 2), (1, 1), (2, 1), "float64", ties))
    return out


def x_values(shape, dtype, ties, seed):
    rng = np.random.default_rng(seed)
    v = rng.uniform(-3, 3, shape)
    if ties:
        v = np.round(v / 2)  # a few levels: windows hold repeated maxima
    return (v * 10).astype(dtype) if np.dtype(dtype).kind == "i" else v.astype(dtype)


def main():
    lines = []
    for k, (shape, nd, ib, ws, st, pad, dtype, ties) in enumerate(cases()):
        x = x_values(shape, dtype, ties, k)
        ev = np.random.default_rng(100 + k).uniform(-1, 1, shape)
        ev = (ev * 100).astype(dtype) if np.dtype(dtype).kind == "i" else ev.astype(dtype)
        xs = at.tensor(dtype=dtype, shape=(None,) * len(shape))
        es = at.tensor(dtype=dtype, shape=(None,) * len(shape))
        out = MaxPoolRop(ignore_border=ib, ndim=nd)(xs, es, ws, st, pad)
        lines.append(line("MaxPoolRop", nd, ib, "max", ws, st, pad, x, ev,
                          aesara.function([xs, es], out)(x, ev)))
        if dtype == "float64":
            y = Pool(ignore_border=ib, mode="max", ndim=nd)(xs, ws, st, pad)
            rop = aesara.Rop(y, xs, es)
            lines.append(line("RopOfPool", nd, ib, "max", ws, st, pad, x, ev,
                              aesara.function([xs, es], rop)(x, ev)))
    write_cases("aesara_max_pool_rop.txt", lines, "gen_max_pool_rop_cases.py")


if __name__ == "__main__":
    main()
