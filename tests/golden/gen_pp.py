#!/usr/bin/python3
"""Writes tests/golden/pp.txt: expressions in Aesara's API and what Aesara 2.9.4's pp printed.

    PYTHONPATH=<aesara-2.9.4 checkout> AESARA_FLAGS=cxx= /usr/bin/python3 tests/golden/gen_pp.py

Each case is one line of Python evaluated with `at` (aesara.tensor) and the variables below in
scope; the golden file holds the source and pp's text, one pair a case."""
import os
import sys

import aesara
import aesara.tensor as at
from aesara import pp

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [
    "x + y", "x - y - z", "x - (y - z)", "(x + y) * z", "x * y / z", "x ** y ** z", "-x",
    "x // 2", "x ** 2", "at.grad(x ** 2, x)", "at.grad(at.exp(x) * y, x)", "x + 1.5",
    "a + b", "a * 2.0", "a.T", "a.dimshuffle(1, 'x', 0)", "b.dimshuffle('x', 0)",
    "at.exp(a)", "at.log1p(a) + at.sqrt(a)", "at.tanh(a).sum()", "at.exp(a) + at.exp(a)",
    "abs(a)", "abs(a - 1)", "at.dot(a, b)", "at.dot(b, b)", "at.sum(a, axis=0)", "at.sum(a)",
    "at.max(a)", "at.mean(a)", "at.argmax(a, axis=0)",
    "at.cast(a, 'int32')", "at.cast(b, 'float32')", "a / b - 1", "at.maximum(a, b)",
    "at.minimum(x, 0)", "at.switch(a > 0, a, 0)", "at.eq(a, b)", "a < b", "at.neq(x, y)",
    "a[0]", "a[0, 1:3]", "a[:, ::2]", "a[-1:, 1]", "b[i]", "a[i]", "a[i, 0]",
    "at.set_subtensor(a[0], b)", "at.inc_subtensor(a[1:, ::2], 1.0)",
    "at.set_subtensor(b[i], 0.0)", "at.stack([x, y])", "at.join(0, a, a)",
    "at.concatenate([b, b])", "a.reshape((2, -1))", "a.shape", "a.shape[0]", "b.shape[0] + 1",
    "at.alloc(x, 3, 4)", "at.fill(a, 1.0)", "at.zeros_like(a)", "at.ones_like(b)",
    "at.specify_shape(a, (2, 2))", "at.sigmoid(a)", "at.erf(a) * at.sin(a)", "at.sqr(a)",
    "at.sgn(b)", "at.floor(a) + at.ceil(a)", "at.round(b)", "at.clip(a, 0, 1)",
    "at.outer(b, b)", "at.arange(x.astype('int64'))", "at.cumsum(b)", "at.flatten(a)",
    "at.as_tensor_variable(3.0) * x", "at.constant([1.0, 2.0]) + b", "(x * y).sum()",
    "at.isnan(a)", "at.invert(a > 0)", "at.and_(a > 0, a < 1)", "at.true_div(i, 2)",
    "at.int_div(i, 2)", "at.mod(i, 3)", "at.real(a)", "at.log(1 - at.sigmoid(a))",
]


def main():
    """Prints every case and writes the golden file."""
    x, y, z = at.dscalars("x", "y", "z")
    a, b, i = at.dmatrix("a"), at.dvector("b"), at.lvector("i")
    lines = ["# Aesara 2.9.4's pp (aesara.printing.pp) of each expression; written by "
             "tests/golden/gen_pp.py.",
             "# Variables: x, y, z = dscalars; a = dmatrix; b = dvector; i = lvector.", ""]
    for case in CASES:
        text = pp(eval(case, {"at": at, "x": x, "y": y, "z": z, "a": a, "b": b, "i": i}))
        assert "\n" not in text, case
        lines += [">>> " + case, text]
    with open(os.path.join(HERE, "pp.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
