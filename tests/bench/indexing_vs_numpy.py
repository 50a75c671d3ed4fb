#!/usr/bin/python3
"""Runs Kiln's indexing benchmark (core/ops/indexing_benchmark.cc) and NumPy on the same data in
the same run, in rounds (Kiln, then NumPy), and prints one BENCH line per case with NumPy as the
reference (DESIGN.md section 5): take for AdvancedSubtensor1, add.at for AdvancedIncSubtensor1's
increment (and bincount with weights, NumPy's fastest 1-D increment), fancy assignment for its
set. Each line takes the best of every round; speedup_range gives the per-round ratios.

The no_inplace cases copy x before writing, as Kiln's op does, so NumPy's side copies too; the
inplace case writes x in place on both sides.

Usage: indexing_vs_numpy.py <path to indexing_benchmark> [rounds]
"""
import json
import subprocess
import sys
import tempfile
import time

import numpy as np


def indices(count, n, sort=False):
    """The benchmark's indices: (i * 7919 + 13) % n, sorted for the radon-like runs."""
    i = (np.arange(count, dtype=np.int64) * 7919 + 13) % n
    return np.sort(i) if sort else i


def values(shape, dtype=np.float64):
    """The benchmark's values: (i % 1000) / 1000 in C order."""
    size = int(np.prod(shape))
    return ((np.arange(size) % 1000) / 1000.0).reshape(shape).astype(dtype)


def add_at(x, idx, y):
    out = x.copy()
    np.add.at(out, idx, y)
    return out


def add_at_inplace(x, idx, y):
    np.add.at(x, idx, y)
    return x


def bincount(x, idx, y):
    return x + np.bincount(idx, weights=y, minlength=x.shape[0])


def assign(x, idx, y):
    out = x.copy()
    out[idx] = y
    return out


def cases():
    """name -> (NumPy's function, its arguments, alternative references {ref_name: function})."""
    radon_x, radon_y = values((85,)), values((919,))
    big_x, big_y = values((100000,)), values((1000000,))
    rows_x, rows_y = values((10000, 64)), values((10000, 64))
    radon_i, radon_sorted = indices(919, 85), indices(919, 85, True)
    big_i = indices(1000000, 100000)
    rows_i = indices(10000, 10000)
    mat, pair_i = values((1000, 1000)), indices(100000, 1000)
    pair_j = (np.arange(100000, dtype=np.int64) * 104729 + 7) % 1000
    take = lambda x, i: np.take(x, i, axis=0)  # noqa: E731
    return {
        "take_radon": (take, (radon_x, radon_i), {}),
        "take_1e6": (take, (big_x, big_i), {}),
        "take_1e6_f32": (take, (big_x.astype(np.float32), big_i), {}),
        "take_rows": (take, (rows_x, rows_i), {}),
        "inc_radon": (add_at, (radon_x, radon_i, radon_y), {"numpy-bincount": bincount}),
        "inc_radon_sorted": (add_at, (radon_x, radon_sorted, radon_y),
                             {"numpy-bincount": bincount}),
        "inc_1e6": (add_at, (big_x, big_i, big_y), {"numpy-bincount": bincount}),
        "inc_1e6_inplace": (add_at_inplace, (big_x.copy(), big_i, big_y), {}),
        "inc_rows": (add_at, (rows_x, rows_i, rows_y), {}),
        "set_radon": (assign, (radon_x, radon_i, radon_y), {}),
        "set_1e6": (assign, (big_x, big_i, big_y), {}),
        "adv_take_1e6": (lambda x, i: x[i], (big_x, big_i), {}),
        "adv_pairs_1e5": (lambda x, i, j: x[i, j], (mat, pair_i, pair_j), {}),
        "adv_inc_pairs_1e5": (lambda x, i, j, y: add_at(x, (i, j), y),
                              (mat, pair_i, pair_j, values((100000,))), {}),
    }


def numpy_us(fn, args, budget=0.2):
    """Best time per call (us) of batches sized to take about 10 ms, within `budget` seconds."""
    t0 = time.perf_counter()
    fn(*args)
    once = max(time.perf_counter() - t0, 1e-7)
    batch = max(1, int(0.01 / once))
    best, spent = float("inf"), 0.0
    while spent < budget or best == float("inf"):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn(*args)
        dt = time.perf_counter() - t0
        spent += dt
        best = min(best, dt / batch)
    return best * 1e6


UNIT_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def kiln_us(binary):
    """Kiln's time per iteration (us) of every benchmark, by the last part of its name."""
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        subprocess.run([binary, f"--benchmark_out={report.name}", "--benchmark_out_format=json",
                        "--benchmark_min_time=0.2"], check=True, capture_output=True)
        results = json.load(open(report.name))["benchmarks"]
    return {b["name"].split("/")[-1]: b["real_time"] * UNIT_TO_US[b["time_unit"]]
            for b in results}


def main():
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    all_cases = cases()
    best_kiln, best_ref, ratios = {}, {}, {}
    for _ in range(rounds):
        kiln = kiln_us(binary)
        for name, (fn, args, alternatives) in all_cases.items():
            if name not in kiln:  # an older binary without the case
                continue
            refs = {"numpy": fn, **alternatives}
            for ref_name, ref_fn in refs.items():
                key = (name, ref_name)
                ref = numpy_us(ref_fn, args)
                best_kiln[key] = min(best_kiln.get(key, float("inf")), kiln[name])
                best_ref[key] = min(best_ref.get(key, float("inf")), ref)
                ratios.setdefault(key, []).append(ref / kiln[name])
    for (name, ref_name), k in best_kiln.items():
        r = ratios[(name, ref_name)]
        ref = best_ref[(name, ref_name)]
        suffix = "" if ref_name == "numpy" else "_vs_bincount"
        print(f"BENCH indexing_{name}{suffix} kiln={k:.3f} ref={ref:.3f} unit=us "
              f"ref_name={ref_name} speedup={ref / k:.3f} rounds={len(r)} "
              f"speedup_range={min(r):.2f}-{max(r):.2f}")


if __name__ == "__main__":
    main()
