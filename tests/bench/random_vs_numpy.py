#!/usr/bin/python3
"""Runs random_benchmark and NumPy's Generator.normal on the same 10^7 draws, alternately, three
rounds, and prints a BENCH line (DESIGN.md section 5) per round.

Usage: random_vs_numpy.py <path to random_benchmark>
"""
import subprocess
import sys
import time

import numpy as np


def numpy_normal_ms():
    """10^7 standard normals from NumPy's default Generator (PCG64, ziggurat), best of 5."""
    rng = np.random.default_rng(1)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        rng.normal(size=10_000_000)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    for _ in range(3):
        out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout
        kiln = dict((line.split()[0], float(line.split()[1])) for line in out.splitlines())
        ref = numpy_normal_ms()
        k = kiln["random_normal_1e7"]
        print("BENCH random_normal_1e7 kiln=%.1f ref=%.1f unit=ms ref_name=numpy speedup=%.2f"
              % (k, ref, ref / k))


if __name__ == "__main__":
    main()
