#!/usr/bin/python3
"""Runs Kiln's scan benchmarks (scan_benchmark) and the same loops in NumPy, alternately, three
rounds, and prints BENCH lines (DESIGN.md section 5) with each round's figures.

Usage: scan_vs_numpy.py <path to scan_benchmark>
"""
import subprocess
import sys
import time

import numpy as np


def numpy_rnn_ms():
    """The Elman RNN of scan_benchmark, forward and backward through time, best of 3."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1000, 32, 256))
    h0 = rng.normal(size=(32, 256))
    W = rng.normal(scale=0.05, size=(256, 256))
    U = rng.normal(scale=0.05, size=(256, 256))

    def step():
        hs = np.empty((1001, 32, 256))
        hs[0] = h0
        for t in range(1000):
            hs[t + 1] = np.tanh(X[t] @ U + hs[t] @ W)
        cost = (hs[1:] ** 2).sum()
        gW, gU, gh = np.zeros_like(W), np.zeros_like(U), np.zeros_like(h0)
        for t in range(999, -1, -1):
            gz = (2 * hs[t + 1] + gh) * (1 - hs[t + 1] ** 2)
            gW += hs[t].T @ gz
            gU += X[t].T @ gz
            gh = gz @ W.T
        return cost, gW, gU
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    rounds = []
    for _ in range(3):
        out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout
        kiln = dict((line.split()[0], float(line.split()[1])) for line in out.splitlines())
        rounds.append((kiln, numpy_rnn_ms()))
    for kiln, ref in rounds:
        k = kiln["scan_rnn_step"]
        print("BENCH scan_rnn_step kiln=%.1f ref=%.1f unit=ms ref_name=numpy speedup=%.2f"
              % (k, ref, ref / k))
    for kiln, _ in rounds:
        k = kiln["scan_overhead_per_step"]
        print("BENCH scan_overhead_per_step kiln=%.4f ref=1.0 unit=us ref_name=floor "
              "speedup=%.2f" % (k, 1.0 / k))


if __name__ == "__main__":
    main()
