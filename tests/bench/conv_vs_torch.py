#!/usr/bin/python3
"""conv2d against PyTorch 1.13 eager on the CPU and against the GEMM floor, in the same run.

Kiln: a function run in this process (kiln.Mode(execute="local")) of AbstractConv2d with
filter_flip=False (a correlation, as torch's conv2d), forward ("fwd") or forward plus the
gradients wrt the input and the filters for a given output gradient ("fwdbwd").
PyTorch: torch.nn.functional.conv2d, and y.backward(gy) for fwdbwd, on as many threads as Kiln
and on one thread, the faster of the two (on a shared machine its OpenMP threads' active
waits can make two threads 50x slower than one: LeNet's second layer's fwdbwd at batch 64 took
76 ms on two threads, 1.4 ms on one, under a load of 5 on 2 cores).
GEMM floor: only the matrix products a convolution by im2col needs (one for fwd, three for fwdbwd),
through NumPy's OpenBLAS on the same cores: no convolution can lower to GEMM and be faster.

Each round times a batch of Kiln calls, then of PyTorch calls, then of the floor's, so that all
see the same machine; a BENCH line per case, mode and round gives the best of each side, then a
line gives each ratio's range over the rounds (Kiln's time over the reference's: below 1 is
faster).

Usage: conv_vs_torch.py [rounds] [case-substring] [dtype]  (dtype: float32, float64 or both, the
default; KILN_SERVER_BIN, KILN_PB_DIR as for the Python tests; needs Debian's python3-torch)
"""
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from conftest import running_server  # noqa: E402
import kiln  # noqa: E402
import kiln.tensor as at  # noqa: E402
from kiln.tensor.nnet import conv2d  # noqa: E402

# (name, input shape (batch, channels, rows, cols), filters shape, border_mode)
CASES = [("lenet1_b1", (1, 1, 28, 28), (6, 1, 5, 5), "valid"),
         ("lenet1_b64", (64, 1, 28, 28), (6, 1, 5, 5), "valid"),
         ("lenet2_b1", (1, 6, 12, 12), (16, 6, 5, 5), "valid"),
         ("lenet2_b64", (64, 6, 12, 12), (16, 6, 5, 5), "valid"),
         ("vgg_b1", (1, 64, 56, 56), (64, 64, 3, 3), "half"),
         ("vgg_b64", (64, 64, 56, 56), (64, 64, 3, 3), "half")]


