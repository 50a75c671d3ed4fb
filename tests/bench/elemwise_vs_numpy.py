#!/usr/bin/python3
"""Runs Kiln's elemwise benchmark and NumPy on the same ops and data (10^7 float64) in the same run,
and prints one BENCH line per op with NumPy as the reference (DESIGN.md section 5).

Usage: elemwise_vs_numpy.py <path to elemwise_benchmark>
"""
import json
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.special as sp

N = 10_000_000
OPS = {
    "add": (np.add, 2), "mul": (np.multiply, 2), "true_divide": (np.true_divide, 2),
    "maximum": (np.maximum, 2), "lt": (np.less, 2), "neg": (np.negative, 1), "abs": (np.abs, 1),
    "sqr": (np.square, 1), "sqrt": (np.sqrt, 1), "exp": (np.exp, 1), "log": (np.log, 1),
    "log1p": (np.log1p, 1), "sin": (np.sin, 1), "cos": (np.cos, 1), "tanh": (np.tanh, 1),
    "sigmoid": (sp.expit, 1), "softplus": (lambda x: np.logaddexp(0.0, x), 1), "erf": (sp.erf, 1),
}


def uniform(lo, hi):
    """The benchmark's data: lo + (hi - lo) * ((i * 7919) % 10007) / 10007."""
    i = np.arange(N, dtype=np.int64)
    return lo + (hi - lo) * ((i * 7919) % 10007) / 10007.0


def numpy_ms(fn, args, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        subprocess.run([sys.argv[1], "--benchmark_filter=BM_Elemwise|BM_SeedReference|BM_G2",
                        f"--benchmark_out={report.name}", "--benchmark_out_format=json"],
                       check=True, capture_output=True)
        results = json.load(open(report.name))["benchmarks"]
    kiln = {b["name"].split("/")[-1]: b["real_time"] for b in results}
    x = uniform(0.1, 0.9)
    for name, (fn, arity) in OPS.items():  # the ops NumPy and SciPy have
        ref = numpy_ms(fn, [x] * arity)
        k = kiln[name]
        print(f"BENCH elemwise_{name} kiln={k:.3f} ref={ref:.3f} unit=ms ref_name=numpy "
              f"speedup={ref / k:.3f}")
    # The compiled graphs G1 (the seed a + a**10, on [0, 1)) and G2.
    a = uniform(0.0, 1.0)
    g1 = numpy_ms(lambda v: v + v ** 10, [a])
    print(f"BENCH g1 kiln={kiln['BM_SeedReference']:.3f} ref={g1:.3f} unit=ms ref_name=numpy "
          f"speedup={g1 / kiln['BM_SeedReference']:.3f}")
    v = uniform(-2.0, 2.0)
    g2 = numpy_ms(lambda t: np.exp(-t ** 2) * np.sin(t) + np.log1p(np.abs(t)) * 0.5 - np.tanh(t),
                  [v])
    print(f"BENCH g2 kiln={kiln['BM_G2']:.3f} ref={g2:.3f} unit=ms ref_name=numpy "
          f"speedup={g2 / kiln['BM_G2']:.3f}")


if __name__ == "__main__":
    main()
