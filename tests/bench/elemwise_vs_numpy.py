#!/usr/bin/python3
"""Runs Kiln's elemwise benchmark and NumPy on the same ops and data (10^7 elements) in the same
run, and prints one BENCH line per op and per compiled graph (G1, G2, in float64 and float32) with
NumPy as the reference (DESIGN.md section 5). The graphs are timed in rounds, Kiln then NumPy, so
that both see the same machine; each BENCH line takes the best of every round, and a comment
line gives the range of the per-round ratios.

Usage: elemwise_vs_numpy.py <path to elemwise_benchmark> [rounds]
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
# The compiled graphs: NumPy's expression, and the range of the input.
GRAPHS = {
    "g1": (lambda v: v + v ** 10, 0.0, 1.0),
    "g2": (lambda t: np.exp(-t ** 2) * np.sin(t) + np.log1p(np.abs(t)) * t.dtype.type(0.5)
           - np.tanh(t), -2.0, 2.0),
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


def kiln_ms(binary, pattern):
    """Kiln's time per iteration (ms) of each benchmark matching pattern, by its last name part."""
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        subprocess.run([binary, f"--benchmark_filter={pattern}", f"--benchmark_out={report.name}",
                        "--benchmark_out_format=json"], check=True, capture_output=True)
        results = json.load(open(report.name))["benchmarks"]
    return {b["name"].split("/")[-1]: b["real_time"] for b in results}


def bench(name, k, ref, note=""):
    print(f"BENCH {name} kiln={k:.3f} ref={ref:.3f} unit=ms ref_name=numpy "
          f"speedup={ref / k:.3f}{note}")


def main():
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    kiln = kiln_ms(binary, "BM_Elemwise")
    x = uniform(0.1, 0.9)
    for name, (fn, arity) in OPS.items():  # the ops NumPy and SciPy have
        bench(f"elemwise_{name}", kiln[name], numpy_ms(fn, [x] * arity))
    cases = [(g + suffix, fn, uniform(lo, hi).astype(dtype))
             for g, (fn, lo, hi) in GRAPHS.items()
             for suffix, dtype in (("", np.float64), ("_f32", np.float32))]
    best_kiln, best_ref, ratios = {}, {}, {}
    for _ in range(rounds):
        kiln = kiln_ms(binary, "BM_Graph/|BM_G2InCache")
        for name, fn, data in cases:
            ref = numpy_ms(fn, [data])
            best_kiln[name] = min(best_kiln.get(name, float("inf")), kiln[name])
            best_ref[name] = min(best_ref.get(name, float("inf")), ref)
            ratios.setdefault(name, []).append(ref / kiln[name])
            if name == "g2":  # G2 in cache: what the fused loop costs without memory traffic
                best_kiln["g2_in_cache"] = min(best_kiln.get("g2_in_cache", float("inf")),
                                               kiln["BM_G2InCache"])
    for name, _, _ in cases:
        r = ratios[name]
        bench(name, best_kiln[name], best_ref[name],
              f" rounds={len(r)} speedup_range={min(r):.2f}-{max(r):.2f}")
    bench("g2_in_cache", best_kiln["g2_in_cache"], best_ref["g2"], " (G2's compute floor)")
    for g in GRAPHS:  # float32 against Kiln's own float64, from the same rounds
        f32, f64 = best_kiln[g + "_f32"], best_kiln[g]
        print(f"BENCH {g}_f32_vs_f64 kiln={f32:.3f} ref={f64:.3f} unit=ms ref_name=kiln-float64 "
              f"speedup={f64 / f32:.3f}")


if __name__ == "__main__":
    main()
