#!/usr/bin/python3
"""structured_dot against SciPy: a CSR matrix times a dense matrix, through a Kiln function run in
this process (SparseDot{compressed=True} on SciPy's own arrays, as kiln.sparse.structured_dot
builds it) and through SciPy's csr_matrix @ ndarray, in the same run. Each round times a batch of Kiln calls then a batch of SciPy calls, so
that both see the same machine; a BENCH line per case and round gives the best of each side and
their ratio (Kiln's time over SciPy's: below 1 is faster), then a line gives the range over rounds.

Usage: sparse_vs_scipy.py [rounds]  (KILN_SERVER_BIN, KILN_PB_DIR as for the Python tests)
"""
import os
import sys
import time

import numpy as np
import scipy.sparse as sps

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from conftest import running_server  # noqa: E402
import kiln  # noqa: E402
import kiln.tensor as at  # noqa: E402
from kiln import ops  # noqa: E402

# (name, rows, inner, dense columns, density)
CASES = [("spmm_10k_d1e-3_k64", 10_000, 10_000, 64, 1e-3),
         ("spmm_4k_d1e-2_k128", 4_000, 4_000, 128, 1e-2),
         ("spmv_100k_d1e-4_k1", 100_000, 100_000, 1, 1e-4)]


def best_of(fn, calls, repeats=5):
    """The best mean time of `calls` calls, over `repeats` batches."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def structured_dot_function():
    """A local function of (data, indices, indptr, b) -> the CSR matrix times b."""
    data, indices, indptr = at.dvector("data"), at.lvector("indices"), at.lvector("indptr")
    n_rows, b = at.lscalar("n_rows"), at.dmatrix("b")
    out = ops.SparseDot(compressed=True)(data, indptr, indices, n_rows, b)
    return kiln.function([data, indices, indptr, n_rows, b], out,
                         mode=kiln.Mode(execute="local"))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rng = np.random.default_rng(0)
    with running_server() as address:
        kiln.config.server = address
        f = structured_dot_function()
        for name, m, k, n, density in CASES:
            a = sps.random(m, k, density=density, format="csr", random_state=rng)
            a.sort_indices()
            b = rng.standard_normal((k, n))
            args = (a.data, a.indices.astype(np.int64), a.indptr.astype(np.int64),
                    np.array(m, dtype=np.int64), b)
            np.testing.assert_allclose(f(*args), a @ b, rtol=1e-12, atol=1e-12)
            calls = max(1, int(2e7 / (a.nnz * n + m * n)))
            ratios = []
            for _ in range(rounds):
                kiln_s = best_of(lambda: f(*args), calls)
                scipy_s = best_of(lambda: a @ b, calls)
                ratios.append(kiln_s / scipy_s)
                print("BENCH %s nnz=%d kiln=%.3f ref=%.3f unit=ms ref_name=scipy ratio=%.2f"
                      % (name, a.nnz, kiln_s * 1e3, scipy_s * 1e3, ratios[-1]), flush=True)
            print("# %s ratio over %d rounds: %.2f to %.2f" % (name, rounds, min(ratios),
                                                               max(ratios)))


if __name__ == "__main__":
    main()
