#!/usr/bin/python3
"""Writes tests/golden/aesara_nlinalg.txt: Aesara 2.9.4's aesara.tensor.nlinalg ops (which call
numpy.linalg) on fixed random inputs, for core/ops/nlinalg_test.cc and nlinalg_decomp_test.cc.

Run with the Aesara oracle on the path (its env.sh sets PYTHONPATH and AESARA_FLAGS):
    cd /tmp && . /tmp/aesara-oracle/env.sh && /usr/bin/python3 /work/main/tests/golden/gen_nlinalg_cases.py

Each line: str(op) | then for each input "in|dtype|shape|values" | then for each output
"out|dtype|shape|values". The values come from the op's own perform (numpy.linalg), cast to the
output's declared dtype, so both the printed names and the numbers are Aesara's; complex values
are written "re;im". SLogDet, which Aesara 2.9.4 lacks, is PyTensor's: numpy.linalg.slogdet of
x, both values in x's dtype. Lstsq's x has b's rank and TensorSolve's result the solution's rank:
those are the values Aesara computes (its declared types say matrix).
"""
import functools
import os
import sys

import numpy as np
from aesara.tensor import nlinalg as nl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import op_cases  # noqa: E402
from op_cases import group  # noqa: E402

rng = np.random.default_rng(20240537)
rand = functools.partial(op_cases.rand, rng)
cases = op_cases.Cases()
case = cases.case


def sym(n, dtype="float64"):
    m = rand((n, n), dtype)
    return ((m + m.conj().T) / 2).astype(dtype)


def slogdet_case(x):
    sign, logdet = np.linalg.slogdet(x)
    parts = ["SLogDet", group("in", x), group("out", np.asarray(sign, x.dtype)),
             group("out", np.asarray(logdet, x.dtype))]
    cases.lines.append("|".join(parts))


for dtype in ["float64", "float32", "complex128", "int64"]:
    a = rand((4, 4), dtype) + (3 * np.eye(4, dtype=dtype) if dtype != "int64" else 0)
    if dtype == "int64":
        a = np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], dtype)
    case(nl.MatrixInverse(), a)
    case(nl.Det(), a)
    slogdet_case(a)
    case(nl.MatrixPinv(hermitian=False), rand((3, 5), dtype) if dtype != "int64" else a)
    case(nl.MatrixPinv(hermitian=True), sym(4, dtype) if dtype != "int64" else a)
case(nl.Det(), np.zeros((0, 0)))
slogdet_case(np.array([[1.0, 2.0], [2.0, 4.0]]))
slogdet_case(np.array([[0.0, 2.0], [3.0, 1.0]]))
case(nl.MatrixPinv(hermitian=False), np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]]))

# Eig: real eigenvalues (a symmetric matrix), complex ones (real parts kept), complex input.
case(nl.Eig(), sym(4))
case(nl.Eig(), np.array([[0.0, -1.0, 0.5], [1.0, 0.0, 0.2], [0.0, 0.3, 2.0]]))
case(nl.Eig(), rand((3, 3), "complex128"))
case(nl.Eig(), rand((3, 3), "float32"))
for uplo in ["L", "U"]:
    for dtype in ["float64", "float32"]:
        case(nl.Eigh(uplo), rand((4, 4), dtype))  # not symmetric: only the triangle is read
case(nl.Eigh(), np.array([[2, 1], [1, 3]], "int64"))

for mode in ["reduced", "complete", "r", "raw"]:
    for shape in [(5, 3), (3, 5), (4, 4)]:
        case(nl.QRFull(mode), rand(shape))
case(nl.QRFull("reduced"), rand((4, 3), "float32"))
for full in [True, False]:
    for uv in [True, False]:
        for shape in [(5, 3), (3, 5)]:
            case(nl.SVD(full, uv), rand(shape))
case(nl.SVD(False, True), rand((4, 3), "float32"))

lstsq = nl.Lstsq()
case(lstsq, rand((5, 3)), rand((5,)), np.float64(-1))
case(lstsq, rand((5, 3)), rand((5, 2)), np.float64(-1))
case(lstsq, rand((3, 5)), rand((3, 2)), np.float64(-1))
case(lstsq, np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), rand((3,)), np.float64(1e-10))
case(lstsq, rand((5, 3), "float32"), rand((5,), "float32"), np.float32(-1))

case(nl.TensorInv(2), rand((2, 3, 6)) + np.eye(6).reshape(2, 3, 6) * 3)
case(nl.TensorInv(1), rand((4, 2, 2)) + np.eye(4).reshape(4, 2, 2) * 3)
case(nl.TensorSolve(None), rand((2, 3, 6)) + np.eye(6).reshape(2, 3, 6) * 3, rand((2, 3)))
case(nl.TensorSolve((0,)), rand((3, 2, 3, 2)) + np.eye(6).reshape(3, 2, 3, 2) * 3, rand((2, 3)))

cases.write(os.path.join(HERE, "aesara_nlinalg.txt"),
            "Aesara 2.9.4 (numpy %s): written by gen_nlinalg_cases.py" % np.__version__)
print(len(cases.lines), "cases")
