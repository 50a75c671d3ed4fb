#!/usr/bin/python3
"""Runs Kiln's compiled G3 and G4 (function_benchmark) and the same graphs in NumPy, with
hand-derived gradients, in the same run, and prints BENCH lines (DESIGN.md section 5).

Usage: graphs_vs_numpy.py <path to function_benchmark>
"""
import subprocess
import sys
import time

import numpy as np


def best_ms(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def g3():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20000, 100))
    y = np.where(np.arange(20000) % 3 == 0, 1.0, -1.0)
    w = rng.normal(scale=0.1, size=100)
    b = 0.1

    def step():
        z = -y * (X @ w + b)
        cost = np.mean(np.logaddexp(0.0, z))
        dz = 1.0 / (1.0 + np.exp(-z)) / len(y)  # d mean(softplus(z)) / dz
        dlin = -y * dz
        return cost, X.T @ dlin, dlin.sum()
    return best_ms(step, 50)


def g4():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4096, 512))
    W1 = rng.normal(scale=0.04, size=(512, 1024))
    W2 = rng.normal(scale=0.03, size=(1024, 10))
    t = np.arange(4096) % 10

    def step():
        h = np.tanh(X @ W1)
        logits = h @ W2
        logits = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        p = e / e.sum(axis=1, keepdims=True)
        cost = -np.mean(np.log(p[np.arange(len(t)), t]))
        d = p.copy()
        d[np.arange(len(t)), t] -= 1.0
        d /= len(t)
        gW2 = h.T @ d
        dh = (d @ W2.T) * (1.0 - h * h)
        gW1 = X.T @ dh
        return cost, gW1, gW2

    # The four matrix products alone, on the same operands: no compiler can beat NumPy by more
    # than step / products while it runs them at OpenBLAS's rate.
    h = np.tanh(X @ W1)
    d = rng.normal(size=(4096, 10))
    dh = rng.normal(size=(4096, 1024))
    products = best_ms(lambda: (X @ W1, h @ W2, d @ W2.T, X.T @ dh), 10)
    return best_ms(step, 10), products


def main():
    out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout
    kiln = {line.split()[1]: float(line.split()[2]) for line in out.splitlines()
            if line.startswith("KILN ")}
    g4_ms, g4_products_ms = g4()
    for name, ref in (("g3", g3()), ("g4_numpy", g4_ms)):
        k = kiln[name.removesuffix("_numpy")]
        print(f"BENCH {name} kiln={k:.3f} ref={ref:.3f} unit=ms ref_name=numpy speedup={ref / k:.3f}")
    print(f"# g4: NumPy's four matrix products alone take {g4_products_ms:.1f} of its "
          f"{g4_ms:.1f} ms: at OpenBLAS's rate no speedup above {g4_ms / g4_products_ms:.2f}")
    # G4 against the time its five products take through the same OpenBLAS, timed in turn with
    # G4's calls in function_benchmark: the rest of the graph costs kiln / ref - 1.
    floor = kiln["gemm_floor_g4"]
    print(f"BENCH g4 kiln={kiln['g4']:.3f} ref={floor:.3f} unit=ms ref_name=gemm-floor "
          f"speedup={floor / kiln['g4']:.3f}")
    print(f"BENCH compile_g4 kiln={kiln['compile_g4']:.3f} unit=ms")
    peak, live = kiln["peak_memory_g4"], kiln["live_set_g4"]
    print(f"BENCH peak_memory_g4 kiln={peak:.1f} ref={live:.1f} unit=MB ref_name=live-set "
          f"speedup={live / peak:.3f}")


if __name__ == "__main__":
    main()
