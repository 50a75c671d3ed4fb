#!/usr/bin/python3
"""Cholesky, solve, eigh and eigvalsh of 64, 256 and 1024-square matrices against SciPy on the same
OpenBLAS (Debian's python3-scipy links the system's), in the same run: Kiln's functions run in
this process (Mode(execute="local"): the op's kernel plus the call's overhead), SciPy's calls
with their defaults (check_finite=True, as Kiln's ops). Each round times a batch of Kiln calls
then a batch of SciPy calls; a BENCH line per case and round gives the best of each side and
speedup = SciPy's time / Kiln's (above 1: Kiln is faster).

Usage: slinalg_vs_scipy.py [rounds]  (KILN_SERVER_BIN, KILN_PB_DIR as for the Python tests)
"""
import os
import sys
import time

import numpy as np
import scipy.linalg

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from conftest import running_server  # noqa: E402
import kiln  # noqa: E402
import kiln.tensor as kt  # noqa: E402
from kiln.tensor import nlinalg, slinalg  # noqa: E402

SIZES = (64, 256, 1024)


def best_of(fn, calls, repeats=5):
    """The best mean time of `calls` calls, over `repeats` batches."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def cases():
    """(name, kiln function, its arguments, the SciPy call) for every size."""
    local = kiln.Mode(execute="local")
    a, b = kt.dmatrix("a"), kt.dmatrix("b")
    chol = kiln.function([a], slinalg.cholesky(a), mode=local)
    solve = kiln.function([a, b], slinalg.solve(a, b), mode=local)
    solve_pos = kiln.function([a, b], slinalg.solve(a, b, assume_a="pos"), mode=local)
    eigvalsh = kiln.function([a], slinalg.eigvalsh(a, None), mode=local)
    eigh = kiln.function([a], nlinalg.eigh(a), mode=local)
    rng = np.random.default_rng(0)
    for n in SIZES:
        m = rng.standard_normal((n, n))
        spd = m @ m.T + n * np.eye(n)
        rhs = rng.standard_normal((n, 8))
        yield (f"cholesky_{n}", chol, (spd,), lambda s=spd: scipy.linalg.cholesky(s, lower=True))
        yield (f"solve_{n}", solve, (m, rhs), lambda m=m, r=rhs: scipy.linalg.solve(m, r))
        yield (f"solve_pos_{n}", solve_pos, (spd, rhs),
               lambda s=spd, r=rhs: scipy.linalg.solve(s, r, assume_a="pos"))
        yield (f"eigvalsh_{n}", eigvalsh, (spd,), lambda s=spd: scipy.linalg.eigvalsh(s))
        # Vectors as well (LAPACK's syevd in both); checked up to each vector's sign.
        yield (f"eigh_{n}", eigh, (spd,), lambda s=spd: scipy.linalg.eigh(s))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with running_server() as address:
        kiln.config.server = address
        for name, f, args, ref in cases():
            got, want = f(*args), ref()
            if name.startswith("eigh_"):  # (w, v): v's columns up to sign
                np.testing.assert_allclose(got[0], want[0], rtol=1e-8)
                np.testing.assert_allclose(np.abs(got[1]), np.abs(want[1]), atol=1e-7)
            else:
                np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
            calls = max(1, int(2e-1 / max(best_of(ref, 1, 1), 1e-6)))
            speedups = []
            for _ in range(rounds):
                kiln_s = best_of(lambda: f(*args), calls)
                scipy_s = best_of(ref, calls)
                speedups.append(scipy_s / kiln_s)
                print("BENCH %s kiln=%.4f ref=%.4f unit=ms ref_name=scipy speedup=%.2f"
                      % (name, kiln_s * 1e3, scipy_s * 1e3, speedups[-1]), flush=True)
            print("# %s speedup over %d rounds: %.2f to %.2f"
                  % (name, rounds, min(speedups), max(speedups)))


if __name__ == "__main__":
    main()
