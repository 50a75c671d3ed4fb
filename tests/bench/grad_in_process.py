#!/usr/bin/python3
"""kiln.grad in this process (core's reverse mode through kiln._core) against the server's Grad
RPC as kiln.grad called it before (the graph sent, the gradient graph rebuilt in Python:
tests/python/grad_rpc.py), on the Aesara tutorial's logistic regression (x matrix, y vector,
w shared vector, b shared scalar; gw, gb = grad(cost, [w, b])), interleaved, several rounds.
Prints a BENCH line (DESIGN.md section 5) per round, then the range over the rounds:
  py_grad_logreg: us per grad call, ref=the Grad RPC (ref_name=grad-rpc);
  py_grad_logreg_vs_<pytensor|aesara>: the same against that library's grad, when importable.

Usage: grad_in_process.py [rounds]  (KILN_SERVER_BIN names the server binary)."""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
from conftest import running_server  # noqa: E402
import kiln  # noqa: E402
import kiln.tensor as kt  # noqa: E402
from grad_rpc import grad_on_server, logistic_regression  # noqa: E402

try:
    import pytensor as ref_lib
    import pytensor.tensor as ref_t
except ImportError:
    try:
        import aesara as ref_lib
        import aesara.tensor as ref_t
    except ImportError:
        ref_lib = ref_t = None


def mean_us(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def reference_cost(rng):
    """The same graph in PyTensor or Aesara: (cost, w, b)."""
    x = ref_t.dmatrix("x")
    y = ref_t.dvector("y")
    w = ref_lib.shared(rng.normal(size=784), name="w")
    b = ref_lib.shared(0.0, name="b")
    p_1 = 1 / (1 + ref_t.exp(-ref_t.dot(x, w) - b))
    xent = -y * ref_t.log(p_1) - (1 - y) * ref_t.log(1 - p_1)
    return xent.mean() + 0.01 * (w ** 2).sum(), w, b


def line(case, kiln_us, ref_us, ref_name):
    print("BENCH %s kiln=%.1f ref=%.1f unit=us ref_name=%s speedup=%.1f"
          % (case, kiln_us, ref_us, ref_name, ref_us / kiln_us), flush=True)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rng = np.random.default_rng(0)
    _, _, w, b, cost = logistic_regression(kt, kiln, rng)
    ref = reference_cost(rng) if ref_lib is not None else None
    results = {"py_grad_logreg": []}
    with running_server() as address:
        kiln.config.server = address
        grad_on_server(cost, [w, b])  # connect, warm up
        kiln.grad(cost, [w, b])
        for _ in range(rounds):
            local = mean_us(lambda: kiln.grad(cost, [w, b]), 300)
            rpc = mean_us(lambda: grad_on_server(cost, [w, b]), 100)
            results["py_grad_logreg"].append((local, rpc))
            line("py_grad_logreg", local, rpc, "grad-rpc")
            if ref is not None:
                r_cost, r_w, r_b = ref
                theirs = mean_us(lambda: ref_lib.grad(r_cost, [r_w, r_b]), 30)
                name = ref_lib.__name__
                results.setdefault("py_grad_logreg_vs_" + name, []).append((local, theirs))
                line("py_grad_logreg_vs_" + name, local, theirs, name)
    for case, pairs in results.items():
        ks, rs = [p[0] for p in pairs], [p[1] for p in pairs]
        print("# %s over %d rounds: kiln %.1f-%.1f us, ref %.1f-%.1f us, speedup %.1f-%.1f"
              % (case, len(pairs), min(ks), max(ks), min(rs), max(rs),
                 min(r / k for k, r in pairs), max(r / k for k, r in pairs)))


if __name__ == "__main__":
    main()
