#!/usr/bin/python3
"""Issue 37's batched and model-sized linear algebra against NumPy and SciPy, in the same run:

  batch_cholesky_10000x8: cholesky of a (10000, 8, 8) batch of SPD matrices (Kiln's Blockwise)
    against NumPy's batched np.linalg.cholesky (ref_name=numpy);
  batch_solve_10000x8: solve of (10000, 8, 8) by (10000, 8, 1) against np.linalg.solve;
  gp_logp_dlogp_500: the Gaussian process of tests/bench/model_graphs.py (n = 500), logp and its
    gradient (Kiln's grad through Cholesky and the triangular solve) against the same written by
    hand with SciPy: cholesky, cho_solve, and the trace form 0.5 tr((a a^T - K^-1) dK) of each
    derivative (ref_name=scipy).

Kiln's functions run in this process (Mode(execute="local"): kernels plus the call's overhead).
Each round times batches of Kiln's calls and of the reference's, interleaved, keeping each side's
best batch; speedup = ref / kiln (above 1, Kiln is faster). Values are checked before timing.

Usage: linalg_vs_numpy.py [rounds]  (KILN_SERVER_BIN, KILN_PB_DIR as for the Python tests).
Run on an idle machine.
"""
import os
import sys
import time

import numpy as np
import scipy.linalg

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from conftest import running_server  # noqa: E402
import kiln  # noqa: E402
import kiln.tensor as kt  # noqa: E402
from kiln.tensor import slinalg, nlinalg  # noqa: E402
import model_graphs  # noqa: E402  (this file's directory is on sys.path)


def mean_seconds(fn, calls):
    """The mean time of `calls` calls of fn."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def best_interleaved(measured, reference, calls, repeats=5):
    """The best batch mean of each side, batches alternating so both see the same machine."""
    best_m = best_r = float("inf")
    for _ in range(repeats):
        best_m = min(best_m, mean_seconds(measured, calls))
        best_r = min(best_r, mean_seconds(reference, calls))
    return best_m, best_r


def batch_cases():
    """(name, kiln function, its arguments, the NumPy call) of the batched cases."""
    local = kiln.Mode(execute="local")
    rng = np.random.default_rng(0)
    m = rng.standard_normal((10000, 8, 8))
    spd = m @ np.swapaxes(m, -1, -2) + 8 * np.eye(8)
    rhs = rng.standard_normal((10000, 8, 1))
    a, b = kt.dtensor3("a"), kt.dtensor3("b")
    chol = kiln.function([a], slinalg.cholesky(a), mode=local)
    solve = kiln.function([a, b], nlinalg.solve(a, b) if hasattr(nlinalg, "solve")
                          else slinalg.solve(a, b), mode=local)
    yield ("batch_cholesky_10000x8", "numpy", chol, (spd,), lambda: np.linalg.cholesky(spd))
    yield ("batch_solve_10000x8", "numpy", solve, (m, rhs), lambda: np.linalg.solve(m, rhs))


def gp_by_hand(theta, x, y):
    """The GP model's [logp, dlogp] written by hand with SciPy (what a user would write)."""
    n = len(x)
    ls, amp, noise = np.exp(theta)
    sq_dist = (x[:, None] - x[None, :]) ** 2
    shape = np.exp(-0.5 * sq_dist / ls ** 2)
    K = amp ** 2 * shape + (noise ** 2 + 1e-6) * np.eye(n)
    factor = scipy.linalg.cho_factor(K, lower=True)
    alpha = scipy.linalg.cho_solve(factor, y)
    logp = (-0.5 * y @ alpha - np.sum(np.log(np.diag(factor[0])))
            - n * model_graphs.LOG_SQRT_2PI - 1.5 * np.log(2 * np.pi) - 0.5 * theta @ theta)
    inner = np.outer(alpha, alpha) - scipy.linalg.cho_solve(factor, np.eye(n))
    d_ls = amp ** 2 * shape * sq_dist / ls ** 2
    d_amp = 2.0 * amp ** 2 * shape
    grad = np.array([0.5 * np.sum(inner * d_ls), 0.5 * np.sum(inner * d_amp),
                     noise ** 2 * np.trace(inner)]) - theta
    return logp, grad


def gp_case():
    """The GP model's case: Kiln's compiled [logp, dlogp] against gp_by_hand."""
    model = model_graphs.build("gp", kiln, kt)
    f = kiln.function(model.inputs, model.outputs, mode=kiln.Mode(execute="local"))
    x, y = model_graphs.gp_data()
    theta = model.point[0]
    return ("gp_logp_dlogp_500", "scipy", lambda *a: f(*a), (theta,),
            lambda: gp_by_hand(theta, x, y))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with running_server() as address:
        kiln.config.server = address
        for name, ref_name, f, args, ref in list(batch_cases()) + [gp_case()]:
            got, want = f(*args), ref()
            for g, w in zip(got if isinstance(got, (list, tuple)) else [got],
                            want if isinstance(want, tuple) else [want]):
                np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9)
            calls = max(1, int(0.2 / max(mean_seconds(ref, 1), 1e-6)))
            speedups = []
            for _ in range(rounds):
                kiln_s, ref_s = best_interleaved(lambda: f(*args), ref, calls)
                speedups.append(ref_s / kiln_s)
                print("BENCH %s kiln=%.4f ref=%.4f unit=ms ref_name=%s speedup=%.2f"
                      % (name, kiln_s * 1e3, ref_s * 1e3, ref_name, speedups[-1]), flush=True)
            print("# %s speedup over %d rounds: %.2f to %.2f"
                  % (name, rounds, min(speedups), max(speedups)))


if __name__ == "__main__":
    main()
