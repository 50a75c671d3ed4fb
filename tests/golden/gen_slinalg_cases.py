#!/usr/bin/python3
"""Writes tests/golden/aesara_slinalg.txt: Aesara 2.9.4's aesara.tensor.slinalg ops (which call
SciPy) on fixed random inputs, for core/ops/slinalg_test.cc and slinalg_matfun_test.cc.

Run with the Aesara oracle on the path (its env.sh sets PYTHONPATH and AESARA_FLAGS):
    cd /tmp && . /tmp/aesara-oracle/env.sh && /usr/bin/python3 /work/main/tests/golden/gen_slinalg_cases.py

Each line: str(op) | then for each input "in|dtype|shape|values" | then for each output
"out|dtype|shape|values". The values come from the op's own perform (scipy.linalg), so both the
printed names and the numbers are Aesara's; complex values are written "re;im".
"""
import functools
import os
import sys

import numpy as np
import scipy
import aesara
from aesara.tensor import slinalg as s

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import op_cases  # noqa: E402

rng = np.random.default_rng(20240537)
rand = functools.partial(op_cases.rand, rng)
cases = op_cases.Cases()
case = cases.case


def spd(n, dtype="float64"):
    m = rand((n, n), dtype)
    return (m @ m.conj().T + n * np.eye(n)).astype(dtype)


def tri(n, lower, dtype="float64"):
    m = rand((n, n), dtype) + 3 * np.eye(n)
    return (np.tril(m) if lower else np.triu(m)).astype(dtype)


# Cholesky: both sides, float32/float64/complex128, and on_error="nan" on an indefinite matrix.
for dtype in ["float64", "float32", "complex128"]:
    for lower in [True, False]:
        case(s.Cholesky(lower=lower), spd(4, dtype))
case(s.Cholesky(on_error="nan"), np.array([[1.0, 2.0], [2.0, 1.0]]))
case(s.Cholesky(), np.eye(1))

# Solve: every structure, vector and matrix right-hand sides, mixed dtypes.
for assume_a in ["gen", "sym", "her", "pos"]:
    for lower in [False, True]:
        a = spd(4) if assume_a == "pos" else rand((4, 4)) + (rand((4, 4)).T if assume_a != "gen" else 0)
        if assume_a in ("sym", "her"):
            a = a + a.T
        case(s.Solve(assume_a=assume_a, lower=lower), a, rand((4,)))
        case(s.Solve(assume_a=assume_a, lower=lower), a, rand((4, 3)))
case(s.Solve(), rand((3, 3), "float32"), rand((3, 2), "float32"))
case(s.Solve(), rand((3, 3), "float32"), rand((3,), "float64"))
case(s.Solve(), np.array([[2, 1], [1, 3]], dtype="int64"), np.array([1, 2], dtype="int32"))
case(s.Solve(), rand((3, 3), "complex128"), rand((3, 2), "complex128"))
case(s.Solve(assume_a="her"), spd(3, "complex128"), rand((3,), "complex128"))
case(s.Solve(assume_a="pos", lower=True), spd(3, "complex128"), rand((3,), "complex128"))

# SolveTriangular: both triangles, every trans, unit diagonal, complex.
for lower in [True, False]:
    for trans in [0, 1, 2]:
        for unit in [False, True]:
            case(s.SolveTriangular(lower=lower, trans=trans, unit_diagonal=unit), tri(4, lower),
                 rand((4, 2)))
case(s.SolveTriangular(lower=True), tri(3, True), rand((3,)))
case(s.SolveTriangular(lower=True, trans=2), tri(3, True, "complex128"), rand((3,), "complex128"))
case(s.SolveTriangular(), tri(3, False, "float32"), rand((3, 2), "float32"))

# CholeskySolve from both factors.
for lower in [True, False]:
    a = spd(4)
    c = scipy.linalg.cholesky(a, lower=lower)
    case(s.CholeskySolve(lower=lower), c, rand((4,)))
    case(s.CholeskySolve(lower=lower), c, rand((4, 2)))

# Eigvalsh: standard and generalized problems, both triangles, float32 and complex.
for lower in [True, False]:
    case(s.Eigvalsh(lower=lower), rand((4, 4)) + rand((4, 4)).T, None)
    case(s.Eigvalsh(lower=lower), rand((4, 4)), spd(4))
case(s.Eigvalsh(), spd(3, "float32"), None)
case(s.Eigvalsh(), spd(3, "complex128"), None)
a = rand((4, 4))
case(s.EigvalshGrad(True), a + a.T, spd(4), rand((4,)))
case(s.EigvalshGrad(False), a + a.T, spd(4), rand((4,)))

# Expm: each Pade degree's norm range and the scaled one, float32, complex, zero.
for scale in [0.005, 0.1, 0.5, 1.5, 4.0, 30.0]:
    case(s.Expm(), scale * rand((4, 4)) / 2)
case(s.Expm(), rand((3, 3), "float32"))
case(s.Expm(), rand((3, 3), "complex128"))
case(s.Expm(), np.zeros((2, 2)))
case(s.ExpmGrad(), rand((3, 3)), rand((3, 3)))
case(s.ExpmGrad(), 0.3 * rand((4, 4)), rand((4, 4)))

# The Lyapunov equations, real and complex.
for dtype in ["float64", "complex128"]:
    a = rand((4, 4), dtype) - 3 * np.eye(4)
    q = rand((4, 4), dtype)
    case(s.SolveContinuousLyapunov(), a, q + q.conj().T)
    case(s.BilinearSolveDiscreteLyapunov(), 0.3 * a / 3, q)

# Complex layouts of every solver (appended last, so the rows above keep their inputs).
c = spd(3, "complex128")
case(s.CholeskySolve(lower=True), scipy.linalg.cholesky(c, lower=True), rand((3, 2), "complex128"))
case(s.CholeskySolve(lower=False), scipy.linalg.cholesky(c), rand((3,), "complex128"))
m = rand((3, 3), "complex128")
case(s.Solve(assume_a="sym"), m + m.T, rand((3, 2), "complex128"))
case(s.Solve(assume_a="her", lower=True), c, rand((3, 2), "complex128"))
for trans in [0, 1, 2]:
    case(s.SolveTriangular(lower=False, trans=trans), tri(3, False, "complex128"),
         rand((3, 2), "complex128"))
case(s.Eigvalsh(lower=False), c, spd(3, "complex128"))
case(s.Cholesky(lower=True), spd(3, "complex64"))

cases.write(os.path.join(HERE, "aesara_slinalg.txt"),
            f"aesara {aesara.__version__}, scipy {scipy.__version__}, numpy {np.__version__}: "
            "str(op)|in|dtype|shape|values...|out|dtype|shape|values... (gen_slinalg_cases.py)")
