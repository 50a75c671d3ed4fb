#!/usr/bin/python3
"""Writes tests/golden/pytensor_slinalg_lu.txt: PyTensor 2.34's LU, LUFactor,
PivotToPermutations and BlockDiagonal (Aesara 2.9.4 has none of them) on fixed random inputs,
for core/ops/slinalg_lu_test.cc, in gen_slinalg_cases.py's format:
str(op) | "in|dtype|shape|values" per input | "out|dtype|shape|values" per output.

Run with the PyTensor oracle on the path:
    cd /tmp && . /tmp/pytensor-oracle/env.sh && /usr/bin/python3 /work/main/tests/golden/gen_slinalg_lu_cases.py

The oracle's SciPy (1.10) predates lu's p_indices (SciPy 1.11), which PyTensor's LU.perform
always passes: LU's rows are scipy.linalg.lu(a, permute_l) as LU.perform would return them, and
the p_indices rows follow SciPy 1.11's definition, a = l[p] @ u (p the row of each 1 in P).
"""
import os

import numpy as np
import pytensor
import pytensor.tensor as pt
import scipy
from pytensor.tensor import slinalg as s

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20240538)


def fmt(x):
    if np.iscomplexobj(x):
        return f"{float(x.real)!r};{float(x.imag)!r}"
    return repr(float(x)) if np.asarray(x).dtype.kind in "fc" else str(int(x))


def group(tag, a):
    a = np.asarray(a)
    shape = "x".join(str(d) for d in a.shape) or "-"
    return f"{tag}|{a.dtype.name}|{shape}|" + ",".join(fmt(x) for x in a.ravel())


lines = []


def run(op, inputs):
    if isinstance(op, s.LU):
        node = op.make_node(*[pt.as_tensor_variable(x) for x in inputs])
        out = scipy.linalg.lu(inputs[0], permute_l=op.permute_l)
        if op.p_indices:
            out = (np.argmax(out[0], axis=1).astype("int32"),) + tuple(out[1:])
        return node, [np.asarray(o, dtype=v.type.dtype) for o, v in zip(out, node.outputs)]
    node = op.make_node(*[pt.as_tensor_variable(x) for x in inputs])
    storage = [[None] for _ in node.outputs]
    op.perform(node, inputs, storage)
    return node, [np.asarray(st[0], dtype=o.type.dtype) for o, st in zip(node.outputs, storage)]


def case(op, *inputs):
    _, outputs = run(op, list(inputs))
    lines.append("|".join([str(op)] + [group("in", x) for x in inputs]
                          + [group("out", o) for o in outputs]))


for dtype in ["float64", "float32", "complex128"]:
    a = rng.standard_normal((4, 4))
    if dtype == "complex128":
        a = a + 1j * rng.standard_normal((4, 4))
    a = a.astype(dtype)
    case(s.LU(), a)
    case(s.LU(permute_l=True), a)
    case(s.LU(p_indices=True), a)
    case(s.LUFactor(), a)
case(s.LU(), np.array([[0.0, 1.0], [1.0, 0.0]]))
case(s.LUFactor(), np.array([[1.0, 2.0], [2.0, 4.0]]))  # singular: factors still returned
case(s.LUFactor(), np.array([[2, 1], [4, 3]], dtype="int64"))

for pivots in [[2, 2, 3, 3], [0, 1, 2], [3, 3, 2, 3], []]:
    p = np.array(pivots, dtype="int32")
    case(s.PivotToPermutations(inverse=True), p)
    case(s.PivotToPermutations(inverse=False), p)

case(s.BlockDiagonal(n_inputs=2), rng.standard_normal((2, 3)), rng.standard_normal((1, 2)))
case(s.BlockDiagonal(n_inputs=3), rng.standard_normal((2, 2)).astype("float32"),
     np.array([[1, 2]], dtype="int64"), np.zeros((0, 1)))
case(s.BlockDiagonal(n_inputs=1), np.array([[1, 2], [3, 4]], dtype="int32"))

with open(os.path.join(HERE, "pytensor_slinalg_lu.txt"), "w") as f:
    f.write(f"# pytensor {pytensor.__version__}, scipy {scipy.__version__}, numpy "
            f"{np.__version__}: str(op)|in|dtype|shape|values...|out|dtype|shape|values... "
            "(gen_slinalg_lu_cases.py)\n")
    f.write("\n".join(lines) + "\n")
