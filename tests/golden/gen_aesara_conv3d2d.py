#!/usr/bin/python3
"""Writes tests/golden/aesara_diagonal_subtensor.txt, the values of Aesara 2.9.4's
DiagonalSubtensor and IncDiagonalSubtensor (aesara.tensor.nnet.conv3d2d) that
core/ops/diagonal_subtensor_test.cc and tests/python/test_conv3d2d_ops.py compare with.

Run with Aesara 2.9.4 importable, in pure-Python mode:

    PYTHONPATH=<aesara-2.9.4> AESARA_FLAGS=cxx= /usr/bin/python3 tests/golden/gen_aesara_conv3d2d.py

Inputs are deterministic: x = arange(size) + 1 in x's dtype, amt = arange(size) * 0.5 - 1 in
amt's dtype and shape. Each line: x dtype|x shape|i0|i1|amt dtype|amt shape|out shape|
DiagonalSubtensor(x, i0, i1) values|IncDiagonalSubtensor(x, i0, i1, amt) values, both Aesara's
compiled functions' outputs (shapes "2x3", "-" for a scalar, values in C order)."""
import os
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import aesara  # noqa: E402
import aesara.tensor as at  # noqa: E402
from aesara.tensor.nnet.conv3d2d import diagonal_subtensor, inc_diagonal_subtensor  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# x dtype, x shape, i0, i1, amt dtype, amt shape (None: the stripe's shape)
CASES = [
    ("float64", (7, 4), 0, 1, "float64", None),
    ("float64", (4, 4), 0, 1, "float64", None),
    ("float64", (5, 1), 0, 1, "float64", None),
    ("float64", (3, 5, 2), 1, 0, "float64", None),
    ("float64", (2, 6, 3, 4), 1, 2, "float64", None),
    ("float64", (2, 6, 3, 4), -3, -2, "float64", (4,)),
    ("float32", (6, 2, 3), 0, 2, "float32", (1, 2, 1)),
    ("int32", (5, 3), 0, 1, "int16", None),
    ("float64", (4, 3), 1, 1, "float64", None),
    ("float64", (3, 0), 0, 1, "float64", None),
    ("float64", (2, 5, 1, 3), 3, 0, "float64", ()),
]


def fmt_values(a):
    return ",".join(repr(v) for v in np.asarray(a).ravel().tolist())


def fmt_shape(shape):
    return "x".join(str(d) for d in shape) or "-"


def main():
    lines = []
    for dt, shp, i0, i1, adt, ashp in CASES:
        xv = (np.arange(int(np.prod(shp)), dtype=np.float64).reshape(shp) + 1).astype(dt)
        x = at.tensor(dt, shape=(None,) * len(shp))
        out = diagonal_subtensor(x, i0, i1)
        y = aesara.function([x], out)(xv)
        ashp = y.shape if ashp is None else ashp
        av = (np.arange(int(np.prod(ashp)), dtype=np.float64).reshape(ashp) * 0.5 - 1)
        av = av.astype(adt)
        amt = at.tensor(adt, shape=(None,) * len(ashp))
        z = aesara.function([x, amt], inc_diagonal_subtensor(x, i0, i1, amt))(xv, av)
        lines.append("|".join([dt, fmt_shape(shp), str(i0), str(i1), adt, fmt_shape(ashp),
                               fmt_shape(y.shape), fmt_values(y), fmt_values(z)]))
    with open(os.path.join(HERE, "aesara_diagonal_subtensor.txt"), "w") as f:
        f.write("# aesara %s: x dtype|x shape|i0|i1|amt dtype|amt shape|out shape|"
                "DiagonalSubtensor values|IncDiagonalSubtensor values\n" % aesara.__version__)
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
