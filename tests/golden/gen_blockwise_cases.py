"""Writes tests/golden/pytensor_blockwise.txt: PyTensor 2.34's Blockwise (its printed name and
the values it computes) on batched and broadcast inputs, for core/ops/blockwise_test.cc.

Run with PyTensor's environment (Aesara never had Blockwise):
    . /tmp/pytensor-oracle/env.sh && /usr/bin/python3 tests/golden/gen_blockwise_cases.py
Each line: name|in|dtype|shape|values...|out|dtype|shape|values... (the format of
tests/golden/aesara_nlinalg.txt; shapes "2x3", "-" for a scalar)."""
import os

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.math import Dot
from pytensor.tensor.nlinalg import Det, MatrixInverse, SLogDet

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytensor_blockwise.txt")


def field(a):
    a = np.asarray(a)
    shape = "x".join(str(d) for d in a.shape) or "-"
    return "%s|%s|%s" % (a.dtype, shape, ",".join(repr(float(v)) for v in a.ravel()))


def case(op, inputs):
    syms = [pt.tensor(dtype=str(x.dtype), shape=tuple(1 if d == 1 else None for d in x.shape))
            for x in inputs]
    outs = op(*syms)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    values = pytensor.function(syms, outs)(*inputs)
    parts = [str(op)] + ["in|" + field(x) for x in inputs] + ["out|" + field(v) for v in values]
    return "|".join(parts)


def main():
    rng = np.random.default_rng(37)
    sq = lambda *s: rng.normal(size=s) + 3 * np.eye(s[-1])  # noqa: E731
    lines = ["# PyTensor %s (numpy %s): written by gen_blockwise_cases.py"
             % (pytensor.__version__, np.__version__)]
    lines.append(case(Blockwise(Det()), [sq(2, 3, 3)]))
    lines.append(case(Blockwise(MatrixInverse()), [sq(2, 1, 3, 3)]))
    lines.append(case(Blockwise(SLogDet()), [sq(3, 2, 2)]))
    lines.append(case(Blockwise(Dot(), signature="(m,n),(n,k)->(m,k)"),
                      [rng.normal(size=(2, 1, 2, 3)), rng.normal(size=(3, 3, 2))]))
    lines.append(case(Blockwise(Dot(), signature="(m,n),(n,k)->(m,k)"),
                      [rng.normal(size=(2, 3)), rng.normal(size=(4, 3, 2))]))
    lines.append(case(Blockwise(Det()), [sq(3, 3).astype("float32")[None].repeat(2, 0)]))
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