def best_of(fn, min_seconds=0.05, budget=0.6, repeats=(3, 12)):
    """The best mean time of one call over batches of at least min_seconds each: as many
    batches as fit in `budget` seconds, within `repeats`. Short batches, many of them: on a
    machine shared with other work one of them is likely to find the cores free (3 batches of
    0.3 s spread a LeNet call's time over 1.0 to 1.6 times the floor's under a load of 5)."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-6)
    calls = max(1, int(min_seconds / one))
    batches = min(repeats[1], max(repeats[0], int(budget / (calls * one))))
    best = float("inf")
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def kiln_functions(dtype, border_mode):
    """Local functions (x, w) -> y and (x, w, gy) -> (y, gx, gw)."""
    x = at.tensor4("x", dtype=dtype)
    w = at.tensor4("w", dtype=dtype)
    gy = at.tensor4("gy", dtype=dtype)
    y = conv2d(x, w, border_mode=border_mode, filter_flip=False)
    gx, gw = kiln.grad(None, [x, w], known_grads={y: gy})
    local = kiln.Mode(execute="local")
    return (kiln.function([x, w], y, mode=local),
            kiln.function([x, w, gy], [y, gx, gw], mode=local))


def gemm_floor(x_shape, w_shape, y_shape, dtype, backward):
    """The products of an im2col convolution, on random matrices of their shapes."""
    rng = np.random.default_rng(1)
    k = w_shape[1] * w_shape[2] * w_shape[3]
    n = y_shape[0] * y_shape[2] * y_shape[3]
    w = rng.standard_normal((w_shape[0], k)).astype(dtype)
    cols = rng.standard_normal((k, n)).astype(dtype)
    gy = rng.standard_normal((w_shape[0], n)).astype(dtype)
    if not backward:
        return lambda: w @ cols
    return lambda: (w @ cols, gy @ cols.T, w.T @ gy)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    which = sys.argv[3] if len(sys.argv) > 3 else "both"
    if which not in ("float32", "float64", "both"):
        sys.exit("dtype must be float32, float64 or both, not %r" % which)
    dtypes = ("float32", "float64") if which == "both" else (which,)
    threads = os.cpu_count()
    torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    print("# %d threads, torch %s, numpy %s" % (threads, torch.__version__, np.__version__))
    with running_server() as address:
        kiln.config.server = address
        for dtype in dtypes:
            for name, x_shape, w_shape, border in CASES:
                if only not in name or (dtype == "float64" and name.startswith("vgg_b64")):
                    continue
                fwd, fwdbwd = kiln_functions(dtype, border)
                x = rng.standard_normal(x_shape).astype(dtype)
                w = rng.standard_normal(w_shape).astype(dtype)
                pad = (w_shape[2] // 2, w_shape[3] // 2) if border == "half" else 0
                tx = torch.from_numpy(x).requires_grad_()
                tw = torch.from_numpy(w).requires_grad_()
                ty = torch.nn.functional.conv2d(tx, tw, padding=pad)
                gy = rng.standard_normal(ty.shape).astype(dtype)
                ty.backward(torch.from_numpy(gy))
                y, gx, gw = fwdbwd(x, w, gy)
                tol = 1e-4 if dtype == "float32" else 1e-10
                scale = np.sqrt(np.prod(w_shape[1:]))
                np.testing.assert_allclose(y, ty.detach().numpy(), atol=tol * scale, rtol=tol)
                np.testing.assert_allclose(gx, tx.grad.numpy(), atol=tol * scale, rtol=tol)
                np.testing.assert_allclose(gw, tw.grad.numpy(), atol=tol * scale * 30, rtol=tol)

                def torch_fwd():
                    with torch.no_grad():
                        torch.nn.functional.conv2d(tx, tw, padding=pad)

                def torch_fwdbwd():
                    tx.grad = tw.grad = None
                    out = torch.nn.functional.conv2d(tx, tw, padding=pad)
                    out.backward(torch.from_numpy(gy))

                for mode, kiln_call, torch_call in (
                        ("fwd", lambda: fwd(x, w), torch_fwd),
                        ("fwdbwd", lambda: fwdbwd(x, w, gy), torch_fwdbwd)):
                    floor_call = gemm_floor(x_shape, w_shape, gy.shape, dtype, mode == "fwdbwd")
                    vs_torch, vs_floor = [], []
                    for _ in range(rounds):
                        kiln_s = best_of(kiln_call)
                        torch_s = best_of(torch_call)
                        torch.set_num_threads(1)
                        torch_s = min(torch_s, best_of(torch_call))
                        torch.set_num_threads(threads)
                        floor_s = best_of(floor_call)
                        vs_torch.append(kiln_s / torch_s)
                        vs_floor.append(kiln_s / floor_s)
                        case = "conv2d_%s_%s_%s" % (name, mode, dtype)
                        # In µs to four significant digits (LeNet's batch-1 calls take a few
                        # µs); speedup = ref / kiln as DESIGN.md's BENCH lines, ratio its inverse.
                        for ref_name, ref_s, ratio in (("pytorch", torch_s, vs_torch[-1]),
                                                       ("gemm-floor", floor_s, vs_floor[-1])):
                            print("BENCH %s kiln=%.4g ref=%.4g unit=us ref_name=%s speedup=%.2f "
                                  "ratio=%.2f" % (case, kiln_s * 1e6, ref_s * 1e6, ref_name,
                                                  1 / ratio, ratio), flush=True)
                    print("# %s: vs pytorch %.2f to %.2f, vs gemm-floor %.2f to %.2f"
                          % (case, min(vs_torch), max(vs_torch), min(vs_floor), max(vs_floor)),
                          flush=True)


if __name__ == "__main__":
    main()
